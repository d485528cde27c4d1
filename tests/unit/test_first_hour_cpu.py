"""Issue 41, the first hour's second pass: what a newcomer on a CPU machine meets — CPU-sized
defaults, a heartbeat when piped, the contract pointing at report.md, init/devlog kept out of the
installed package and tracked docs, the user's own traceback, no profiler noise at the end of a
command's output, n/a for a stage without a model, each mode named once in an error."""

import os
import subprocess
import sys

import pytest
from conftest import ROOT

MODES = ("event", "annotation", "ncu", "nsys")


def _kprof(workspace, *args, env=None, cwd=None, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "kprof_mcp.cli", "--workspace", str(workspace), *args],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=timeout,
        env={**os.environ, "KPROF_FORCE_CPU": "1", **(env or {})},
    )


def _each_mode_once(text: str) -> None:
    assert "{event,annotation,ncu,nsys}" not in text, text  # argparse's usage line lists the choices too
    for m in MODES:
        assert text.count(f"'{m}'") == 1, (m, text)


# 8. A bad mode lists the modes once


@pytest.mark.parametrize("cmd", [["profile", "vector_add"], ["run"]])
def test_a_bad_mode_lists_the_modes_once_on_the_cli(workspace, cmd):
    cp = _kprof(workspace, *cmd, "--mode", "warp", *(["--", "python", "x.py"] if cmd == ["run"] else []))
    assert cp.returncode == 2 and "invalid choice: 'warp'" in cp.stderr, cp.stderr
    _each_mode_once(cp.stderr)


def test_a_bad_mode_lists_the_modes_once_from_the_engine(engine):
    """What the MCP tools and `kprof compare` say (the engine's words)."""
    from kprof_mcp.engine import KprofError

    with pytest.raises(KprofError) as e:
        engine.check_profile("vector_add", mode="warp")
    assert str(e.value).startswith("unknown mode 'warp'")
    _each_mode_once(str(e.value))


# 5. A failing script's traceback starts at the user's frame


def test_a_failing_scripts_traceback_starts_at_its_own_frame(workspace):
    (workspace / "helpers.py").write_text("def inner():\n    raise RuntimeError('deep down')\n")
    (workspace / "fails_deep.py").write_text(
        "from helpers import inner\n\n\ndef outer():\n    inner()\n\n\nouter()\n"
    )
    cp = _kprof(workspace, "run", "--", "python", "fails_deep.py")
    assert cp.returncode == 2 and "the command raised RuntimeError: deep down" in cp.stderr, cp.stderr
    tb = cp.stderr.split("Its traceback ends:\n", 1)[1]
    files = [ln.strip().split('"')[1] for ln in tb.splitlines() if ln.strip().startswith('File "')]
    assert files[0] == str(workspace / "fails_deep.py"), tb  # the user's first frame heads it
    assert "kprof_mcp" not in tb and "runpy" not in tb, tb
    assert files == [str(workspace / f) for f in ("fails_deep.py", "fails_deep.py", "helpers.py")], tb
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "__init__.py").write_text("")
    (workspace / "pkg" / "__main__.py").write_text("from helpers import inner\n\ninner()\n")
    cp = _kprof(workspace, "run", "--", "python", "-m", "pkg")  # run as its file, its package imported first
    tb = cp.stderr.split("Its traceback ends:\n", 1)[1]
    assert tb.startswith(f'  File "{workspace / "pkg" / "__main__.py"}", line 3, in <module>'), tb


# 6. A command's output as shown does not end with the profiler's USDT lines


def test_output_tail_leaves_out_the_profilers_usdt_lines():
    from kprof_mcp.engine.command import output_tail

    log = (
        "epoch 1 loss 0.5\nUSDT:2026-11-26 07:10:16 27821:27821 SyncActivityProfilerHandler.cpp:52] profiler_start\n"
        "epoch 2 loss 0.4\nUSDT:2026-11-26 07:10:16 27821:27821 SyncActivityProfilerHandler.cpp:59] profiler_stop\n"
    )
    assert output_tail(log) == "epoch 1 loss 0.5\nepoch 2 loss 0.4"


def test_kprof_run_shows_the_commands_output_and_keeps_the_whole_log(workspace):
    (workspace / "prints.py").write_text(
        "import torch, kprof\nx = torch.ones(64)\nfor i in range(3):\n    with kprof.range('forward'):\n"
        "        y = x * 2\n    print(f'step {i} done')\n"
    )
    cp = _kprof(workspace, "run", "--", "python", "prints.py")
    assert cp.returncode == 0, cp.stderr
    (line,) = [ln for ln in cp.stderr.splitlines() if ln.startswith("profile_dir: ")]
    d = line.removeprefix("profile_dir: ")
    report = open(os.path.join(d, "report.md")).read()
    shown = report.split("Its output ends:", 1)[1].split("```")[1]
    assert shown.strip().splitlines()[-1] == "step 2 done" and "USDT" not in report, shown
    log = open(os.path.join(d, "command.log")).read()
    assert "step 2 done" in log  # everything it printed, the profiler's lines included


# 3. On the CPU the contract points at report.md; 7. a stage without a model shows n/a, not 0


def _command_result(name: str):
    from conftest import FIXTURES

    from kprof_mcp.models import ProfileResult

    return ProfileResult.model_validate_json((FIXTURES / "h100_commands" / name / "result.json").read_text())


def _on_cpu(r):
    r = r.model_copy(deep=True)
    r.device.kind = "cpu"
    r.profile_dir = "/ws/out/profiles/event/vector_add/n=4096_dtype=float32/20261126T0-v1"
    return r


def test_the_contract_on_the_cpu_says_which_figures_report_md_has_and_where():
    from conftest import h100_result

    from kprof_mcp.render import render_contract

    line = (
        "**CPU figures**: /ws/out/profiles/event/vector_add/n=4096_dtype=float32/20261126T0-v1/report.md has "
    )
    text = render_contract(_on_cpu(h100_result("vector_add", "v1")))
    (said,) = [ln for ln in text.splitlines() if ln.startswith("**CPU figures**")]
    assert said.startswith(line) and "(Timing" in said and "(Roofline)" in said and "correctness" in said
    assert "**CPU figures**" not in render_contract(h100_result("vector_add", "v1"))  # on a GPU: none
    cmd = render_contract(_on_cpu(_command_result("annotation_train")))  # no model, no reference
    (said,) = [ln for ln in cmd.splitlines() if ln.startswith("**CPU figures**")]
    assert "(Timing" in said and "Roofline" not in said and "correctness" not in said


def _row(text: str, heading: str, stage: str) -> list[str]:
    section = text.split(heading, 1)[1]
    return [
        c.strip() for c in next(ln for ln in section.splitlines() if ln.startswith(f"| {stage} |")).split("|")
    ]


def test_a_command_stage_without_a_model_shows_flops_and_bytes_as_na():
    from kprof_mcp.engine import render_profile
    from kprof_mcp.render import render_contract
    from kprof_mcp.render.diagnosis import assess

    def render_report(r):
        return render_profile(r).report  # with the mode's sections (Nsight Compute's roofline)

    r = _command_result("annotation_train")
    s = r.stages[0]
    assert not s.has_model
    report = render_report(r)
    row = _row(report, "## Roofline (model FLOPs and bytes", s.name)
    assert row[2:4] == ["n/a", "n/a"] and row[6:8] == ["n/a", "n/a"], row  # FLOPs, bytes, TFLOP/s, GB/s
    row = _row(report, "## Roofline: measured traffic vs the FLOP/byte model", s.name)
    assert [row[i] for i in (2, 3, 7, 9)] == ["n/a"] * 4, row  # Nsight's: FLOPs, model MB, FLOP/B, TFLOP/s
    modelled = _command_result("annotation_train_models")
    m = next(x for x in modelled.stages if x.has_model)
    assert _row(render_report(modelled), "## Roofline (model FLOPs and bytes", m.name)[2] == f"{m.flops:.4g}"
    contract = render_contract(r, r, assessment=assess(r))  # vs itself: the baseline table
    rows = [ln for ln in contract.splitlines() if "TFLOP/s" in ln or "GB/s" in ln]
    assert rows and all(ln.split("|")[2:5] == [" n/a ", " n/a ", " n/a "] for ln in rows), rows


# 1. Without a GPU, CPU-sized defaults: every built-in kernel profiles at its defaults in seconds


def _timed(workspace, *args, env=None):
    import time

    t0 = time.monotonic()
    cp = _kprof(workspace, *args, env=env)
    return cp, time.monotonic() - t0


@pytest.mark.alone  # a wall-clock bound: no other test of the session runs meanwhile
def test_every_builtin_kernel_profiles_at_its_defaults_in_under_15_s_on_the_cpu(workspace):
    import json

    listed = json.loads(_kprof(workspace, "list", "--json").stdout)["kernels"]
    builtin = [k["name"] for k in listed if k["source"].startswith(str(ROOT / "kernels"))]
    assert len(builtin) >= 6, builtin
    slow = {}
    for name in builtin:
        cp, took = _timed(workspace, "profile", name, "--mode", "event", "--json")
        assert cp.returncode == 0, (name, cp.stderr)
        said = [ln for ln in cp.stderr.splitlines() if ln.startswith("no GPU: CPU-sized defaults ")]
        assert len(said) == 1 and said[0].endswith(" to change"), (name, cp.stderr)
        params = json.loads(cp.stdout)["result"]["params"]
        assert params["dtype"] == "float32", (name, params)
        if took >= 15:
            slow[name] = round(took, 1)
    assert not slow, f"over 15 s at the CPU-sized defaults: {slow}"


def test_what_the_user_gives_wins_over_the_cpu_sized_defaults(workspace):
    import json

    cp = _kprof(
        workspace, "profile", "matmul", "--mode", "event", "--M", "64", "--dtype", "float32", "--json"
    )
    assert cp.returncode == 0, cp.stderr
    (said,) = [ln for ln in cp.stderr.splitlines() if ln.startswith("no GPU: ")]
    assert said == "no GPU: CPU-sized defaults N=128, K=128; pass --N/--K to change", said
    p = json.loads(cp.stdout)["result"]["params"]
    assert (p["M"], p["N"], p["K"], p["dtype"]) == (64, 128, 128, "float32")
    cp = _kprof(workspace, "profile", "vector_add", "--mode", "event", "--n", "4096", "--quiet")
    assert cp.returncode == 0 and "CPU-sized" not in cp.stderr, cp.stderr  # nothing left to size
    assert "| 4096 | float32 |" in cp.stdout


def test_cpu_defaults_are_checked_and_used_only_without_a_gpu(engine):
    from kprof_mcp.cli.cpu_sized import cpu_sized
    from kprof_mcp.kernel import DTYPE_PARAM, Param

    with pytest.raises(ValueError, match="cpu_default"):
        Param("n", 1 << 24, min=1, max=1 << 20, cpu_default=1 << 21)
    with pytest.raises(ValueError, match="cpu_default"):
        DTYPE_PARAM("bfloat16", choices=("bfloat16",), cpu_default="float32")
    assert (
        Param("n", 8, cpu_default=2).describe()["cpu_default"] == 2
        and "cpu_default" not in Param("n", 8).describe()
    )
    engine.config.force_cpu = True
    assert cpu_sized(engine, "softmax", {"N"}) == {"M": 256, "dtype": "float32"}
    assert cpu_sized(engine, "no_such_kernel", set()) == {}  # the profile's own check says why
    engine.config.force_cpu, engine.config.remote_gpus = False, True  # a cluster's GPUs
    assert cpu_sized(engine, "softmax", set()) == {}


def test_kprof_noise_measures_at_the_cpu_sized_defaults(workspace):
    import json

    cp = _kprof(
        workspace, "noise", "--rounds", "2", "--case", "vector_add:v1", "--case", "softmax:v2:N=256", "--json"
    )
    assert cp.returncode == 0, cp.stderr
    (said,) = [ln for ln in cp.stderr.splitlines() if ln.startswith("no GPU: ")]
    assert said == (
        "no GPU: CPU-sized defaults vector_add n=65536; softmax M=256, dtype=float32; "
        "pass --case KERNEL:VERSION:NAME=VALUE,... to change"
    ), said
    series = json.loads(cp.stdout)["series"]
    assert [s["params"] for s in series] == [{"n": 65536}, {"M": 256, "dtype": "float32", "N": 256}], series


# 2. A heartbeat on stderr when it is not a terminal


def test_a_heartbeat_on_stderr_when_piped_and_none_when_quiet(workspace):
    import re

    (workspace / "slow.py").write_text("import time, kprof\nwith kprof.range('wait'):\n    time.sleep(2.5)\n")
    beat = re.compile(r"^kprof: \d+ s, (starting|running) python slow\.py")
    cp = _kprof(workspace, "run", "--", "python", "slow.py", env={"KPROF_HEARTBEAT_S": "0.5"})
    assert cp.returncode == 0, cp.stderr
    lines = [ln for ln in cp.stderr.splitlines() if beat.match(ln)]
    assert len(lines) >= 3 and lines[-1].startswith("kprof: ") and "running python slow.py" in cp.stderr, (
        cp.stderr
    )
    env = {"KPROF_HEARTBEAT_S": "0.5"}
    cp = _kprof(workspace, "profile", "vector_add", "--mode", "event", "--n", "4096", env=env)
    assert cp.returncode == 0 and re.search(r"^kprof: \d+ s, vector_add: ", cp.stderr, re.M), cp.stderr
    cp = _kprof(workspace, "profile", "vector_add", "--mode", "event", "--n", "4096", "--quiet", env=env)
    assert cp.returncode == 0 and "kprof: " not in cp.stderr, cp.stderr


# 4. kprof init / kprof devlog never write into the installed package or the checkout's tracked docs


def _kprof_in_checkout(*args):
    return subprocess.run(
        [sys.executable, "-m", "kprof_mcp.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,  # the checkout, as a newcomer who cloned it runs kprof
        timeout=300,
        env={**os.environ, "KPROF_FORCE_CPU": "1"},
    )


def test_init_never_writes_into_the_builtin_kernels_package(workspace):
    name = "issue41_never_made"
    for args in (["init", name], ["--workspace", str(ROOT), "init", name]):
        cp = _kprof_in_checkout(*args)
        assert cp.returncode == 2, cp.stderr
        assert "built-in kernels/ package" in cp.stderr and "kprof --workspace" in cp.stderr, cp.stderr
        assert not (ROOT / "kernels" / name).exists()
    cp = _kprof_in_checkout("--workspace", str(workspace), "init", name)  # the workspace the user named
    assert cp.returncode == 0 and (workspace / "kernels" / name / "__init__.py").is_file(), cp.stderr


def test_devlog_in_the_checkout_refuses_its_tracked_docs_unless_named(workspace):
    log = ROOT / "docs" / "kernels" / "vector_add.md"
    before = log.read_bytes()
    cp = _kprof_in_checkout("devlog", "vector_add", str(workspace / "no_profile"), "--insight", "x")
    assert cp.returncode == 2 and "kprof-mcp's own checkout" in cp.stderr, cp.stderr
    assert "--workspace" in cp.stderr and "nothing was written" in cp.stderr
    assert log.read_bytes() == before
    cp = _kprof_in_checkout(
        "--workspace", str(ROOT), "devlog", "vector_add", str(workspace / "no"), "--insight", "x"
    )
    assert cp.returncode == 2 and "own checkout" not in cp.stderr, (
        cp.stderr
    )  # named: only the profile is missing


def test_kprof_list_shows_the_cpu_sized_defaults_where_they_differ(workspace):
    cp = _kprof(workspace, "list")
    assert cp.returncode == 0, cp.stderr
    lines = cp.stdout.splitlines()

    def after(params: str) -> str:
        return lines[lines.index(f"  params: {params}") + 1]

    assert after("n=16777216, dtype=float32") == "  without a GPU: n=65536"
    assert after("M=32768, N=4096, dtype=bfloat16") == "  without a GPU: M=256, N=512, dtype=float32"
    assert after("n=4096, k=200, dtype=float32") == "  without a GPU: k=50"
    assert sum(ln.startswith("  without a GPU: ") for ln in lines) == 6  # every built-in has some

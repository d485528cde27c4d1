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

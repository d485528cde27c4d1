"""profile_command / kprof run, kprof.range and kprof init: real commands through the real
pipeline on the CPU (Kineto CPU trace, the Triton interpreter), and the recorded H100 results
of the training-step example (tests/fixtures/h100_commands, docs/evidence/h100-commands)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import unpacked

from kprof_mcp.engine import Config, Engine, KprofError, render_profile
from kprof_mcp.models import ProfileResult

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "h100_commands"
TINY = ["--steps", "3", "--tokens", "64", "--dim", "32", "--vocab", "128"]


@pytest.fixture
def ws(tmp_path):
    import shutil

    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    cfg = Config.from_options(str(tmp_path), force_cpu=True)
    cfg.warm = False
    return tmp_path, Engine(cfg)


def _fix(name: str) -> ProfileResult:
    return ProfileResult.model_validate_json((FIX / name / "result.json").read_text())


# ----------------------------------------------------------------------------- kprof.range


def test_kprof_range_imports_nothing_heavy_and_marks_regions():
    code = (
        "import sys; sys.modules['torch'] = None; import kprof\n"
        "with kprof.range('a'):\n    pass\n"
        "@kprof.range('b')\ndef f(x):\n    return x + 1\n"
        "assert f(1) == 2 and 'kprof_mcp' not in sys.modules\nprint('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    import kprof

    with pytest.raises(ValueError):
        kprof.range("")


def test_kprof_range_is_seen_by_torch_profiler():
    import torch
    from torch.profiler import profile

    import kprof

    with profile() as prof:
        with kprof.range("outer"):
            torch.ones(8).sum()
    assert "outer" in {e.name for e in prof.events()}


# ----------------------------------------------------------------------------- a training step on the CPU


@pytest.mark.parametrize("mode", ["event", "nsys"])
def test_a_training_step_is_profiled_by_its_ranges(ws, mode):
    root, engine = ws
    out = engine.profile_command(["python", "examples/train_step/train.py", *TINY], mode=mode)
    r = out.result
    # train_step holds the others: it is dropped so each kernel counts once, and the note says so.
    assert [s.name for s in r.stages] == ["linear", "softmax", "loss", "backward", "optimizer"]
    assert all(s.timing.runs == 2 for s in r.stages)  # 3 steps, the first left out as warm-up
    msgs = " ".join(w.message for w in r.warnings)
    assert "['train_step'] contain other selected ranges" in msgs and "left out as warm-up" in msgs
    assert r.command["exit_code"] == 0 and r.command["stages_from"] == "range"
    assert "loss after 3 steps" in r.command["output_tail"]
    report = (out.profile_dir / "report.md").read_text()
    assert "## Command" in report and "Not checked: a command has no reference" in report
    assert (out.profile_dir / "samples.csv").is_file() and (out.profile_dir / "params.json").is_file()
    if mode == "nsys":
        assert (out.profile_dir / "timeline" / "kernel_summary.csv").is_file()
    # The Triton softmax ran through the interpreter: slower than the torch matmul of the same step.
    by = {s.name: s.timing.median_ns for s in r.stages}
    assert by["softmax"] > by["linear"]


def test_include_selects_ranges_and_models_give_a_roofline(ws):
    root, engine = ws
    out = engine.profile_command(
        ["python", "examples/train_step/train.py", *TINY],
        mode="event",
        include=["soft*", "train_step"],
        warmup_occurrences=0,
        stage_models={"softmax": {"flops": 40960, "bytes": 65536, "dtype": "float32"}},
    )
    r = out.result
    assert [s.name for s in r.stages] == ["softmax"] and r.stages[0].timing.runs == 3
    assert r.stages[0].flops == 40960 and r.stages[0].has_model


def test_a_pytest_test_is_a_command_too(ws):
    root, engine = ws
    out = engine.profile_command(
        ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "examples/train_step/test_train_step.py"],
        mode="event",
    )
    assert {"linear", "softmax", "backward"} <= {s.name for s in out.result.stages}
    assert "1 passed" in out.result.command["output_tail"]


def test_commands_that_fail_or_record_nothing_are_clear_errors(ws):
    root, engine = ws
    (root / "fails.py").write_text("import sys\nprint('about to fail')\nsys.exit(3)\n")
    (root / "raises.py").write_text("raise RuntimeError('boom from the command')\n")
    (root / "idle.py").write_text("print('nothing to see')\n")
    for argv, needle in [
        (["python", "fails.py"], "exited with status 3"),
        (["python", "raises.py"], "RuntimeError: boom from the command"),
        (["python", "idle.py"], "entered no range"),
        (
            ["python", "-m", "pytest", "-q", "examples/train_step/test_train_step.py::nope"],
            "exited with status 4",
        ),
    ]:
        with pytest.raises(KprofError, match=needle.replace("(", r"\(").replace(")", r"\)")):
            engine.profile_command(argv, mode="event")


def test_bad_command_arguments_are_refused_before_anything_runs(ws):
    root, engine = ws
    (root / "ok.py").write_text("print(1)\n")
    for kw, needle in [
        (dict(command="python ok.py"), "list of strings"),
        (dict(command=["sh", "-c", "ls"]), "must start with python"),
        (dict(command=["python"]), "names no script"),
        (dict(command=["python", "-c", "print(1)"]), "not supported"),
        (dict(command=["python", "missing.py"]), "not found"),
        (dict(command=["python", "/etc/passwd"]), "outside the workspace"),
        (
            dict(command=["python", "-m", "no_such_module_xyz"]),
            "runs only a module under the working directory",
        ),
        (dict(command=["python", "ok.py"], cwd="/"), "outside the workspace"),
        (dict(command=["python", "ok.py"], include=[""]), "include"),
        (dict(command=["python", "ok.py"], stage_models={"a": {"flops": -1}}), "a number"),
        (dict(command=["python", "ok.py"], stage_models={"a": {"flop": 1}}), "stage_models"),
        (dict(command=["python", "ok.py"], stage_models={"a": {"int_ops": -5}}), "int_ops=-5: a number"),
        (dict(command=["python", "ok.py"], stage_models={"a": {"int_ops": "many"}}), "a number"),
        (dict(command=["python", "ok.py"], max_kernels=0), "max_kernels"),
        (dict(command=["python", "ok.py"], mode="annotation"), "without a GPU"),
    ]:
        with pytest.raises(KprofError, match=needle):
            engine.check_command(**kw)


def test_an_integer_stage_model_states_its_operations(ws):
    """A command stage's model may state the integer and logic operations its work needs (``int_ops``, as a
    kernel package's StageModel.int_ops): checked as FLOPs and bytes are, carried to the stage's result (the
    excess core-work what-if weighs the ALU's executed integer ops against it), absent where not given."""
    from kprof_mcp.analysis.command import stage_static
    from kprof_mcp.cli.helpers import _stage_models
    from kprof_mcp.models.result import StageResult

    root, engine = ws
    (root / "ok.py").write_text("print(1)\n")
    model = {"flops": 0, "bytes": 8e6, "dtype": "int32", "int_ops": 2.5e7}
    spec = engine.check_command(
        ["python", "ok.py"], mode="event", stage_models={"ranks": model, "plain": {"flops": 1e6}}
    )
    assert spec.req.stage_models["ranks"]["int_ops"] == 2.5e7
    dev = {"sm_count": 132}
    with_ops = stage_static("ranks", spec.req.stage_models["ranks"], dev, {"bytes_per_s": 3.35e12})
    without = stage_static("plain", spec.req.stage_models["plain"], dev, {"bytes_per_s": 3.35e12})
    assert with_ops["int_ops"] == 2.5e7 and without["int_ops"] is None
    assert StageResult.model_fields["int_ops"] and "int_ops" not in stage_static("x", None, dev, {})
    assert _stage_models(["ranks:flops=0,bytes=8e6,dtype=int32,int_ops=2.5e7"]) == {"ranks": model}
    with pytest.raises(KprofError, match="int_ops='x' is not a number"):
        _stage_models(["ranks:int_ops=x"])


def test_kprof_run_cli(ws):
    root, _ = ws
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "kprof_mcp.cli",
            "--workspace",
            str(root),
            "--cpu",
            "run",
            "--include",
            "softmax",
            "--model",
            "softmax:flops=1e5,bytes=6e4,dtype=float32",
            "--",
            "python",
            "examples/train_step/train.py",
            *TINY,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "| softmax |" in out.stdout and "profile_dir:" in out.stderr
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "kprof_mcp.cli",
            "--workspace",
            str(root),
            "run",
            "--model",
            "softmax:flops=x",
            "--",
            "python",
            "x.py",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "not a number" in bad.stderr


# ----------------------------------------------------------------------------- the recorded H100 runs


def test_h100_command_stages_match_the_package_profile_of_the_same_kernel():
    """The training step's softmax range ran the softmax package's v2 kernel at its default shape:
    profiled as a command (annotation mode, by NVTX range) it gets the package's diagnosis."""
    cmd, pkg = _fix("annotation_train_models"), _fix("annotation_pkg_softmax_v2")
    assert [s.name for s in cmd.stages] == ["linear", "softmax", "loss", "backward", "optimizer"]
    soft = next(s for s in cmd.stages if s.name == "softmax")
    ref = pkg.stages[0]
    assert soft.ncu_kernels == ["softmax_row_kernel"] == ref.ncu_kernels
    assert abs(soft.timing.median_ns / ref.timing.median_ns - 1) < 0.02
    assert abs(soft.dram_pct - ref.dram_pct) < 2.0
    a_cmd, a_pkg = render_profile(cmd).assessment, render_profile(pkg).assessment
    s_cmd = next(sa for sa in a_cmd.stages if sa.stage.name == "softmax")
    assert s_cmd.diagnosis.bottleneck == a_pkg.stages[0].diagnosis.bottleneck == "Memory-bound"
    assert s_cmd.diagnosis.opportunities[0].name == a_pkg.stages[0].diagnosis.opportunities[0].name
    assert a_cmd.main.stage.name == "linear" and a_cmd.bottleneck == "Compute-bound"
    # The same rule firing on each kernel of a stage is ranked once.
    names = [o.name for o in a_cmd.opportunities]
    assert len(names) == len(set((o.stage, o.name) for o in a_cmd.opportunities))


def test_h100_command_without_models_ranks_from_counters_and_says_so():
    r = _fix("annotation_train")
    assert not any(s.has_model for s in r.stages)
    out = render_profile(r)
    assert out.assessment.bottleneck == "Compute-bound"  # from TC% alone
    assert "Memory-bound" in [
        sa.diagnosis.bottleneck for sa in out.assessment.stages if sa.stage.name == "softmax"
    ]
    report_like = out.report
    assert "Stages without a FLOP/byte model" in report_like


def test_h100_nsys_command_timeline_covers_the_stages_not_the_start_up():
    r = _fix("nsys_train_models")
    busy = r.timeline["launch"]["gpu_busy_pct"]
    assert busy > 50 and not r.timeline["launch"]["launch_bound"]  # JIT and start-up cut away
    c = render_profile(r).contract
    assert "the dominant stage, backward, has no FLOP/byte model" in c
    assert "| softmax | 187." in c
    p = _fix("nsys_pytest")
    assert "nvidia" not in json.dumps(p.command.get("argv"))  # the argv as given
    assert [s.name for s in p.stages] == ["linear", "softmax", "loss", "backward", "optimizer"]


# ----------------------------------------------------------------------------- kprof init


def test_kprof_init_scaffolds_a_package_that_passes_its_own_test(tmp_path):
    from kprof_mcp.scaffold import scaffold

    pkg = scaffold(tmp_path, "my_axpy")
    assert (pkg / "__init__.py").is_file() and (pkg / "test_my_axpy.py").is_file()
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(pkg / "test_my_axpy.py")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert out.returncode == 0 and "1 passed" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]
    engine = Engine(Config.from_options(str(tmp_path), force_cpu=True))
    desc = engine.describe_kernel(str(pkg))
    assert desc["name"] == "my_axpy" and [v["name"] for v in desc["versions"]] == ["v0"]
    with pytest.raises(KprofError, match="already exists"):
        scaffold(tmp_path, "my_axpy")
    for bad in ("1abc", "class", "a-b", "../x"):
        with pytest.raises(KprofError):
            scaffold(tmp_path, bad)
    with pytest.raises(KprofError, match="outside the workspace"):
        scaffold(tmp_path, "ok_name", "../elsewhere")


def test_timeline_picture_draws_kernels_that_belong_to_no_stage(tmp_path, monkeypatch):
    """A command's kernels have no package stage (NaN): with pandas 3 ``astype(str)`` keeps NaN,
    and the picture used to drop them, leaving only the host launches."""
    import matplotlib.axes
    import pandas as pd

    from kprof_mcp.analysis import timeline as tl
    from kprof_mcp.parsers.kineto import KERNEL_COLUMNS, Trace
    from kprof_mcp.render.plots import plot_timeline

    kcols = KERNEL_COLUMNS
    k = pd.DataFrame([["k", 0.0, 1e3, 1e3, 7, 0, 1, 1, 128, 32, 0, 1, 4, 50.0]], columns=kcols)
    api = pd.DataFrame(
        [["cudaLaunchKernel", -500.0, 10.0, -490.0, 1, 1]],
        columns=["name", "start", "dur", "end", "correlation", "tid"],
    )
    empty = pd.DataFrame(columns=["name", "start", "dur", "end", "tid"])
    tr = Trace(
        kernels=k,
        memops=pd.DataFrame(
            columns=["name", "start", "dur", "end", "kind", "stream", "bytes", "correlation"]
        ),
        api=api,
        ranges=empty,
        cpu_ops=empty,
        num_sms=132,
        device_name="H100",
    )
    t = tl.analyze(tr, [], 132)
    drawn = []
    orig = matplotlib.axes.Axes.broken_barh
    monkeypatch.setattr(
        matplotlib.axes.Axes,
        "broken_barh",
        lambda self, xr, yr, **kw: (drawn.append(yr), orig(self, xr, yr, **kw))[1],
    )
    plot_timeline(tr, t, tmp_path / "t.png", "t")
    assert (0.6, 0.8) in drawn and len(drawn) == 2  # the kernel's lane and the launches' lane


def test_a_hanging_command_is_killed_at_its_time_limit(ws):
    import time

    root, engine = ws
    (root / "hangs.py").write_text("import time\nprint('started', flush=True)\ntime.sleep(600)\n")
    tag = f"kprof-hang-tag-{os.getpid()}"  # its pid as seen here (it may run in a PID namespace of its own)
    t0 = time.monotonic()
    with pytest.raises(KprofError, match="did not finish within 8 s") as e:
        engine.profile_command(["python", "hangs.py", tag], mode="event", timeout_s=8)
    assert "Its last output: " in str(e.value) and "started" in str(e.value)  # where it stood
    assert time.monotonic() - t0 < 60
    time.sleep(0.5)

    def tagged(d: str) -> bool:
        try:
            return tag.encode() in Path(f"/proc/{d}/cmdline").read_bytes() and (
                "zombie" not in Path(f"/proc/{d}/status").read_text().lower()
            )
        except OSError:
            return False

    assert not [d for d in os.listdir("/proc") if d.isdigit() and tagged(d)]


def test_stages_from_recorded_h100_traces_of_both_recorders():
    """The range logic on real recordings of one plan (tiny_chain v0: 200 kernels per chain): the
    Nsight Systems SQLite export and the Kineto trace give the same stage and the same time."""
    from kprof_mcp.analysis.command import kernel_stages, range_stages, stages_window
    from kprof_mcp.parsers import kineto, nsys

    fx = ROOT / "tests" / "fixtures"
    by_nsys = nsys.load_sqlite(unpacked(fx / "h100_nsys" / "tiny_chain_v0" / "timeline.sqlite"))
    by_kineto = kineto.load_trace(unpacked(fx / "h100_timeline" / "tiny_chain_v0" / "trace.json"))
    medians = []
    for tr in (by_nsys, by_kineto):
        stages, notes = range_stages(tr, ["kprof_*"], use_gpu=True, warmup=1)
        assert [s.name for s in stages] == ["kprof_chain"]  # kprof_iteration holds it: dropped, and said
        assert any("['kprof_iteration'] contain other selected ranges" in n for n in notes)
        st = stages[0]
        assert st.warmup == 1 and sum(st.kernels.values()) == 200 * st.occurrences
        medians.append(sorted(st.samples_ns)[len(st.samples_ns) // 2])
        window = stages_window(tr, stages)
        assert len(window.kernels) == sum(
            st.kernels.values()
        )  # the window holds exactly the kept occurrences
    assert abs(medians[0] / medians[1] - 1) < 0.01
    assert range_stages(by_nsys, [], use_gpu=True)[0] == []  # kprof's own ranges are not a user's stages
    names = [s.name for s in kernel_stages(by_nsys)]
    assert len(names) == len(set(names)) and not any(n.startswith("void ") for n in names)


def test_ncu_filters_for_a_commands_include_patterns():
    """What ncu 2025.3.1 was measured to accept on the H100 (docs/evidence/h100-commands): a plain
    name matches the range anywhere in the stack, regex: for patterns; '*/x/' is refused by ncu.
    Each pattern also as a start/end range (no slash), which another thread's launches are inside
    (docs/evidence/h100-accounting/backward)."""
    from kprof_mcp.tools import ncu

    assert ncu.nvtx_filters(["softmax", "attn*", "layer?"]) == [
        "softmax/",
        "softmax",
        "regex:attn.*/",
        "regex:attn.*",
        "regex:layer./",
        "regex:layer.",
    ]
    assert ncu.nvtx_filters(["a.b"]) == ["a.b/", "a.b"]
    assert ncu.nvtx_filters(["a.b*"]) == ["regex:a\\.b.*/", "regex:a\\.b.*"]
    for unsafe in (["a/b"], ["dom@r"], ["x[1]"], [" "]):
        assert ncu.nvtx_filters(unsafe) is None  # no filter: every launch, grouped when the report is read
    assert ncu.nvtx_filters([]) is None
    cmd = ncu.build_command(
        Path("/usr/bin/ncu"),
        [],
        Path("/tmp/r"),
        ["gpu__time_duration.sum"],
        launch_count=200,
        nvtx_includes=ncu.nvtx_filters(["softmax"]),
    )
    assert (
        cmd[cmd.index("--nvtx-include") + 1] == "softmax/" and cmd[cmd.index("--launch-count") + 1] == "200"
    )
    assert "--nvtx" in cmd


def test_a_recorded_h100_ncu_report_read_as_a_commands_report(tmp_path):
    """The command path of the Nsight modes on a real report: kernels grouped by their NVTX range
    give the same counters as the package path reading the same report."""
    import shutil
    import sys as _sys

    _sys.path.insert(0, str(ROOT / "tests" / "unit"))
    from test_ncu import FIX, _finish

    from kprof_mcp.models import ProfileRequest
    from kprof_mcp.modes import get_mode

    pkg, _ = _finish(tmp_path / "a", "ncu", "matmul", "v1")
    work = tmp_path / "b"
    shutil.copytree(FIX / "ncu_matmul_v1", work)
    fields = json.loads((work / "capture.json").read_text())["result"]
    req = ProfileRequest.model_validate(fields["request"]).model_copy(
        update={"command": ["python", "train.py"], "include": ["kprof_*"]}
    )
    profiler = json.loads((work / "profiler.json").read_text())
    cmd = get_mode("ncu").read_output(req, work, (work / "ncu.log").read_text(), profiler)
    assert [s.name for s in cmd.stages] == ["kprof_matmul"] and cmd.command["stages_from"] == "range"
    a, b = cmd.stages[0], pkg.stages[0]
    assert (a.timing.median_ns, a.tc_pct, a.dram_pct, a.ncu_kernels) == (
        b.timing.median_ns,
        b.tc_pct,
        b.dram_pct,
        b.ncu_kernels,
    )
    assert not a.has_model and "stages_from" in (work / "result.json").read_text()
    assert (work / "ncu" / "metrics.csv").is_file() and list((work / "source").glob("*.md"))


def test_a_ranges_occurrences_sum_its_kernels_even_when_a_kernel_name_repeats():
    """Issue 26: an eager chain (bias, GELU, scale, residual) launches PyTorch's elementwise kernel
    several times per occurrence; the stage's duration is the occurrence's kernels summed, never
    one kernel's time (which made the range's model bytes read as 110 % of the H100's bandwidth)."""
    from kprof_mcp.modes.nsight import _occurrences
    from kprof_mcp.parsers.ncu import KernelRecord

    def recs(names):
        return [KernelRecord(name=n, nvtx_ranges=["chain"], metrics={}, metric_source={}) for n in names]

    chain = ["elementwise", "gelu", "elementwise", "elementwise"]
    assert _occurrences(recs(chain * 5)) == 5
    assert _occurrences(recs(chain * 5), entered=5) == 5
    assert _occurrences(recs(["a", "b"] * 3)) == 3
    assert _occurrences(recs(["a", "a"] * 3), entered=3) == 3  # the count kprof.range kept decides
    assert _occurrences(recs(["a", "b", "a"])) == 1  # no period: one launch
    assert _occurrences(recs(chain * 5), entered=7) == 5  # a count that does not divide is not trusted


def test_kprof_range_counts_its_occurrences():
    import kprof

    before = kprof.OCCURRENCES.get("counted", 0)
    for _ in range(3):
        with kprof.range("counted"):
            pass
    assert kprof.OCCURRENCES["counted"] == before + 3


def test_kernels_launched_from_autograds_thread_land_in_the_range_that_was_open():
    """What Nsight Compute recorded on the H100 for a backward pass inside kprof.range("backward")
    nested in kprof.range("step") (docs/evidence/h100-accounting/backward/reps.txt): the user's
    thread's launch carries both kinds of range, autograd's thread's launches only the start/end
    ranges (named in opening order, not by nesting)."""
    from types import SimpleNamespace as R

    from kprof_mcp.analysis.command import group_records

    main = R(
        name="vectorized_elementwise_kernel",
        nvtx_ranges=["step", "backward"],
        nvtx_start_end=["step", "backward"],
    )
    fwd = R(name="gemm", nvtx_ranges=["step", "forward"], nvtx_start_end=["step", "forward"])
    other = [
        R(name=n, nvtx_ranges=[], nvtx_start_end=["step", "backward"])
        for n in ("elementwise_kernel", "Kernel2", "splitKreduce_kernel", "sm80_xmma_gemm")
    ]
    stray = R(name="randn", nvtx_ranges=[], nvtx_start_end=[])
    by, how, notes = group_records([fwd, main, *other, stray], [])
    assert how == "range" and sorted(by) == ["backward", "forward"]
    assert [r.name for r in by["backward"]] == [
        "vectorized_elementwise_kernel",
        "elementwise_kernel",
        "Kernel2",
        "splitKreduce_kernel",
        "sm80_xmma_gemm",
    ]
    assert any("4 profiled kernel(s) were launched from another thread" in n for n in notes)
    assert any("1 profiled kernel(s) ran outside every selected range" in n for n in notes)
    # include=["step"]: the outer range is the stage, for both threads' kernels.
    by, _, _ = group_records([fwd, main, *other], ["step"])
    assert list(by) == ["step"] and len(by["step"]) == 6
    # A plain NVTX push/pop range (no start/end): the other thread's kernels stay outside.
    plain = [R(name=r.name, nvtx_ranges=r.nvtx_ranges, nvtx_start_end=[]) for r in [main, *other]]
    by, _, notes = group_records(plain, [])
    assert [len(v) for v in by.values()] == [1] and any(
        "4 profiled kernel(s) ran outside" in n for n in notes
    )


def test_ranges_entered_but_none_profiled_are_said_with_what_to_do(tmp_path):
    """A command whose first launches (a warm-up, a reference check) fill max_kernels before its first range
    (2026-11-29 on an H200: int_ops_command.py's eight profiled launches all came before its "ranks" range):
    its kernels become the stages, and the warning says the ranges it entered and how to profile them,
    not that the command has no range."""
    import shutil
    import sys as _sys

    _sys.path.insert(0, str(ROOT / "tests" / "unit"))
    from test_ncu import FIX

    from kprof_mcp.models import ProfileRequest
    from kprof_mcp.modes import get_mode

    def read(entered):
        work = tmp_path / str(len(entered))
        shutil.copytree(FIX / "ncu_matmul_v1", work)
        capture = json.loads((work / "capture.json").read_text())
        capture["range_occurrences"] = entered
        (work / "capture.json").write_text(json.dumps(capture))
        req = ProfileRequest.model_validate(capture["result"]["request"]).model_copy(
            update={"command": ["python", "train.py"], "include": []}
        )
        profiler = json.loads((work / "profiler.json").read_text())
        cmd = get_mode("ncu").read_output(req, work, (work / "ncu.log").read_text(), profiler)
        assert cmd.command["stages_from"] == "kernel"
        # no launcher to ask: each stage's grid is its kernel's as Nsight Compute launched it (launch__grid_size)
        assert all(s.grid_blocks and s.grid_blocks >= 1 for s in cmd.stages)
        return " ".join(w.message for w in cmd.warnings)

    said = read({"ranks": 6})
    assert "no profiled kernel ran in the command's ranges (ranks x6)" in said and "include=['ranks']" in said
    assert "no range in the command" not in said
    assert "no range in the command: its kernels are the stages" in read({})

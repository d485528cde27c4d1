"""Issue 37, item 2 beyond event mode: the integrity checks around timing in the Nsight Compute modes
(annotation, the default, and ncu), in nsys mode on a kernel package, and in sweeps; a stage of which
Nsight Compute profiled no kernel (the ``cache`` version: a repeated input address launches nothing)
becomes ``suspect`` with a ``timing`` warning instead of failing the profile; every warning kind the code
emits is declared in WARNING_KINDS.

The Nsight Compute child (:meth:`NsightMode.capture`) runs here on the CPU with the tampered package and
NVTX and synchronisation stubbed (torch has neither without CUDA); its reading side runs on a report
recorded on an H100 (tests/fixtures/h100_ncu), turned into a run where ncu profiled nothing."""

import ast
import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES

from kprof_mcp import packages
from kprof_mcp.capture.context import Capture, run_plan
from kprof_mcp.capture.correctness import check_correctness
from kprof_mcp.engine import render_profile
from kprof_mcp.models import WARNING_KINDS, NsightOptions, ProfileRequest
from kprof_mcp.modes import ModeError, get_mode
from kprof_mcp.modes.nsight_stages import SHOWN

TAMPERED = FIXTURES / "user_kernels" / "tampered"
NCU_FIX = FIXTURES / "h100_ncu"
ROOT = Path(__file__).resolve().parents[2]


def _ncu_capture(tmp_path: Path, version: str, monkeypatch, launches: int = 2, n: int = 2048) -> dict:
    """NsightMode.capture of a tampered version on the CPU, as the child under ncu runs it (the first
    run and the correctness gate done as the harness does them); each stage call is recorded with
    the NVTX ranges open at that moment. Returns capture.json and the calls."""
    import torch

    depth: list[str] = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda.nvtx, "range_push", lambda name: depth.append(name))
    monkeypatch.setattr(torch.cuda.nvtx, "range_pop", lambda: depth.pop())
    pkg = packages.load(TAMPERED)
    params = pkg.validate_params({"n": n})
    inputs = pkg.make_inputs(params, "cpu")
    plan = pkg.version(version).build(inputs, params)
    calls: list[tuple[str, ...]] = []
    for st in plan.stages:
        real = st.fn
        st.fn = lambda real=real: (calls.append(tuple(depth)), real())[1]
    run_plan(torch, plan, None, False)
    correctness = check_correctness(
        torch, plan.output(), pkg.reference(inputs, params), pkg.tolerance("float32")
    )
    assert correctness["ok"]
    calls.clear()
    req = ProfileRequest(
        kernel=pkg.name,
        kernel_source=str(TAMPERED),
        version=version,
        params={"n": n},
        options=NsightOptions(mode="annotation", ncu_launches=launches),
        out_root=str(tmp_path),
    )
    from kprof_mcp.child.harness import _static, device_state

    dev = device_state(torch, False)
    work = tmp_path / "run.partial"
    work.mkdir()
    statics = [
        _static(s, m, params, dev, None, None, s.tiling)
        for s, m in zip(plan.stages, pkg.version(version).stages)
    ]
    cap = Capture(
        torch=torch,
        req=req,
        pkg=pkg,
        params=params,
        version=pkg.version(version),
        plan=plan,
        streams=None,
        use_cuda=False,
        device=dev,
        stages=statics,
        work_dir=work,
        final_dir=tmp_path / "run",
        correctness=correctness,
        created_at="t",
        autotuned_here=[],
        inputs=inputs,
    )
    get_mode("annotation").capture(cap)
    assert not depth  # every range closed
    return json.loads((work / "capture.json").read_text()), calls


@pytest.mark.parametrize("version,ok", [("honest", True), ("cache", False), ("stale", False)])
def test_the_nsight_child_checks_integrity_outside_the_profiled_ranges(tmp_path, monkeypatch, version, ok):
    capture, calls = _ncu_capture(tmp_path, version, monkeypatch)
    after = capture["result"]["correctness"]["after_timing"]
    assert after["ok"] is ok and [c["check"] for c in after["checks"]] == ["repeat", "fresh_inputs"]
    integrity = [w for w in capture["result"]["warnings"] if w["kind"] == "integrity"]
    assert bool(integrity) is not ok
    if not ok:
        assert "'fresh_inputs' failed after timing" in integrity[0]["message"]
    # Exactly the profiled launches ran inside the stage's range; the checks' run and the launch
    # timing ran outside every range (ncu profiles only --nvtx-include kprof_scale/).
    inside = [c for c in calls if c]
    assert inside == [("kprof_scale",)] * 2 and len(calls) > len(inside)
    lt = capture["launch_timing"]["scale"]
    assert len(lt["samples_ns"]) == 5 and lt["method"] == "cpu_wall_clock" and lt["l2_flushed"] is False


def _recorded_run(tmp_path: Path, nothing_profiled: bool, launch_timing: bool, cache_failure: bool = True):
    """The H100 annotation run of vector_add v0, as ncu would have left it had its stage launched nothing
    in its range (no report, ncu's 'No kernels were profiled'), with the child's integrity record of a
    cached output and its launch timing (CUDA events outside the ranges)."""
    src = NCU_FIX / "annotation_vector_add_v0"
    work = tmp_path / "annotation_vector_add_v0.partial"
    shutil.copytree(src, work)
    capture = json.loads((work / "capture.json").read_text())
    if launch_timing:
        capture["launch_timing"] = {
            "add": {
                "samples_ns": [3100.0, 3000.0, 3050.0, 2990.0, 3020.0],
                "method": "cuda_events",
                "l2_flushed": False,
                "stop_reason": "5 launches outside the profiled ranges, after the integrity checks",
            }
        }
    if cache_failure:
        msg = "one run on fresh inputs ..., gave wrong results (non-finite): the version serves a cached or stale output"
        capture["result"]["correctness"]["after_timing"] = {
            "ok": False,
            "checks": [
                {
                    "check": "repeat",
                    "ok": True,
                    "message": "the last timed run's outputs match the first run's",
                },
                {"check": "fresh_inputs", "ok": False, "message": msg, "inputs_varied": True},
            ],
            "persisting_l2": {},
        }
        capture["result"]["warnings"].append(
            {
                "kind": "integrity",
                "message": f"integrity check 'fresh_inputs' failed after timing: {msg}",
                "stage": None,
            }
        )
    (work / "capture.json").write_text(json.dumps(capture))
    log = (work / "ncu.log").read_text()
    if nothing_profiled:
        (work / "profile.ncu-rep").unlink()
        log = "==PROF== Connected to process 570 (/usr/bin/python3.12)\n==PROF== Disconnected from process 570\n"
        log += "==WARNING== No kernels were profiled.\n"
    req = ProfileRequest.model_validate(capture["result"]["request"])
    profiler = json.loads((work / "profiler.json").read_text())
    return lambda: get_mode("annotation").read_output(req, work, log, profiler)


def test_a_stage_ncu_profiled_nothing_of_is_suspect_with_its_launch_time_and_integrity_failed(tmp_path):
    result = _recorded_run(tmp_path, nothing_profiled=True, launch_timing=True)()
    (s,) = result.stages
    assert s.timing.method == "cuda_events" and s.timing.median_ns == 3020.0 and not s.ncu_kernels
    assert s.timing.kernel_recorded is False
    assert s.tc_pct is None and s.dram_pct is None and s.missing_metrics == list(SHOWN.values())
    (w,) = [w for w in result.warnings if w.kind == "timing"]
    assert w.stage == "add" and w.message.startswith("kernel time not measured for stage add")
    assert "'kprof_add'" in w.message and "launched none" in w.message
    assert result.correctness["after_timing"]["ok"] is False
    work = tmp_path / "annotation_vector_add_v0.partial"
    assert (work / "result.json").is_file() and (work / "ncu" / "metrics.csv").is_file()  # artifacts written
    r = render_profile(result)
    (sa,) = r.assessment.stages
    assert sa.diagnosis.bottleneck == "suspect" and "no kernel recorded" in sa.key_issue.values["reason"]
    contract = r.contract
    line = next(ln for ln in contract.splitlines() if ln.startswith("**Integrity**"))
    assert "FAILED after timing" in line
    assert "suspect" in contract and "no kernel recorded" in contract


def test_a_profiled_stage_keeps_its_ncu_figures_and_old_captures_still_fail_when_nothing_ran(tmp_path):
    result = _recorded_run(tmp_path / "a", nothing_profiled=False, launch_timing=True, cache_failure=False)()
    (s,) = result.stages
    assert s.timing.method == "ncu gpu__time_duration" and s.ncu_kernels == ["add_kernel"]
    assert not [w for w in result.warnings if w.kind in ("timing", "integrity")]
    # A capture without launch timing (recorded before issue 37): ncu profiling nothing is an error.
    with pytest.raises(ModeError) as e:
        _recorded_run(tmp_path / "b", nothing_profiled=True, launch_timing=False)()
    assert e.value.kind == "nothing_profiled"


# ---------------------------------------------------------------------------- nsys mode and sweeps (CPU)


@pytest.fixture
def tampered(workspace):
    shutil.copytree(TAMPERED, workspace / "tampered")
    return "tampered/"


def test_nsys_mode_flags_a_tampered_package_and_passes_an_honest_one(engine, tampered):
    honest = engine.profile(tampered, "honest", {"n": 2048}, "nsys")
    assert honest.result.correctness["after_timing"]["ok"] is True
    assert "Integrity" not in honest.contract
    o = engine.profile(tampered, "stale", {"n": 2048}, "nsys")
    assert o.result.correctness["after_timing"]["ok"] is False
    (w,) = [w for w in o.result.warnings if w.kind == "integrity"]
    assert "'fresh_inputs' failed after timing" in w.message
    assert next(ln for ln in o.contract.splitlines() if ln.startswith("**Integrity**")).count("FAILED")
    # The checks' own launches are not in the recorded timeline: as many iterations as asked for.
    assert o.result.timeline["iterations"] == honest.result.timeline["iterations"]


def test_a_sweep_flags_the_points_of_a_tampered_version(engine, tampered):
    out = engine.sweep(tampered, "n", [1024, 2048], ["honest", "cache"], budget_ms=100)
    r = out.result
    by = {(p.version, p.params["n"]): p for p in r.points}
    assert len(by) == 4
    for n in (1024, 2048):
        assert by[("honest", n)].correctness["after_timing"]["ok"] is True
        assert by[("cache", n)].correctness["after_timing"]["ok"] is False
        assert [w.kind for w in by[("cache", n)].warnings] == ["integrity"]
    flagged = [w.message for w in r.warnings if w.kind == "integrity"]
    assert len(flagged) == 2 and all(m.startswith("cache at n=") for m in flagged), flagged


# ---------------------------------------------------------------------------- warning kinds


def _emitted_kinds() -> dict[str, list[str]]:
    """Every warning kind written as a literal in kprof_mcp/: ``ResultWarning(kind=...)`` and the first
    argument (or ``kind=``) of the helpers that make one (``.warn(kind, ...)``, event mode's ``w``)."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "kprof_mcp").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name not in ("ResultWarning", "warn", "w"):
                continue
            kind = next((k.value for k in node.keywords if k.arg == "kind"), None)
            if kind is None and node.args and name != "ResultWarning":
                kind = node.args[0]
            if isinstance(kind, ast.Constant) and isinstance(kind.value, str):
                found.setdefault(kind.value, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_every_warning_kind_the_code_emits_is_declared():
    emitted = _emitted_kinds()
    # The scan sees the kinds issue 37 added (it cannot pass by seeing nothing).
    assert {"integrity", "timing", "inputs", "matching", "clocks"} <= set(emitted)
    undeclared = {k: v for k, v in emitted.items() if k not in WARNING_KINDS}
    assert not undeclared, undeclared

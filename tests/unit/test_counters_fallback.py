"""Annotation mode where Nsight Compute cannot read the GPU's counters (ERR_NVGPUCTRPERM): the
engine profiles again in event mode and says so. The Nsight run is replaced at the runner (the
profiled child under ncu) and at the mode's launch (which needs a real ncu); the engine's
fallback, the preparation, the event run (CPU: Triton's interpreter) and ncu's log reading
(``runner.finish`` in a real child) are kprof's own code."""

import json

import pytest

from kprof_mcp import runner
from kprof_mcp.engine import KprofError
from kprof_mcp.models import NsightOptions
from kprof_mcp.modes.base import Launch
from kprof_mcp.modes.nsight import NsightMode

# What ncu printed on a GPU whose counters are reserved for admin users (as in test_ncu.py).
PERM_LOG = (
    "==PROF== Connected to process 12\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to "
    "access NVIDIA GPU Performance Counters on the target device 0. For instructions on enabling "
    "permissions and to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM\n"
    "==PROF== Disconnected from process 12\n==WARNING== No kernels were profiled.\n"
)


def _nsight_spec(engine, mode):
    spec = engine.check_profile("vector_add", "v1", {"n": 4096}, "event")
    spec.req = spec.req.model_copy(update={"options": NsightOptions(mode=mode, ncu_path="/x/ncu")})
    return spec


@pytest.fixture
def denied(monkeypatch, workspace):
    """ncu that cannot read counters: ``how`` says whether the child under it succeeded (the
    report is then read and found missing: the usual case) or failed."""
    calls = []
    how = {"child": "ok"}
    real = runner.run_profile

    def launch(self, req, stages, scratch):
        return Launch(prefix=["/x/ncu", "--stub"], profiler={"engine": "Nsight Compute"}, scratch=scratch)

    def run_profile(request_json, timeout_s, on_progress, **kw):
        req = json.loads(request_json)
        calls.append((req["mode"], bool(req.get("prepare_only")), kw.get("prefix")))
        if req["mode"] not in ("annotation", "ncu"):
            return real(request_json, timeout_s, on_progress, **kw)
        if how["child"] == "failed":
            raise runner.WorkerError("crash", "the profiled child exited with status 1", {"log": PERM_LOG})
        work = workspace / "out/profiles" / req["mode"] / "vector_add" / "n=4096" / "t-v1.partial"
        work.mkdir(parents=True)
        (work / "capture.json").write_text("{}")
        return runner.Record(
            work_dir=str(work),
            profile_dir=str(work.with_name("t-v1")),
            log=PERM_LOG,
            returncode=1,
            wall_s=1.0,
        )

    monkeypatch.setattr(NsightMode, "launch", launch)
    monkeypatch.setattr(runner, "run_profile", run_profile)
    return calls, how


@pytest.mark.parametrize("child", ["ok", "failed"])
def test_annotation_without_counters_falls_back_to_event_timing(engine, workspace, denied, child):
    calls, how = denied
    how["child"] = child
    o = engine.run_checked(_nsight_spec(engine, "annotation"))
    r = o.result
    # the annotation run under "ncu", then the same request in event mode, without a profiler
    assert ("annotation", False, ["/x/ncu", "--stub"]) in calls
    assert calls[-1][0] == "event" and calls[-1][2] is None
    assert r.mode == "event" and r.request["mode"] == "event"
    fb = r.profiler["counters_fallback"]
    assert fb["requested_mode"] == "annotation" and fb["counters"].startswith("denied")
    assert any("ERR_NVGPUCTRPERM" in e for e in fb["profiler_errors"])
    w = r.warnings[0]
    assert w.kind == "metrics_missing"
    for said in (
        "ERR_NVGPUCTRPERM",
        "CUPTI",
        "theoretical occupancy",
        "NVreg_RestrictProfilingToAdminUsers=0",
    ):
        assert said in w.message
    assert o.profile_dir.parent.parent.parent.name == "event" and (o.profile_dir / "result.json").is_file()
    on_disk = json.loads((o.profile_dir / "result.json").read_text())
    assert on_disk["profiler"]["counters_fallback"]["requested_mode"] == "annotation"
    assert "ERR_NVGPUCTRPERM" in (o.profile_dir / "report.md").read_text()
    # the contract claims no counters: TC%, DRAM% and Occ% are n/a, never 0
    row = next(ln for ln in o.contract.splitlines() if ln.startswith("| add "))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:5] == ["n/a", "n/a", "n/a"], row
    assert not list(workspace.rglob("*.partial"))  # the denied run's directory is gone


def test_ncu_mode_keeps_its_counters_error(engine, denied):
    with pytest.raises(KprofError, match="ERR_NVGPUCTRPERM") as e:
        engine.run_checked(_nsight_spec(engine, "ncu"))
    assert "mode='event' works without counters" in str(e.value)
    assert [c[0] for c in denied[0] if not c[1]] == ["ncu"]  # no second run

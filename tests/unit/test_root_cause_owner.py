"""A launch-bound plan's root cause names what owns the GPU's idle time when that is not the launch calls
(analysis/idle.idle_owner, render/contract.root_cause_text): the recorded anomaly-mode loop (host work
between launches, 2026-11-27 on an H100) is launch-bound by its kernels' length against the gaps, but the
gaps are the host's own work, which cheaper launches would not remove."""

from pathlib import Path

from kprof_mcp.analysis.assessment import assess
from kprof_mcp.analysis.idle import idle_owner
from kprof_mcp.models import ProfileResult
from kprof_mcp.render.contract import render_contract

PAIR = (
    Path(__file__).resolve().parents[1]
    / "calibration"
    / "recorded-replay"
    / "autograd_anomaly_detection_left_on"
)


def _root(r: ProfileResult) -> str:
    (line,) = [x for x in render_contract(r).splitlines() if x.startswith("**Root cause**")]
    return line


def test_the_host_owns_the_anomaly_loops_idle_time_and_the_root_cause_says_so():
    r = ProfileResult.model_validate_json((PAIR / "bad.result.json").read_text())
    idle = r.timeline["idle"]
    got = idle_owner(idle)
    assert got["idle_owner"] == "host"
    assert got["idle_owner_pct"] == 100.0 * idle["parts_ns"]["host"] / idle["window_ns"]
    rc = assess(r).root_cause
    assert rc.kind == "launch_bound" and rc.values["idle_owner"] == "host"
    line = _root(r)
    assert "The plan is launch-bound" in line and "the host's own work between launches" in line
    assert f"({got['idle_owner_pct']:.1f}% of the wall time)" in line
    assert "captured in a CUDA graph" not in line


def test_where_the_launch_calls_own_the_idle_time_the_root_cause_points_at_them():
    r = ProfileResult.model_validate_json((PAIR / "bad.result.json").read_text())
    idle = dict(r.timeline["idle"])
    idle["parts_ns"] = {**idle["parts_ns"], "launch": 2.0 * max(idle["parts_ns"].values())}
    r = r.model_copy(update={"timeline": {**r.timeline, "idle": idle}})
    assert idle_owner(idle)["idle_owner"] == "launch"
    line = _root(r)
    assert "fused or captured in a CUDA graph" in line and "Most of the GPU's idle time" not in line


def test_no_breakdown_no_owner():
    assert idle_owner({}) == {} and idle_owner({"parts_ns": {"host": 1.0}, "window_ns": 0}) == {}

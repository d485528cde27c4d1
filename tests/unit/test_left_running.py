"""Annotation/ncu mode: a stage whose kernels run on a stream the caller does not wait for (the held-back
tampered set's `sidestream`) — the device stays busy after the timed stream's last event, which the
unprofiled CUDA-event launches measure (modes.nsight.unprofiled_launch_times' left_running_ns) and
modes.nsight_read.left_running turns into a `concurrency` warning (the contract's Caveat line)."""

from pathlib import Path

from kprof_mcp.models import ProfileResult
from kprof_mcp.modes.nsight_read import left_running
from kprof_mcp.render.contract import render_contract

FIX = Path(__file__).resolve().parents[1] / "fixtures"


def _stage():
    r = ProfileResult.model_validate_json(
        (FIX / "tampered_heldback_sidestream_event_h200.result.json").read_text()
    )
    return r, r.stages[0]  # its kernel: 23.4 µs


def test_a_device_busy_after_the_timed_stream_is_work_nobody_waits_for():
    r, s = _stage()
    (w,) = left_running(s.name, s, {"left_running_ns": 20e3})
    assert w.kind == "concurrency" and "does not wait for" in w.message
    r = r.model_copy(update={"warnings": [w]})
    assert "**Caveat**: stage axpb: the device stayed busy 20.0 µs after the timed stream's last event" in (
        render_contract(r)
    )


def test_same_stream_work_leaves_only_synchronisation():
    _, s = _stage()
    assert left_running(s.name, s, {"left_running_ns": 3e3}) == []  # microseconds of sync
    assert left_running(s.name, s, {"left_running_ns": 8e3}) == []  # under half the kernel time
    assert left_running(s.name, s, None) == [] and left_running(s.name, s, {}) == []

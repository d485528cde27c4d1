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
    (w,) = left_running(s.name, s, {"left_running_ns": 4e3, "samples_ns": [5e3, 6e3, 5.5e3]})
    assert w.kind == "concurrency" and "does not wait for" in w.message
    r = r.model_copy(update={"warnings": [w]})
    assert "**Caveat**: stage axpb: CUDA events on the timed stream measured 5.5 µs around its launches" in (
        render_contract(r)
    )


def test_same_stream_work_leaves_only_synchronisation():
    _, s = _stage()
    # the H200's honest run: events around the kernel (its 16.7 µs and the launch), a device idle after
    assert left_running(s.name, s, {"left_running_ns": 0.4e3, "samples_ns": [24e3, 25e3]}) == []
    # events that include the kernel, however long the device-wide sync took
    assert left_running(s.name, s, {"left_running_ns": 13e3, "samples_ns": [24e3]}) == []
    # short events on an idle device (a warm-L2, boost-clock run of a small kernel)
    assert left_running(s.name, s, {"left_running_ns": 0.2e3, "samples_ns": [9e3]}) == []
    assert left_running(s.name, s, None) == [] and left_running(s.name, s, {}) == []


def _rec(stream):
    from kprof_mcp.parsers.ncu_records import KernelRecord

    return KernelRecord(
        name="axpb", nvtx_ranges=["kprof:axpb"], metrics={}, metric_source={}, stream_id=stream
    )


def test_a_launch_on_another_stream_is_warned_whatever_its_length():
    """Nsight Compute's launch__stream_id of each profiled launch against the driver's id of the stream the
    stage is timed on (capture.streams.current_stream_id): a kernel too short for left_running to see
    under Nsight Compute is still on a stream the caller's may not wait for."""
    from kprof_mcp.modes.nsight_read import other_streams

    (w,) = other_streams("axpb", [_rec(13), _rec(13)], {"stream_id": 7})
    assert w.kind == "concurrency" and "2 of its 2 profiled launches ran on stream 13" in w.message
    assert "caller's stream 7" in w.message
    assert other_streams("axpb", [_rec(7)], {"stream_id": 7}) == []
    assert other_streams("axpb", [_rec(None)], {"stream_id": 7}) == []  # a report without the metric
    assert other_streams("axpb", [_rec(13)], {"stream_id": None}) == []  # no driver id: nothing to compare
    assert other_streams("axpb", [_rec(13)], None) == []


def test_the_recorded_reports_give_each_launch_its_stream():
    """Annotation and ncu reports recorded on an H100 (2026-11-2x): every launch on stream 7, the legacy
    default stream PyTorch launches on."""
    import ncu_report

    from kprof_mcp.parsers.ncu_rep import read_report

    for d in ("annotation_vector_add_v0", "annotation_matmul_v1", "ncu_vector_add_v1"):
        recs = read_report(ncu_report, FIX / "h100_ncu" / d / "profile.ncu-rep", {})
        assert recs and {r.stream_id for r in recs} == {7}

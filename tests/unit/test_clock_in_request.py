"""Issue 40: the SM clock the engine holds locked reaches the profiling process in its request.

A confined warm worker cannot read the lock's marker (kprof's cache is outside its sandbox), so it
took a lock kept from an earlier job for free clocks: params.json said ``clocks_locked: false`` while
result.json (the engine's) said locked, and event mode's throttle rule (free clocks: a batch whose SM
clock reads below 75 % of the maximum is set aside) set aside every CUPTI batch at the locked base
clock until twice the budget was spent (H100, 2026-11-26: ~100 batches of 30 runs, 3 s of a 6 s
re-profile, the timing kept only the last batch)."""

import types

from kprof_mcp import clocks
from kprof_mcp.child import harness
from kprof_mcp.engine.run import with_clock
from kprof_mcp.engine.specs import ProfileSpec
from kprof_mcp.models import CompareRequest, ProfileRequest, SweepRequest


def _spec() -> ProfileSpec:
    req = ProfileRequest(
        kernel="k", kernel_source="/x", version="v", params={}, mode="event", out_root="/tmp"
    )
    return ProfileSpec(req=req, base=None, source=None, cpu=False, stages=["s"], timeout=60.0)


def test_with_clock_puts_the_engines_lock_in_the_request_and_it_survives_the_json():
    locked = with_clock(_spec(), clocks.ClockState(locked_mhz=1305, note="locked", kept=True))
    assert locked.req.sm_clock_locked_mhz == 1305
    assert ProfileRequest.model_validate_json(locked.req.model_dump_json()).sm_clock_locked_mhz == 1305
    assert (
        with_clock(_spec(), clocks.ClockState(locked_mhz=None, note="free")).req.sm_clock_locked_mhz is None
    )
    assert with_clock(_spec(), None).req.sm_clock_locked_mhz is None
    for model in (CompareRequest, SweepRequest):
        assert "sm_clock_locked_mhz" in model.model_fields


def _fake_torch():
    props = types.SimpleNamespace(
        name="NVIDIA H100 80GB HBM3",
        multi_processor_count=132,
        L2_cache_size=50 * 2**20,
        total_memory=80 * 2**30,
        major=9,
        minor=0,
    )
    cuda = types.SimpleNamespace(current_device=lambda: 0, get_device_properties=lambda i: props)
    return types.SimpleNamespace(__version__="2.11.0", cuda=cuda, version=types.SimpleNamespace(cuda="13.0"))


def test_the_child_records_the_lock_from_its_request_without_the_marker(monkeypatch):
    from kprof_mcp.tools import nvidia_smi

    monkeypatch.setattr(nvidia_smi, "clocks", lambda idx: {"clocks.max.sm": "1980", "driver_version": "580"})
    monkeypatch.setattr(clocks, "read_marker", lambda gpu: None)  # a confined worker sees no marker
    free = harness.device_state(_fake_torch(), True)
    assert free.clocks_locked is False and free.sm_clock_lock_mhz is None
    locked = harness.device_state(_fake_torch(), True, locked_mhz=1305)
    assert locked.clocks_locked is True and locked.sm_clock_lock_mhz == 1305
    assert "1305 MHz" in locked.clock_control

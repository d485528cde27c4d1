"""Issue 37 item 1, the structured flag: ``Timing.kernel_recorded`` is set where the timer falls back
from CUPTI to CUDA events (capture/timer.py, event mode, the sweep child), and analysis/peaks.py reads
it; the warning's text is read only for results recorded before the field existed."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kprof_mcp.analysis.peaks import NO_KERNEL, suspect_reasons
from kprof_mcp.capture.context import Steps
from kprof_mcp.capture.timer import CuptiUnavailable, NoKernelInRuns, Timer, events_in_place_of_kernels
from kprof_mcp.models import DeviceState, KernelTime, ProfileRequest, ProfileResult, Timing

REQ = ProfileRequest(
    kernel="k",
    kernel_source="/x",
    version="v0",
    params={},
    mode="event",
    out_root="/tmp",
    min_runs=5,
    budget_ms=1000,
    warmup_ms=0,
    target_rel_iqr=1e9,
)


def _timing(**kw: Any) -> Timing:
    return Timing(
        samples_ns=[70_000.0] * 10, method="cupti_kernel_sum", l2_flushed=True, stop_reason="converged", **kw
    )


def test_the_timer_says_whether_cupti_recorded_the_kernels():
    t = Timer(None, True, REQ, "cupti", flush_buf=object())
    t._one_batch = lambda fn, n: [1000.0] * n  # CUPTI's per-run sums, as _cupti_batch returns them
    timing = t.time(lambda: None)
    assert timing.method == "cupti_kernel_sum" and timing.kernel_recorded is True
    cpu = Timer(None, False, REQ, "cpu").time(lambda: None)
    assert cpu.kernel_recorded is None  # no kernel recorder asked
    assert events_in_place_of_kernels(cpu).kernel_recorded is False
    assert issubclass(NoKernelInRuns, CuptiUnavailable)  # callers catching the old error still do


# ----------------------------------------------------------------- event mode's capture, with fakes
class FakeTimer:
    """Event mode's Timer: CUPTI 'sees' a run's kernels unless the stage returns 'cached' (no kernel
    in its runs) or CUPTI is off altogether (``FakeTimer.unavailable``)."""

    unavailable = False

    def __init__(self, torch, use_cuda, req, engine=None, clock_reader=None, flush_buf=None):
        self.engine, self.dropped_runs, self.foreign = engine or "events", 0, {}
        self.spent_s: dict[str, float] = {}  # the phases a real Timer books (issue 40)
        self.kernels: list = []

    def time(self, fn) -> Timing:
        if self.engine == "cupti":
            if FakeTimer.unavailable:
                raise CuptiUnavailable("torch.profiler recorded no GPU kernel")
            if fn() == "cached":
                raise NoKernelInRuns("CUPTI saw kernels in 0 of 10 runs")
            return _timing(kernel_recorded=True)
        return Timing(
            samples_ns=[75_000.0] * 10, method="cuda_events", l2_flushed=True, stop_reason="converged"
        )

    def kernel_times(self) -> list[KernelTime]:
        return [KernelTime(name="k", launches_per_run=1, median_ns=70_000.0, total_median_ns=70_000.0)]

    def energy(self, fn, reader, **kwargs):
        return {}


@dataclass(kw_only=True)
class FakeCapture(Steps):
    tmp: Path
    names: tuple[str, ...]
    req: ProfileRequest = REQ
    torch: Any = None
    use_cuda: bool = True
    device: DeviceState = field(
        default_factory=lambda: DeviceState(kind="cuda", name="H100", index=0, clocks_locked=True)
    )

    def __post_init__(self):
        fns = {"cached": lambda: "cached"}
        self.plan = SimpleNamespace(
            kind="sequential",
            stages=[SimpleNamespace(name=n, fn=fns.get(n, lambda: None)) for n in self.names],
        )
        self.stages = [
            dict(name=n, flops=0.0, bytes_model=1e8, tensor_cores=False, dtype="float32") for n in self.names
        ]
        self.work_dir = self.tmp

    def guard(self):
        return None

    def integrity_after_timing(self, guard) -> None:
        pass

    def run_plan(self, sync=True):
        return []

    def result(self, stages, **extra) -> ProfileResult:
        self.got = ProfileResult(
            kernel="k",
            version="v0",
            mode="event",
            plan_kind="sequential",
            params={},
            param_order=[],
            device=self.device,
            stages=stages,
            warnings=list(self.warnings),
            created_at="now",
            **extra,
        )
        return self.got


def _capture(monkeypatch, tmp_path, names, unavailable=False) -> ProfileResult:
    from kprof_mcp.capture import artifacts
    from kprof_mcp.modes import event
    from kprof_mcp.tools import nvidia_smi, nvml

    monkeypatch.setattr(event, "Timer", FakeTimer)
    monkeypatch.setattr(FakeTimer, "unavailable", unavailable)
    monkeypatch.setattr(nvidia_smi, "clocks", lambda i: {})
    monkeypatch.setattr(nvidia_smi, "smi_id", lambda i: "0")
    monkeypatch.setattr(nvml, "energy_reader", lambda i: None)
    monkeypatch.setattr(artifacts, "write_params_and_samples", lambda *a, **k: None)
    cap = FakeCapture(tmp=tmp_path, names=names)
    event.EventMode().capture(cap)
    return cap.got


def test_event_mode_flags_the_stage_with_no_kernel_and_keeps_cupti_for_the_others(monkeypatch, tmp_path):
    r = _capture(monkeypatch, tmp_path, ("a", "cached", "b"))
    by = {s.name: s for s in r.stages}
    assert by["a"].timing.kernel_recorded is True and by["b"].timing.kernel_recorded is True
    assert by["b"].timing.method == "cupti_kernel_sum"  # CUPTI works: the next stage keeps it
    assert by["cached"].timing.kernel_recorded is False and by["cached"].timing.method == "cuda_events"
    assert by["cached"].launch_timing is None and by["cached"].kernel_times == []
    (w,) = [w for w in r.warnings if w.kind == "timing"]
    assert w.stage == "cached" and "kernel time not measured for stage cached" in w.message
    assert r.plan_total is not None and r.plan_total.kernel_recorded is True
    assert suspect_reasons(r) == {"cached": NO_KERNEL}


def test_event_mode_without_cupti_flags_every_stage(monkeypatch, tmp_path):
    r = _capture(monkeypatch, tmp_path, ("a", "b"), unavailable=True)
    assert [s.timing.kernel_recorded for s in r.stages] == [False, False]
    assert r.plan_total.kernel_recorded is False
    assert set(suspect_reasons(r)) == {"a", "b"}


# ----------------------------------------------------------------- peaks.suspect_reasons
def _result(timing: Timing, warnings=()) -> ProfileResult:
    from kprof_mcp.models import StageResult

    s = StageResult(
        name="add", timing=timing, flops=0.0, bytes_model=1e6, tensor_cores=False, dtype="float32"
    )
    return ProfileResult(
        kernel="k",
        version="v0",
        mode="event",
        plan_kind="single",
        params={},
        param_order=[],
        device=DeviceState(kind="cuda", name="H100"),
        stages=[s],
        warnings=list(warnings),
        created_at="now",
    )


OLD_WARNING = {"kind": "timing", "message": "kernel time not measured (CUPTI saw kernels in 0 of 30 runs)"}


@pytest.mark.parametrize(
    "recorded, warned, suspect",
    [
        (False, False, True),  # the field alone
        (True, True, False),  # the field wins over a warning's text
        (None, True, True),  # an old result: the warning's text
        (None, False, False),
    ],
)
def test_suspect_reads_the_field_and_the_text_only_for_old_results(recorded, warned, suspect):
    t = Timing(
        samples_ns=[3170.0] * 30,
        method="cuda_events",
        l2_flushed=True,
        stop_reason="converged",
        kernel_recorded=recorded,
    )
    r = _result(t, [OLD_WARNING] if warned else [])
    assert (suspect_reasons(r) == {"add": NO_KERNEL}) is suspect

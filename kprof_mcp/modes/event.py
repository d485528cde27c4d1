"""``event``: each stage timed alone with CUDA events, L2 flushed before every run, in
batches until the spread is small or a budget is spent; raw samples kept. Without a GPU the
wall clock times the Triton interpreter (CPU timing, labelled as such)."""

from __future__ import annotations

import statistics
import time
from typing import Any

from ..models import DeviceState, ProfileRequest, ProfileResult, ResultWarning, StageResult, Timing
from .base import Mode

L2_FLUSH_BYTES = 256 * 1024 * 1024  # as triton.testing.do_bench: larger than any L2 in devices.json


class Timer:
    """Times a callable until the spread is small or a budget is spent; keeps raw samples.

    GPU: CUDA events around each run, L2 flushed (a 256 MiB buffer zeroed) before each.
    CPU: the wall clock around each (synchronous) run; no cache control.
    """

    def __init__(self, torch, use_cuda: bool, req: ProfileRequest):
        self.torch = torch
        self.use_cuda = use_cuda
        self.req = req
        self.flush_buf = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda") if use_cuda else None

    def _one_batch(self, fn, n: int) -> list[float]:
        torch = self.torch
        if not self.use_cuda:
            out = []
            for _ in range(n):
                t0 = time.perf_counter_ns()
                fn()
                out.append(float(time.perf_counter_ns() - t0))
            return out
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        for i in range(n):
            self.flush_buf.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) * 1e6 for s, e in zip(starts, ends)]

    def time(self, fn) -> Timing:
        req = self.req
        # Warm-up: at least 3 runs and warmup_ms, after the correctness run did JIT/autotune.
        t0 = time.perf_counter()
        warm = self._one_batch(fn, 3)
        est_ns = max(1.0, statistics.median(warm))
        while (time.perf_counter() - t0) * 1e3 < req.warmup_ms and est_ns < req.warmup_ms * 1e6:
            warm = self._one_batch(fn, max(1, min(100, int(20e6 / est_ns))))
            est_ns = max(1.0, statistics.median(warm))
        samples: list[float] = []
        spent_ms = 0.0
        stop = "max_runs"
        while len(samples) < req.max_runs:
            batch = max(1, min(req.max_runs - len(samples), int(50e6 / est_ns), 200))
            if len(samples) < req.min_runs:
                batch = max(batch if batch < req.min_runs else req.min_runs, 1)
            b0 = time.perf_counter()
            samples += self._one_batch(fn, batch)
            spent_ms += (time.perf_counter() - b0) * 1e3
            if len(samples) >= req.min_runs:
                t = Timing(samples_ns=samples, method="", l2_flushed=False, stop_reason="")
                if t.rel_iqr <= req.target_rel_iqr and len(samples) >= max(req.min_runs, 10 if self.use_cuda else 1):
                    stop = "converged"
                    break
                if spent_ms >= req.budget_ms:
                    stop = "budget"
                    break
            est_ns = max(1.0, statistics.median(samples[-batch:]))
        return Timing(samples_ns=samples, method="cuda_events" if self.use_cuda else "cpu_wall_clock",
                      l2_flushed=self.use_cuda, stop_reason=stop)


def quality_warnings(dev: DeviceState, stages: list[StageResult], plan_total: Timing | None) -> list[ResultWarning]:
    """What limits how far event timings can be trusted: CPU or unknown device, unlocked
    clocks, noise, too few runs, durations near CUDA-event resolution."""
    out: list[ResultWarning] = []

    def w(kind: str, message: str, stage: str | None = None) -> None:
        out.append(ResultWarning(kind=kind, message=message, stage=stage))

    if dev.kind == "cpu":
        w("device", "CPU timing: no GPU was used (Triton interpreter / torch CPU); times say nothing about GPU "
                    "performance and no roofline or % of peak is given")
    elif dev.spec_key is None:
        w("device", f"unknown device: {dev.spec_note}")
    if dev.kind == "cuda":
        before, after = dev.clocks_before, dev.clocks_after
        w("clocks", "clocks not locked by kprof (event mode): SM clock read "
                    f"{before.get('clocks.sm', '?')} MHz before and {after.get('clocks.sm', '?')} MHz after timing "
                    f"(max {before.get('clocks.max.sm', '?')} MHz); boost and thermals can move results a few %")
    for s in stages:
        t = s.timing
        if t.rel_iqr > 0.05:
            w("noise", f"stage {s.name}: noisy timing, IQR is {100 * t.rel_iqr:.1f}% of the median "
                       f"({t.runs} runs, stopped by {t.stop_reason}); compare versions only beyond this spread", s.name)
        if t.runs < 10 and t.stop_reason == "budget":
            w("few_runs", f"stage {s.name}: only {t.runs} timed runs (budget reached)", s.name)
        if dev.kind == "cuda" and t.median_ns < 5_000:
            w("resolution", f"stage {s.name}: {t.median_ns / 1e3:.2f} µs is near CUDA-event resolution and launch "
                            "overhead; use a larger problem or the ncu modes for kernel-only time", s.name)
    if plan_total is not None and plan_total.rel_iqr > 0.05:
        w("noise", f"whole plan: noisy timing, IQR {100 * plan_total.rel_iqr:.1f}% of the median")
    return out


class EventMode(Mode):
    name = "event"
    summary = ("CUDA-event timing per stage, L2 flushed, median/IQR, roofline estimate from the FLOP/byte model. "
               "Quick A/B; carries Python launch overhead.")
    needs = "torch (GPU or CPU)"
    samples_note = " Event timing includes launch overhead of the Python call."

    def cache_control(self, result: ProfileResult) -> str:
        return "L2 flushed before each timed run (256 MiB buffer zeroed)" if result.device.kind == "cuda" else "none (CPU)"

    def capture(self, cap) -> dict[str, Any]:
        from ..child.artifacts import write_params_and_samples
        from ..tools import nvidia_smi

        torch, req = cap.torch, cap.req
        stages: list[StageResult] = []
        for i, (stage, static) in enumerate(zip(cap.plan.stages, cap.stages)):
            cap.progress(0.25 + 0.6 * i / len(cap.plan.stages), f"timing stage {stage.name}")
            # Each stage alone, on the current stream: CUDA events are recorded on the current
            # stream, so timing a stage launched on a side stream would measure an empty interval.
            timing = Timer(torch, cap.use_cuda, req).time(stage.fn)
            stages.append(StageResult(timing=timing, **static))
            cap.phase(f"timing_{stage.name}")
        plan_total = None
        if len(cap.plan.stages) > 1:
            cap.progress(0.88, "timing the whole plan")
            plan_total = Timer(torch, cap.use_cuda, req).time(lambda: cap.run_plan(sync=False))
            if cap.plan.kind == "concurrent":
                cap.warn("concurrency", "concurrent plan: per-stage event times are each stage run alone on one "
                                        "stream, so they say nothing about the overlap; only the whole-plan time "
                                        "reflects it (use mode 'nsys' for the timeline)")
        if cap.use_cuda:
            cap.device.clocks_after = nvidia_smi.clocks(cap.device.index or 0)
        cap.warnings += quality_warnings(cap.device, stages, plan_total)
        cap.phase("timing_plan_and_clocks")
        result = cap.result(stages, plan_total=plan_total)
        cap.progress(0.95, "writing artifacts")
        write_params_and_samples(cap.work_dir, result, self.cache_control(result))
        return {}

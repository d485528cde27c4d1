"""The measurement primitive of the timing modes: :class:`Timer` times a callable in batches until
the spread is small (after a minimum window) or a budget is spent, keeping raw samples; on a GPU,
each run's kernel time from CUPTI with the L2 flushed before every run, and energy per run from
NVML. Used by event mode (:mod:`kprof_mcp.modes.event`) and by the compare and sweep children.

The stopping rule (issue 40), stated in each profile's ``timings.stopping`` (:func:`stopping_rule`):
after ``min_runs`` samples, timing stops

* with ``KPROF_TIMING_STOP=ci`` (opt-in: not yet shown on a GPU to keep the between-profile spread
  within 0.5 %, docs/evidence/agent-loop), early (``converged_ci``), on a GPU before the window, once
  at least :data:`EARLY_MIN_BATCHES`
  batches spanning :data:`EARLY_MIN_WINDOW_MS` were timed, the median's 95 % CI is within
  ±``target_rel_ci`` of it **and** the batches' medians agree within ``2 × target_rel_ci``
  ((max − min) ÷ median): a stage whose time moves with the GPU's clock states shows it as batches
  that disagree, and keeps the long window — measured per stage, not assumed;
* else (``converged``) once ``min_window_ms`` of timing is spent and the IQR is within
  ``target_rel_iqr`` of the median or its CI within ``target_rel_ci``;
* else at the budget (``budget``) or ``max_runs``.

Without it (the default, ``KPROF_TIMING_STOP=window``) the rule is the one before issue 40.

A CUPTI batch's profiler session start and stop and its trace's export and reading are booked
apart from the runs (``cupti_start``, ``cupti_stop``, the trace's ``cupti_export``, ``cupti_read`` and
``cupti_match``, and ``python_gc``: Python's garbage collection while the trace was handled, in
``spent_s``; issue 40).
Kineto tears CUPTI down after a session (``cuptiFinalize``) where ``TEARDOWN_CUPTI=1`` asks it to and
loads it again for the next: ``KPROF_CUPTI_TEARDOWN=0`` keeps it attached for the process's life,
``=1`` tears it down, unset leaves the environment's choice (:func:`keep_cupti_attached`; opt-in: on
an H100 a process of its own showed no difference, docs/evidence/agent-loop)."""

from __future__ import annotations

import contextlib
import gc
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

from ..models import KernelTime, ProfileRequest, Timing

L2_FLUSH_BYTES = 256 * 1024 * 1024  # as triton.testing.do_bench: larger than any L2 in devices.json
EARLY_MIN_BATCHES = 3  # the early stop needs this many batches whose medians agree ...
EARLY_MIN_WINDOW_MS = 150.0  # ... spanning at least this much timing (a GPU; capped by the budget)
STOP_ENV = "KPROF_TIMING_STOP"  # "ci": the early stop on; "window" (the default): the fixed window
TEARDOWN_ENV = "KPROF_CUPTI_TEARDOWN"  # "0": CUPTI kept attached between sessions; "1": torn down


@contextlib.contextmanager
def gc_clock():
    """Seconds Python's cyclic garbage collector ran inside the block (a one-element list, filled as
    collections end; through ``gc.callbacks``)."""
    spent = [0.0]
    began = [0.0]

    def cb(phase: str, info: dict) -> None:
        if phase == "start":
            began[0] = time.perf_counter()
        elif began[0]:
            spent[0] += time.perf_counter() - began[0]
            began[0] = 0.0

    gc.callbacks.append(cb)
    try:
        yield spent
    finally:
        gc.callbacks.remove(cb)


def keep_cupti_attached() -> bool:
    """``KPROF_CUPTI_TEARDOWN=0``: ask Kineto to keep CUPTI loaded after a profiler session
    (``TEARDOWN_CUPTI=0``, read by Kineto when a session stops); ``=1``: to tear it down
    (``TEARDOWN_CUPTI=1``); unset: the environment as it is. Called in a profiling process before
    its first session. Returns whether CUPTI is asked to stay attached (``TEARDOWN_CUPTI`` is "0")."""
    want = os.environ.get(TEARDOWN_ENV, "").strip()
    if want in ("0", "1"):
        os.environ["TEARDOWN_CUPTI"] = want
    return os.environ.get("TEARDOWN_CUPTI") == "0"


def early_stop_on() -> bool:
    return os.environ.get(STOP_ENV, "").strip().lower() == "ci"


def stopping_rule(req: ProfileRequest, use_cuda: bool) -> dict:
    """The stopping rule a profile's timers ran under, with its targets (``timings.stopping``)."""
    early = early_stop_on()
    return {
        "min_runs": max(req.min_runs, 10 if use_cuda else 1),
        "target_rel_ci": req.target_rel_ci,
        "target_rel_iqr": req.target_rel_iqr,
        "min_window_ms": req.min_window_ms if use_cuda else 0.0,
        "budget_ms": req.budget_ms,
        "early_stop": early,
        "early_min_batches": EARLY_MIN_BATCHES if early else None,
        "early_min_window_ms": EARLY_MIN_WINDOW_MS if early and use_cuda else None,
        "batch_agreement": 2 * req.target_rel_ci if early else None,
        "rule": (
            "after min_runs: stop (converged_ci) once the median's 95 % CI is within ±target_rel_ci and "
            "the medians of at least early_min_batches batches (over early_min_window_ms) agree within "
            "batch_agreement; else (converged) after min_window_ms once IQR/median <= target_rel_iqr or the "
            "CI is within target_rel_ci; else at budget_ms (budget) or max_runs"
            if early
            else "after min_runs and min_window_ms: stop (converged) once IQR/median <= target_rel_iqr or the "
            "median's 95 % CI is within ±target_rel_ci; else at budget_ms (budget) or max_runs"
        ),
    }


def batches_agree(medians: list[float], within: float) -> bool:
    """Whether the batches' medians agree: (max − min) ÷ their median within ``within``."""
    if len(medians) < 2:
        return False
    mid = statistics.median(medians)
    return mid > 0 and (max(medians) - min(medians)) / mid <= within


class CuptiUnavailable(RuntimeError):
    """torch.profiler recorded no kernel activity (CUPTI missing or refused)."""


class NoKernelInRuns(CuptiUnavailable):
    """CUPTI recorded kernels, but not in every timed run: a run launched no kernel (its work skipped
    or cached) or its launches could not be matched to it. CUPTI works: only this stage goes untimed."""


def step_times(
    samples: list[tuple[float, float | None, float]], t0: float, t1: float
) -> list[tuple[float, float]]:
    """(time, value) of each step of a stepping counter polled as (time before the read, value, time
    after), inside [t0, t1]. A step happened between the previous read and this one, so its time is
    the middle of [previous read's start, this read's end] and that span's width is its uncertainty;
    a poll the scheduler held back (a busy CPU, the GIL) leaves a wide span, so only steps whose span
    is at most twice the median span are kept: the first and last of those bound the window's
    energy without a late read stretching its time."""
    read = [s for s in samples if s[1] is not None]
    found = [
        ((pb + ca) / 2, ca - pb, v)
        for (pb, pv, _), (_, v, ca) in zip(read, read[1:])
        if v != pv and t0 <= (pb + ca) / 2 <= t1
    ]
    if not found:
        return []
    tight = 2 * statistics.median(w for _, w, _ in found)
    return [(t, v) for t, w, v in found if w <= tight]


def events_in_place_of_kernels(timing: Timing) -> Timing:
    """A CUDA-event timing standing in for a kernel time CUPTI did not record
    (``kernel_recorded=False``: the stage's figures are not a kernel's, analysis/peaks.py)."""
    return timing.model_copy(update={"kernel_recorded": False})


class Timer:
    """Times a callable until the spread is small or a budget is spent; keeps raw samples.

    ``engine``: "cupti" (GPU: each run's kernel durations from CUPTI, L2 flushed before each run
    outside the timed range), "events" (GPU: CUDA events around each run, L2 flushed before
    each) or "cpu" (the wall clock around each synchronous run; no cache control). After each
    GPU batch the SM clock is read (``clock_reader``: NVML in event mode, nvidia-smi without it)
    into ``Timing.sm_clock_mhz``.
    """

    def __init__(
        self,
        torch,
        use_cuda: bool,
        req: ProfileRequest,
        engine: str | None = None,
        clock_reader: Callable[[], float | None] | None = None,
        flush_buf=None,
    ):
        self.torch = torch
        self.use_cuda = use_cuda
        self.req = req
        self.engine = engine or ("events" if use_cuda else "cpu")
        if flush_buf is None and use_cuda:
            flush_buf = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
        self.flush_buf = flush_buf
        self.clock_reader = clock_reader
        self.clocks: list[float] = []
        self.spans: list[float] = []  # cupti: per run, first kernel start to last kernel end
        self.kernels: list[list[dict]] = []  # cupti: per batch, the per-kernel rows
        self.trace_path: Path | None = None  # cupti: where the last batch's trace is kept (artifact)
        # cupti: kernels that ran during the timed runs without being launched by them (other streams
        # or threads), by (name, stream)
        self.foreign: dict[tuple[str, str], dict] = {}
        # Clocks left free: a batch whose SM clock read below this (MHz) ran throttled and its samples
        # are set aside (nvbench's rule: 75 % of the maximum), kept only if the budget runs out.
        self.throttle_below_mhz: float | None = None
        self.dropped_runs = 0
        self.dropped_batches = 0
        # Where this timer's wall time went (s): warm-up, the timed batches' runs, CUPTI's session
        # start and stop, its trace (export and reading), the SM clock reads — event mode's phases
        # (timings.phases).
        self.spent_s: dict[str, float] = dict.fromkeys(
            (
                "warmup",
                "timing_window",
                "cupti_start",
                "cupti_stop",
                "cupti_export",
                "cupti_read",
                "cupti_match",
                "python_gc",
                "sm_clock_reads",
            ),
            0.0,
        )
        self._cupti_s: dict[str, float] = {}  # the last CUPTI batch's start, stop and trace (s)

    def _spend(self, part: str, since: float) -> float:
        now = time.perf_counter()
        self.spent_s[part] = self.spent_s.get(part, 0.0) + now - since
        return now

    def _one_batch(self, fn, n: int) -> list[float]:
        torch = self.torch
        if self.engine == "cpu":
            out = []
            for _ in range(n):
                t0 = time.perf_counter_ns()
                fn()
                out.append(float(time.perf_counter_ns() - t0))
            return out
        if self.engine == "cupti":
            return self._cupti_batch(fn, n)
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        for i in range(n):
            self.flush_buf.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) * 1e6 for s, e in zip(starts, ends)]

    def _cupti_batch(self, fn, n: int) -> list[float]:
        from torch.profiler import ProfilerActivity, profile, record_function

        from ..analysis.timeline import ITER_RANGE, kernels_per_iteration
        from ..parsers import kineto

        torch = self.torch
        keep_cupti_attached()
        torch.cuda.synchronize()
        t_enter = time.perf_counter()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            t_started = time.perf_counter()  # the session's start (CUPTI loaded again after a teardown)
            for _ in range(n):
                self.flush_buf.zero_()  # outside the run's range: not counted
                with record_function(ITER_RANGE):
                    fn()
            torch.cuda.synchronize()
            t_runs = time.perf_counter()  # from here on: the profiler's stop, then the trace's part
        t_stopped = time.perf_counter()
        with gc_clock() as gc_s, tempfile.TemporaryDirectory(prefix="kprof-cupti-") as d:
            # Kept as an artifact: each batch overwrites the last, so the last batch's trace stays.
            path = self.trace_path or Path(d) / "batch.json"
            prof.export_chrome_trace(str(path))
            t_exported = time.perf_counter()
            tr = kineto.load_trace(path)
            t_read = time.perf_counter()
            sums, spans, rows = kernels_per_iteration(tr)
            from ..analysis.timeline import foreign_overlaps

            for f in foreign_overlaps(tr):
                key = (f["name"], f["stream"])
                prev = self.foreign.get(
                    key, {"name": f["name"], "stream": f["stream"], "kernels": 0, "overlap_ns": 0.0}
                )
                prev["kernels"] += f["kernels"]
                prev["overlap_ns"] += f["overlap_ns"]
                self.foreign[key] = prev
        if tr.kernels.empty:
            raise CuptiUnavailable("torch.profiler recorded no GPU kernel (CUPTI unavailable or refused)")
        if len(sums) != n:
            raise NoKernelInRuns(
                f"CUPTI saw kernels in {len(sums)} of {n} runs (a run launched no kernel, or "
                "launches could not be matched to runs)"
            )
        self.spans += spans
        self.kernels.append(rows)
        # The trace's three parts, Python's garbage collection during them booked apart (issue 40: where a
        # re-profile's time went; on an H100 the collector took ~30 ms of them, warm worker or not).
        gc_total = gc_s[0]
        parts = {
            "cupti_export": t_exported - t_stopped,
            "cupti_read": t_read - t_exported,
            "cupti_match": time.perf_counter() - t_read,
        }
        total = sum(parts.values())
        self._cupti_s = {"cupti_start": t_started - t_enter, "cupti_stop": t_stopped - t_runs}
        for k, v in parts.items():  # GC time taken out of each part in proportion
            self._cupti_s[k] = v * (1.0 - min(gc_total, total) / total) if total > 0 else v
        self._cupti_s["python_gc"] = min(gc_total, total)
        return sums

    def _batch(self, fn, n: int) -> list[float]:
        t = time.perf_counter()
        self._cupti_s = {}
        out = self._one_batch(fn, n)
        for part, s in self._cupti_s.items():
            self.spent_s[part] = self.spent_s.get(part, 0.0) + s
        t = self._spend("timing_window", t + sum(self._cupti_s.values()))
        if self.clock_reader is not None:
            mhz = self.clock_reader()
            t = self._spend("sm_clock_reads", t)
            if mhz:
                self.clocks.append(mhz)
        return out

    def _warm_batch(self, fn, n: int) -> list[float]:
        """Warm-up runs: timed by CUDA events even for the CUPTI engine (only an estimate of the
        run time is needed, and a profiler session per warm-up batch would cost more than the runs)."""
        if self.engine == "cupti":
            self.engine = "events"
            try:
                return self._one_batch(fn, n)
            finally:
                self.engine = "cupti"
        return self._one_batch(fn, n)

    def energy(
        self, fn, reader: Callable[[], float | None] | None, window_s: float = 0.6, windows: int = 2
    ) -> dict[str, list[float]]:
        """Energy per run and mean power over ``windows`` windows of runs back to back (no L2 flush,
        no profiler). NVML's energy counter moves in steps (every 100 ms on an H100) and a read takes
        milliseconds, so a thread reads it throughout while the runs go on undisturbed; the mean power
        is the counter's slope over the steps inside the window (``step_times``: steps seen late left
        out; a least-squares line through the rest), and the energy per run that power times the wall
        time per run. {} without a reader (no
        NVML), on the CPU, or when the counter did not move twice in a window."""
        import threading

        if reader is None or not self.use_cuda:
            return {}
        sync = self.torch.cuda.synchronize
        per_run, power = [], []
        for _ in range(windows):
            samples: list[tuple[float, float | None, float]] = []
            stop = threading.Event()

            def poll() -> None:
                while not stop.is_set():
                    before = time.perf_counter()
                    samples.append((before, reader(), time.perf_counter()))

            th = threading.Thread(target=poll, daemon=True)
            sync()
            th.start()
            t0, n = time.perf_counter(), 0
            while time.perf_counter() - t0 < window_s:
                fn()
                n += 1
                if n % 64 == 0:
                    sync()  # bound the queue: launched and finished stay within 64 runs
            sync()
            t1 = time.perf_counter()
            stop.set()
            th.join(5)
            steps = step_times(samples, t0, t1)
            if len(steps) < 2 or not n:
                continue
            (ta, ea), (tb, eb) = steps[0], steps[-1]
            if tb <= ta or eb <= ea:
                continue
            # The slope of the counter over every kept step (least squares): each step's time is
            # off by up to half its span, and the fit averages that out where two ends would not.
            watts = statistics.linear_regression([t for t, _ in steps], [e for _, e in steps]).slope / 1e3
            power.append(watts)
            per_run.append(watts * (t1 - t0) / n * 1e3)  # mJ: mean power x wall time per run
        return {"energy_mj_per_run": per_run, "power_w": power} if per_run else {}

    def time(self, fn) -> Timing:
        """Warm up, then time batches until the stopping rule (the module's docstring) ends them."""
        req = self.req
        # Warm-up: at least 3 runs and warmup_ms, after the correctness run did JIT/autotune.
        t0 = time.perf_counter()
        warm = self._warm_batch(fn, 3)
        est_ns = max(1.0, statistics.median(warm))
        while (time.perf_counter() - t0) * 1e3 < req.warmup_ms and est_ns < req.warmup_ms * 1e6:
            warm = self._warm_batch(fn, max(1, min(100, int(20e6 / est_ns))))
            est_ns = max(1.0, statistics.median(warm))
        self._spend("warmup", t0)
        self.spans, self.kernels, self.clocks = [], [], []
        self.dropped_runs = self.dropped_batches = 0
        samples: list[float] = []
        batch_medians: list[float] = []
        spent_ms = 0.0
        stop = "max_runs"
        floor = max(req.min_runs, 10 if self.use_cuda else 1)
        early = early_stop_on()
        early_window = min(EARLY_MIN_WINDOW_MS, req.budget_ms) if self.use_cuda else 0.0
        while len(samples) < req.max_runs:
            batch = max(1, min(req.max_runs - len(samples), int(50e6 / est_ns), 200))
            if len(samples) < floor:  # the first batch just reaches the floor: it may be enough
                batch = floor - len(samples)
                if early and self.use_cuda:  # ... or the first of the early stop's batches
                    batch = max(1, min(batch, -(-floor // EARLY_MIN_BATCHES)))
            b0 = time.perf_counter()
            out = self._batch(fn, batch)
            spent_ms += (time.perf_counter() - b0) * 1e3
            if self.throttle_below_mhz and self.clocks and self.clocks[-1] < self.throttle_below_mhz:
                self.dropped_runs += len(out)
                self.dropped_batches += 1
                if spent_ms < 2 * req.budget_ms:
                    continue  # a throttled batch: its samples set aside, time another
                self.dropped_runs -= len(out)  # the budget is gone: keep it (the warning says so)
                self.dropped_batches -= 1
            samples += out
            batch_medians.append(statistics.median(out))
            if len(samples) >= floor:
                t = Timing(samples_ns=samples, method="", l2_flushed=False, stop_reason="")
                if (
                    early
                    and len(batch_medians) >= EARLY_MIN_BATCHES
                    and spent_ms >= early_window
                    and t.rel_ci_half() <= req.target_rel_ci
                    and batches_agree(batch_medians, 2 * req.target_rel_ci)
                ):
                    stop = "converged_ci"
                    break
                windowed = not self.use_cuda or spent_ms >= min(req.min_window_ms, req.budget_ms)
                if windowed and (t.rel_iqr <= req.target_rel_iqr or t.rel_ci_half() <= req.target_rel_ci):
                    stop = "converged"
                    break
                if spent_ms >= req.budget_ms:
                    stop = "budget"
                    break
            est_ns = max(1.0, statistics.median(samples[-batch:]))
        method = {"cupti": "cupti_kernel_sum", "events": "cuda_events", "cpu": "cpu_wall_clock"}[self.engine]
        return Timing(
            samples_ns=samples,
            method=method,
            l2_flushed=self.use_cuda,
            stop_reason=stop,
            sm_clock_mhz=list(self.clocks),
            # CUPTI saw kernels in every run (else NoKernelInRuns); the other engines record none.
            kernel_recorded=True if self.engine == "cupti" else None,
        )

    def kernel_times(self) -> list[KernelTime]:
        """The per-kernel rows of all measured CUPTI batches, merged (weighted by batch)."""
        merged: dict[str, list[dict]] = {}
        for rows in self.kernels:
            for r in rows:
                merged.setdefault(r["name"], []).append(r)
        out = []
        for name, rs in merged.items():
            out.append(
                KernelTime(
                    name=name,
                    launches_per_run=statistics.mean(r["launches_per_run"] for r in rs),
                    median_ns=statistics.median(r["median_ns"] for r in rs),
                    total_median_ns=statistics.median(r["total_median_ns"] for r in rs),
                )
            )
        return out

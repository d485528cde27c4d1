"""Stages whose model passes a device peak over their measured time (at the clock they ran): a time that
covers less work than its model, or a wrong model. Never shown as a figure above 100 %."""

from __future__ import annotations

from dataclasses import dataclass

from ..models import ProfileResult, StageResult
from .diagnosis.metrics import SUSPECT  # noqa: F401  (the bottleneck of a stage whose figures cannot be)


def ran_at_mhz(s: StageResult) -> float | None:
    """The SM clock the stage ran at: Nsight Compute's (``sm_clock_hz``), else the median of the clocks
    event mode read per timed batch (``timing.sm_clock_mhz``); None when neither was recorded."""
    if s.sm_clock_hz:
        return s.sm_clock_hz / 1e6
    mhz = sorted(v for v in s.timing.sm_clock_mhz if v and v > 0)
    if not mhz:
        return None
    n = len(mhz)
    return mhz[n // 2] if n % 2 else 0.5 * (mhz[n // 2 - 1] + mhz[n // 2])


def clock_ratio(s: StageResult, max_sm_mhz: float | None) -> float:
    """The SM clock the stage ran at (:func:`ran_at_mhz`) over the device's maximum (Nsight Compute
    locks it to base: ~0.8 on an H100; event mode under a lock, 1305 MHz: ~0.66); 1 when not measured.
    Compute peaks scale by it, DRAM's does not (memory clocks are not locked)."""
    mhz = ran_at_mhz(s)
    if not mhz or not max_sm_mhz:
        return 1.0
    return min(1.0, mhz / max_sm_mhz)


def pct_peak_flops_at_clock(s: StageResult, max_sm_mhz: float | None) -> float | None:
    """The stage's model FLOP/s, % of the FLOP peak at the SM clock it ran (:func:`clock_ratio`): the one
    place a % of a FLOP peak without counters is computed (``s.pct_peak_flops`` is the nominal one)."""
    if s.pct_peak_flops is None:
        return None
    return s.pct_peak_flops / clock_ratio(s, max_sm_mhz)


def pct_of_roofline_at_clock(s: StageResult, max_sm_mhz: float | None) -> float | None:
    """Achieved FLOP/s over the attainable min(FLOP peak at the clock it ran, intensity x peak bandwidth):
    ``s.pct_of_roofline`` with the compute roof scaled by :func:`clock_ratio` (DRAM's is not)."""
    if not (s.peak_flops_per_s and s.peak_bytes_per_s and s.intensity_flop_per_byte):
        return None
    roof = min(
        s.peak_flops_per_s * clock_ratio(s, max_sm_mhz), s.intensity_flop_per_byte * s.peak_bytes_per_s
    )
    return 100.0 * s.achieved_flops_per_s / roof


@dataclass(frozen=True)
class AtClock:
    """A stage's % of the device's peaks at the SM clock it ran (compute roofs scaled by it, DRAM's not):
    what every place that shows a % of a peak reads. ``clock_mhz`` is set only where that clock is under
    the peak's own, and then the ``*_nominal`` (datasheet, boost-clock) figures go beside them."""

    clock_mhz: float | None
    pct_peak_flops: float | None
    pct_peak_bandwidth: float | None
    pct_of_roofline: float | None
    pct_peak_flops_nominal: float | None = None
    pct_of_roofline_nominal: float | None = None


def at_clock(s: StageResult, max_sm_mhz: float | None) -> AtClock:
    if clock_ratio(s, max_sm_mhz) >= 1.0:
        return AtClock(None, s.pct_peak_flops, s.pct_peak_bandwidth, s.pct_of_roofline)
    return AtClock(
        ran_at_mhz(s),
        pct_peak_flops_at_clock(s, max_sm_mhz),
        s.pct_peak_bandwidth,
        pct_of_roofline_at_clock(s, max_sm_mhz),
        s.pct_peak_flops,
        s.pct_of_roofline,
    )


# Without counters, the compute% a tuned kernel reaches, % of the FLOP peak at the clock the stage ran
# (issue 37 item 3). With clocks free, diagnosis' 75 % stands: the clock read (~1980 MHz on an H100)
# is the boost one while a GEMM under the power limit runs far lower (1563 MHz, ncu), so the % at the
# clock read is the boost-clock one, and matmul v3 reaches 73 % of it. Under kprof's clock lock the
# clock read is the one it ran, within 3-6 % (docs/evidence/h100-thermal: matmul v3 ran at 1223 MHz under
# the 1305 lock): matmul v3 (97 % of cuBLAS) took 218.7 µs there (docs/evidence/h100-clocks/
# timing_truth_locked_1305.md), 628 TFLOP/s = 96 % of the bf16 peak at the 1305 MHz read; a well-tuned
# GEMM's 95 %, as with counters.
ROOFLINE_COMPUTE_ATTAINABLE_LOCKED_PCT = 95.0


# FLOP/s against the peak at the clock read: the clock reads a little off, 2 % before it is called an error.
# Bytes/s against DRAM's peak need no clock: any model bytes over the measured time above it are impossible
# (work skipped, or a byte model counting more than the kernel moves): the tampered set's dirty_tiles
# printed 101.3 % in event mode (docs/evidence/tampered-heldback2).
OVER_PEAK_TOLERANCE = 1.02


@dataclass(frozen=True)
class OverPeak:
    """A stage whose model over its measured time passes a device peak: bytes/s and/or FLOP/s
    with the peak they pass (FLOP/s against the peak at the clock it ran); None where within."""

    stage: str
    bytes_per_s: float | None
    peak_bytes_per_s: float | None
    flops_per_s: float | None
    peak_flops_per_s: float | None


def _over_peak(result: ProfileResult) -> list[OverPeak]:
    """A stage whose model FLOPs or bytes over its measured time exceed the device's peak (at the
    clock it ran) cannot be: its time covers less work than its model (a range timed by one of its
    kernels, work skipped or cached), or the model is wrong. render words it as a ``matching``
    warning; it is never shown as a figure above 100 %."""
    out = []
    for s in result.stages:
        if s.timing.median_ns <= 0:
            continue
        bw = s.peak_bytes_per_s and s.achieved_bytes_per_s > s.peak_bytes_per_s
        peak_f = s.peak_flops_per_s * clock_ratio(s, peak_mhz(result, s)) if s.peak_flops_per_s else None
        fl = peak_f and s.achieved_flops_per_s > OVER_PEAK_TOLERANCE * peak_f
        if bw or fl:
            out.append(
                OverPeak(
                    s.name,
                    s.achieved_bytes_per_s if bw else None,
                    s.peak_bytes_per_s if bw else None,
                    s.achieved_flops_per_s if fl else None,
                    peak_f if fl else None,
                )
            )
    return out


NO_KERNEL = "no kernel recorded in the timed runs: the time is CUDA events around launches, not a kernel's"
OVER_PEAK_CAUSES = "work skipped, cached, off the timed stream, or a wrong FLOP/byte model"


def peak_mhz(result: ProfileResult, s: StageResult) -> float | None:
    """The SM clock the datasheet FLOP peak of the stage's arithmetic is quoted at: its part's in
    ``machines.json`` (an H100 SXM's 16/8-bit and TF32 tensor figures at 1830 MHz, FP32 and FP64 at
    1980 MHz), else the device's maximum SM clock. A % of a peak at the clock the stage ran scales the
    peak by the ran clock over this one, so a GEMM at 92 % of its tensor pipe never reads 95 %."""
    from .. import machines
    from .machine_inputs import _spec

    key = result.device.spec_key
    part = (machines.table().get("parts") or {}).get(key or "") or {}
    spec = _spec(key)
    if part and spec is not None:
        mhz = (part.get("clock_mhz_by_dtype") or {}).get(spec.peak_key(s.dtype, s.tensor_cores))
        mhz = mhz or part.get("clock_mhz")
        if mhz:
            return float(mhz)
    return max_sm_mhz(result)


def max_sm_mhz(result: ProfileResult) -> float | None:
    try:
        return float(result.device.clocks_before.get("clocks.max.sm"))
    except (TypeError, ValueError):
        return None


def _no_kernel(result: ProfileResult, s: StageResult) -> bool:
    """CUPTI recorded no kernel in the stage's timed runs (or could not run) and CUDA events around its
    launches stand in: ``Timing.kernel_recorded`` is False (set where the timer falls back: event
    mode, the sweep child)."""
    if result.device.kind != "cuda":
        return False
    if s.timing.kernel_recorded is not None:
        return not s.timing.kernel_recorded
    # A result recorded before ``kernel_recorded`` existed: only the fallback's warning says so
    # ('kernel time not measured', event mode); no other way to tell for those.
    if s.timing.method != "cuda_events" or s.kernel_times:
        return False
    return any(
        w.kind == "timing" and w.message.startswith("kernel time not measured") for w in result.warnings
    )


def suspect_reasons(result: ProfileResult) -> dict[str, str]:
    """Per stage whose figures cannot be a kernel's work, why (no figure above a peak in the words):
    no kernel recorded in its timed runs, or its model over its time passes a device peak (the peak of
    the pipe its kernels ran on: :func:`.machine_inputs.as_ran`)."""
    from .machine_inputs import as_ran

    result = as_ran(result)
    out: dict[str, str] = {}
    for s in result.stages:
        if _no_kernel(result, s):
            out[s.name] = NO_KERNEL
    for o in _over_peak(result):
        what = " and ".join(
            w
            for w, v in (("DRAM bandwidth", o.bytes_per_s), ("FLOP/s at the clock it ran", o.flops_per_s))
            if v is not None
        )
        why = f"its model over its measured time passes the device's peak {what}: {OVER_PEAK_CAUSES}"
        out[o.stage] = f"{out[o.stage]}; {why}" if o.stage in out else why
    return out

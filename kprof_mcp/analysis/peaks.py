"""Stages whose model passes a device peak over their measured time (at the clock they ran): a time that
covers less work than its model, or a wrong model. Never shown as a figure above 100 %."""

from __future__ import annotations

from dataclasses import dataclass

from ..models import ProfileResult, StageResult


def clock_ratio(s: StageResult, max_sm_mhz: float | None) -> float:
    """The SM clock the stage ran at over the device's maximum (Nsight Compute locks it to
    base: ~0.8 on an H100); 1 when not measured (event mode runs at whatever boost gives)."""
    if not s.sm_clock_hz or not max_sm_mhz:
        return 1.0
    return min(1.0, s.sm_clock_hz / 1e6 / max_sm_mhz)


OVER_PEAK_TOLERANCE = 1.02  # counters and clocks read a little over: 2 % before it is called an error


@dataclass(frozen=True)
class OverPeak:
    """A stage whose model over its measured time passes a device peak: bytes/s and/or FLOP/s
    with the peak they pass (FLOP/s against the peak at the clock it ran); None where within."""

    stage: str
    bytes_per_s: float | None
    peak_bytes_per_s: float | None
    flops_per_s: float | None
    peak_flops_per_s: float | None


def _over_peak(result: ProfileResult, max_sm_mhz: float | None) -> list[OverPeak]:
    """A stage whose model FLOPs or bytes over its measured time exceed the device's peak (at the
    clock it ran) cannot be: its time covers less work than its model (a range timed by one of its
    kernels, work skipped or cached), or the model is wrong. render words it as a ``matching``
    warning; it is never shown as a figure above 100 %."""
    out = []
    for s in result.stages:
        if s.timing.median_ns <= 0:
            continue
        bw = s.peak_bytes_per_s and s.achieved_bytes_per_s > OVER_PEAK_TOLERANCE * s.peak_bytes_per_s
        peak_f = s.peak_flops_per_s * clock_ratio(s, max_sm_mhz) if s.peak_flops_per_s else None
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

"""Event mode's quality warnings, worded: :func:`kprof_mcp.modes.event.quality_warnings` decides
which apply (CPU or unknown device, unlocked clocks, noise, too few runs, durations near CUDA-event
resolution, a moving SM clock); these sentences say them, with the units scaled here."""

from __future__ import annotations

from ..models import Timing

CPU_TIMING = (
    "CPU wall time, no GPU: times say nothing about GPU performance and no roofline or % of peak is given"
)


def unknown_device(note: str | None) -> str:
    return f"unknown device: {note}"


def clocks_not_locked(before: dict, after: dict) -> str:
    return (
        "clocks not locked by kprof: SM clock read "
        f"{before.get('clocks.sm', '?')} MHz before and {after.get('clocks.sm', '?')} MHz after timing "
        f"(max {before.get('clocks.max.sm', '?')} MHz); boost and thermals can move results a few %"
    )


def compute_at_free_clocks(stages: list[str]) -> str:
    return (
        f"compute-bound stage(s) {', '.join(stages)} timed at free clocks: their time follows the "
        "clock the power limit allows, which the reported SM clock does not show (a tensor-core GEMM "
        "ran at a reported 1980 MHz while its times moved 8 %), so the times are not normalised by "
        "it. Compare them with profiles at free clocks only, or lock clocks (clock_control='base', "
        "as root) or use compare_versions"
    )


def noisy_stage(stage: str, t: Timing) -> str:
    return (
        f"stage {stage}: noisy timing, IQR is {100 * t.rel_iqr:.1f}% of the median "
        f"({t.runs} runs, stopped by {t.stop_reason}); compare versions only beyond this spread"
    )


def few_runs(stage: str, runs: int) -> str:
    return f"stage {stage}: only {runs} timed runs (budget reached)"


def near_resolution(stage: str, median_ns: float) -> str:
    return (
        f"stage {stage}: {median_ns / 1e3:.2f} µs is near CUDA-event resolution and launch "
        "overhead; use a larger problem or the ncu modes for kernel-only time"
    )


def clock_moved(stage: str, mhz: list[float]) -> str:
    return (
        f"stage {stage}: the SM clock moved during timing ({min(mhz):.0f}–{max(mhz):.0f} MHz over "
        f"{len(mhz)} batches); times from different clocks are mixed in its samples"
    )


def noisy_plan(rel_iqr: float) -> str:
    return f"whole plan: noisy timing, IQR {100 * rel_iqr:.1f}% of the median"

"""report.md's "Where the time went" (issue 40): ``result.timings`` (measured by
:mod:`kprof_mcp.engine.phases` and the profiling process) as a table, seconds scaled to ms, each
phase's share of the wall time, what no phase covers, and the timing's stopping rule. A result
recorded before it has only the profiling process's phases: one line, as then."""

from __future__ import annotations

from ..models import ProfileResult
from .markdown import table

# What each phase is, in words (a phase not listed is shown by its name).
WORDS = {
    "request_checks": "the request checked before it was queued (package, parameters, baseline)",
    "queue_wait": "waiting in the job queue",
    "device_lock_wait": "waiting for the device's lock",
    "clock_lock": "locking the SM clock (nvidia-smi -lgc; ~0 when kept from an earlier job)",
    "checks_and_setup": "checking the request again, the mode's launch",
    "preparation": "compile, autotune, correctness outside the profiler",
    "plain_pass": "the command run once without a profiler, its steps timed (nsys mode)",
    "runner": "the runner around the profiling process (request, record)",
    "worker_start_handoff_and_write": "starting the process or handing the job to the warm worker; writing its artifacts",
    "import_torch": "importing torch",
    "package_device_and_wait_for_preparation": "loading the package, waiting for the preparation",
    "device_init_inputs_build": "device, inputs, plan",
    "first_run_jit_autotune": "first run (JIT, autotune)",
    "correctness": "correctness check",
    "compiled_ir_tiling": "compiled IR, resources, tiling",
    "launch_timing": "CUDA-event timing (launch included)",
    "warmup": "warm-up runs",
    "timing_window": "timed runs (the timing window)",
    "cupti_start": "CUPTI: the profiler session's start",
    "cupti_stop": "CUPTI: the profiler session's stop",
    "cupti_trace": "CUPTI: the trace exported, read and matched to runs",
    "cupti_export": "CUPTI: the trace exported (torch.profiler's export_chrome_trace)",
    "cupti_read": "CUPTI: the exported trace read into tables",
    "cupti_match": "CUPTI: kernels matched to runs, other streams' kernels found",
    "python_gc": "Python's garbage collection while the CUPTI trace was handled",
    "sm_clock_reads": "SM clock reads (NVML; nvidia-smi without it)",
    "energy_nvml": "energy windows (NVML)",
    "whole_plan_timing": "the whole plan timed",
    "integrity_checks": "integrity checks after timing",
    "timing_other": "timers' set-up and the rest of the timing",
    "mode_after_run": "the mode's after-run (profiler output read)",
    "clock_unlock": "resetting the SM clock (nvidia-smi -rgc; ~0 when kept for the next job)",
    "result_load_and_noise_floor": "result read, noise floor, clock state",
    "analysis": "the diagnosis (assessment, baseline)",
}


def phase_lines(result: ProfileResult) -> list[str]:
    """The section's lines (none without any phase)."""
    t = result.timings or {}
    phases = t.get("phases") or {}
    if not phases:
        if not result.phases_s:
            return []
        return [
            "",
            "Wall time of the profiling process by phase (s): "
            + ", ".join(f"{k} {v:.2f}" for k, v in result.phases_s.items())
            + ".",
        ]
    wall = float(t.get("wall_s") or 0.0)
    child = set(t.get("in_child") or [])
    rows = [
        [
            k,
            WORDS.get(k, ""),
            "profiling process" if k in child else "server",
            f"{v * 1e3:.0f}",
            f"{100 * v / wall:.1f}" if wall > 0 else "n/a",
        ]
        for k, v in phases.items()
    ]
    rows.append(
        [
            "unaccounted",
            "wall time no phase covers",
            "",
            f"{float(t.get('unaccounted_s') or 0) * 1e3:.0f}",
            "",
        ]
    )
    out = [
        "",
        "### Where the time went",
        "",
        f"Wall time {wall * 1e3:.0f} ms from the request's submission to this report's rendering "
        "(result.json's `timings` adds the rendering); each phase measured at its boundaries"
        + (f"; SM clock {t['clock']}" if t.get("clock") else "")
        + ".",
        "",
    ]
    out += table(["Phase", "What", "Where", "ms", "% of wall"], rows)
    stop = t.get("stopping") or {}
    if stop.get("rule"):
        out += ["", f"Stopping rule of the timing: {stop['rule']} (targets: {_targets(stop)})."]
    return out


def _targets(stop: dict) -> str:
    keys = ("min_runs", "target_rel_ci", "target_rel_iqr", "min_window_ms", "budget_ms")
    keys += ("early_min_batches", "early_min_window_ms", "batch_agreement")
    return ", ".join(f"{k} {stop[k]:g}" for k in keys if isinstance(stop.get(k), (int, float)))

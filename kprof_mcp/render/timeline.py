"""report.md sections of the timeline (``nsys``) mode: the tables ``nsys stats`` users know,
stream concurrency, launch order, idle gaps and waves."""

from __future__ import annotations

from ..models import ProfileResult
from .markdown import NA, num, table, us


def timeline_sections(result: ProfileResult) -> list[str]:
    """The ``nsys`` mode's sections of report.md: every table of the recorded timeline."""
    tl = result.timeline
    launch = tl.get("launch") or {}
    out = [
        "## Timeline",
        "",
        f"Engine: {tl.get('engine')}. {tl.get('iterations')} iterations of the whole plan recorded back to back; "
        f"GPU window {us(tl.get('window_ns'))} µs, GPU busy {num(tl.get('gpu_busy_pct'))}% of it. "
        f"Files: `trace.json` (open in https://ui.perfetto.dev or chrome://tracing), `timeline.png`, "
        f"`timeline/*.csv`.",
    ]
    if tl.get("nsys"):
        out.append(f"Nsight Systems: {tl['nsys']}")
    if launch:
        out += [
            "",
            f"**Launch overhead**: {launch.get('verdict')}. Median host launch call "
            f"{us(launch.get('launch_api_median_ns'))} µs, median interval between launches "
            f"{us(launch.get('launch_interval_median_ns'))} µs, median kernel "
            f"{us(launch.get('kernel_median_ns'))} µs, {launch.get('launches')} launches.",
        ]
    out += where_the_wall_time_went(tl.get("idle") or {})
    out += ["", "### Kernels (as `nsys stats` cuda_gpu_kern_sum)"]
    out += table(
        [
            "Time %",
            "Total (µs)",
            "Instances",
            "Avg (µs)",
            "Med (µs)",
            "Min (µs)",
            "Max (µs)",
            "StdDev (µs)",
            "Name",
        ],
        [
            [
                f"{r['time_pct']:.1f}",
                us(r["total_ns"]),
                r["instances"],
                us(r["avg_ns"], 3),
                us(r["med_ns"], 3),
                us(r["min_ns"], 3),
                us(r["max_ns"], 3),
                us(r["std_ns"], 3),
                r["name"],
            ]
            for r in tl.get("kernel_summary", [])
        ],
    )
    out += kernel_activity_table(tl.get("kernel_summary", []))
    out += ["", "### CUDA API (as `nsys stats` cuda_api_sum)"]
    out += table(
        ["Time %", "Total (µs)", "Calls", "Avg (µs)", "Min (µs)", "Max (µs)", "Name"],
        [
            [
                f"{r['time_pct']:.1f}",
                us(r["total_ns"]),
                r["instances"],
                us(r["avg_ns"], 3),
                us(r["min_ns"], 3),
                us(r["max_ns"], 3),
                r["name"],
            ]
            for r in tl.get("api_summary", [])[:15]
        ],
    )
    out += ["", "### Memory operations"]
    mem = tl.get("memop_summary", [])
    out += (
        table(
            ["Total (µs)", "Count", "Avg (µs)", "Name"],
            [[us(r["total_ns"]), r["instances"], us(r["avg_ns"], 3), r["name"]] for r in mem],
        )
        if mem
        else ["None in the recorded iterations."]
    )
    out += ["", "### Stages (ranges `kprof_<stage>`)"]
    out += table(
        [
            "Stage",
            "Kernels/iteration",
            "GPU kernel time (µs, median)",
            "GPU span (µs, median)",
            "Host range (µs, median)",
            "Streams",
        ],
        [
            [
                r["stage"],
                r["kernels_per_iteration"],
                us(r["gpu_time_ns_median"]),
                us(r["gpu_span_ns_median"]),
                us(r["cpu_range_ns_median"]),
                ", ".join(r["streams"]) or NA,
            ]
            for r in tl.get("stages", [])
        ],
    )
    out += ["", "### Stream concurrency"]
    out += (
        table(
            ["Stream", "Kernels", "Busy (µs)", "Overlapping other streams (µs)", "Overlap %"],
            [
                [r["stream"], r["kernels"], us(r["busy_ns"]), us(r["overlap_ns"]), f"{r['overlap_pct']:.1f}"]
                for r in tl.get("streams", [])
            ],
        )
        if tl.get("streams")
        else ["No GPU streams recorded."]
    )
    if result.plan_total is not None and len(result.stages) > 1:
        serial = sum(s.timing.median_ns for s in result.stages)
        out.append("")
        out.append(
            f"Whole plan per iteration: {us(result.plan_total.median_ns)} µs (GPU span) vs "
            f"{us(serial)} µs if the stages ran one after another "
            f"({serial / result.plan_total.median_ns:.2f}× )."
            if result.plan_total.median_ns
            else ""
        )
    out += ["", "### Launch order (iteration 0, host order; device order in the last column)"]
    order = tl.get("launch_order", [])
    out += (
        table(
            [
                "#",
                "Kernel",
                "Stage",
                "Stream",
                "Host launch at (µs)",
                "API (µs)",
                "GPU start at (µs)",
                "Queue delay (µs)",
                "Kernel (µs)",
                "Device order",
            ],
            [
                [
                    r["launch"],
                    r["kernel"],
                    r["stage"] or NA,
                    r["stream"],
                    us(r["host_launch_at_ns"]),
                    us(r["api_ns"]),
                    us(r["gpu_start_at_ns"]),
                    us(r["queue_delay_ns"]),
                    us(r["kernel_ns"], 3),
                    r["device_order"],
                ]
                for r in order[:20]
            ],
        )
        if order
        else ["No kernel launches recorded."]
    )
    if len(order) > 20:
        out += ["", f"({len(order) - 20} more in `timeline/launch_order.csv`.)"]
    out += ["", "### GPU idle gaps (largest first)"]
    out += (
        table(
            ["At (µs)", "Gap (µs)", "After", "Before"],
            [[us(g["at_ns"]), us(g["gap_ns"], 3), g["after"], g["before"]] for g in tl.get("gaps", [])],
        )
        if tl.get("gaps")
        else ["None: the GPU was never idle inside the window."]
    )
    out += ["", "### Grid vs SMs (waves)"]
    out += (
        table(
            ["Kernel", "Grid blocks", "SMs", "Blocks/SM", "Full waves", "Last-wave efficiency", "Note"],
            [
                [
                    w["kernel"],
                    w["grid_blocks"],
                    w["sm_count"],
                    f"{w['blocks_per_sm']:.2f}",
                    w["full_waves"],
                    f"{w['last_wave_efficiency']:.2f}",
                    w["note"] or "",
                ]
                for w in tl.get("waves", [])
            ],
        )
        if tl.get("waves")
        else ["n/a (no GPU kernels or SM count)."]
    )
    out.append("")
    out.append(
        "Waves assume one resident block per SM per wave slot (blocks ÷ SMs); with several resident "
        "blocks per SM the real wave count is lower."
    )
    out.append("")
    return out


_PART_LABELS = {
    "first_call": "one-off calls (module loading, first launches)",
    "copy_h2d": "host-to-device copy calls",
    "sync": "after a sync or device-to-host copy (the GPU drained; the host's next work could not overlap)",
    "launch": "launch calls and issuing the next operation (< 100 µs between calls)",
    "other_api": "other CUDA calls",
    "host": "host work outside CUDA (≥ 100 µs at a stretch)",
}


def where_the_wall_time_went(idle: dict) -> list[str]:
    """The idle breakdown (kprof_mcp.analysis.idle): the window's wall time as GPU busy and GPU idle
    by what the host was doing."""
    if not idle.get("window_ns"):
        return []
    w, occ = float(idle["window_ns"]), max(1, int(idle.get("occurrences") or 1))
    ev = idle.get("evidence") or {}

    def row(label: str, ns: float) -> list:
        return [label, us(ns), us(ns / occ), f"{100.0 * ns / w:.1f}"]

    rows = [row("GPU busy (kernels and copies)", float(idle.get("busy_ns") or 0.0))]
    rows += [
        row(f"GPU idle: {_PART_LABELS[k]}", float(v))
        for k, v in (idle.get("parts_ns") or {}).items()
        if v and k in _PART_LABELS
    ]
    out = [
        "",
        "### Where the wall time went",
        f"Window {us(w)} µs ({occ} occurrence(s) of the measured work), {idle.get('gaps')} idle gap(s). Each instant "
        "the GPU idled is given to what the host was doing then (docs/diagnosis-calibration.md, timeline "
        "accounting).",
    ]
    out += table(["Part", "Total (µs)", "Per occurrence (µs)", "% of wall"], rows)
    rp = idle.get("replay") or {}
    if rp.get("base_ns") and rp.get("recorded_ns"):
        out += [
            "",
            f"Without a profiler the step took {us(rp['plain_ns'])} µs (the plain pass: the command run once more, "
            f"its steps timed by their ranges), {us(rp['recorded_ns'])} µs as traced "
            f"({float(rp['recorded_ns']) / float(rp['plain_ns']):.2f}×: the tracer's cost on the host). The "
            "what-ifs are replayed with the host's time scaled by "
            f"{float(rp['host_scale']):.2f} to the plain step and their gains taken against it.",
        ]
    calls = []
    for key, label in (
        ("sync_calls", "Syncs"),
        ("first_call_calls", "One-off calls"),
        ("other_calls", "Other calls"),
    ):
        if ev.get(key):
            calls.append(
                f"{label}: "
                + ", ".join(f"{r['call']} ×{r['count']} ({us(r['total_ns'])} µs)" for r in ev[key][:4])
            )
    if ev.get("sync_ops"):
        calls.append("Syncs made by: " + ", ".join(f"{r['op']} ×{r['count']}" for r in ev["sync_ops"]))
    if ev.get("h2d_copies"):
        calls.append(
            f"Host-to-device copies: {ev['h2d_copies']} ({num(ev.get('h2d_bytes', 0) / 1e6)} MB), "
            f"{us(ev.get('h2d_exposed_ns'))} µs of them with no kernel running"
        )
    if calls:
        out += [""] + [f"- {c}" for c in calls]
    out += _source_lines(idle.get("sources") or {})
    return out


_PART_SHORT = {
    "first_call": "one-off calls",
    "copy_h2d": "host-to-device copies",
    "sync": "after a sync",
    "launch": "launches",
    "other_api": "other CUDA calls",
    "host": "host work",
}


def source_words(src: dict | None) -> str:
    """An idle cause's line for its trigger (analysis.idle_sources), or nothing without backtraces."""
    if not src or not src.get("line"):
        return ""
    op = f" via {src['op']}" if src.get("op") else ""
    pct = f"{100 * float(src.get('share') or 0):.0f}%"
    if src.get("by") == "samples":  # the host's sampled Python stacks (idle_sources.sampled_host)
        return f"; source_line={src['line']}{op} in {src.get('calls', 0)} of {src.get('samples', 0)} Python samples ({pct})"
    where = f"between {src['after']} and {src['line']}" if src.get("after") else f"{src['line']}{op}"
    return f"; source_line={where} x{src.get('calls', 0)}, {pct} of its idle time"


def _source_lines(sources: dict) -> list[str]:
    """Each idle part's Python line (kprof_mcp.analysis.idle_sources): the line whose CUDA calls own
    most of that idle time, from a recording with Python backtraces (python_backtrace=True)."""
    rows = []
    for part, label in _PART_SHORT.items():
        src = sources.get(part)
        if not src or not src.get("line"):
            continue
        sampled = src.get("by") == "samples"
        op = f", {src['op']}" if src.get("op") and (part != "host" or sampled) else ""
        where = (
            f"the host's own Python between `{src['after']}` and `{src['line']}`"
            if part == "host" and src.get("after")
            else f"`{src['line']}`{op}"
            + (f" (sampled: {src.get('samples', 0)} Python samples)" if sampled else "")
        )
        rows.append(
            [
                label,
                where,
                str(src.get("calls", 0)),
                us(float(src.get("idle_ns") or 0.0)),
                f"{100 * float(src.get('share') or 0):.0f}",
                str(src.get("lines", 1)),
            ]
        )
    if not rows:
        return []
    return [
        "",
        "Where in the Python code (each idle part's CUDA calls, from Nsight Systems' Python backtraces: the "
        "line whose calls own most of that idle time; host work is Python between two CUDA calls, named by them, "
        "or, where the host's Python stack was sampled, by the line it was running most; Calls counts those samples):",
    ] + table(["Part", "Line", "Calls", "Idle owned (µs)", "% of the part's", "Lines seen"], rows)


def kernel_activity_table(rows: list[dict]) -> list[str]:
    """What the GPU's units did while each kernel ran (Nsight Systems' GPU metrics samples, % of peak), for the
    kernels that have samples; nothing when the timeline was recorded without them."""
    have = [r for r in rows if r.get("activity")][:15]
    if not have:
        return []

    def pct(a: dict, k: str) -> str:
        return f"{a[k]:.1f}" if a.get(k) is not None else "n/a"

    out = ["", "### What the GPU's units did while each kernel ran (GPU metrics samples, % of peak)"]
    out += table(
        ["DRAM read", "DRAM write", "SM issue", "Warps in flight", "Tensor", "Samples", "Name"],
        [
            [
                pct(a, "dram_read_pct"),
                pct(a, "dram_write_pct"),
                pct(a, "issue_pct"),
                pct(a, "warps_pct"),
                pct(a, "tensor_pct"),
                int(a.get("samples") or 0),
                r["name"],
            ]
            for r in have
            for a in [r["activity"]]
        ],
    )
    return out

"""The one renderer: Profiler Output Contract, full ``report.md`` and devlog entries.

Only this module formats markdown tables; it reads result models and never measures.
Values that a mode could not measure are printed ``n/a``, never ``0``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from . import analysis
from .models import Diagnosis, ProfileResult, StageResult

NA = "n/a"


def _num(v: float | None, digits: int = 1) -> str:
    return NA if v is None else f"{v:.{digits}f}"


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def config_columns(result: ProfileResult) -> list[str]:
    """The kernel's own parameters, then ``dtype``."""
    return [k for k in result.param_order if k != "dtype"] + ["dtype"]


@dataclass(frozen=True)
class StageView:
    stage: StageResult
    diagnosis: Diagnosis | None  # None when nothing can be classified (CPU timing)
    key_issue: str


def stage_view(s: StageResult, device_kind: str, timeline: dict[str, Any] | None = None) -> StageView:
    if device_kind != "cuda" or not s.peak_bytes_per_s:
        issue = ("CPU timing (Triton interpreter): no GPU roofline" if device_kind != "cuda"
                 else "unknown device: no peaks, no roofline")
        return StageView(s, None, issue)
    m = s.metrics()
    d = Diagnosis.from_analysis(analysis.diagnose(m))
    counters = s.counters_measured
    if counters:
        issue = d.opportunities[0].trigger if d.opportunities else "all measured metrics healthy"
    elif timeline and (timeline.get("launch") or {}).get("launch_bound"):
        issue = (f"launch-bound: GPU busy {_num(timeline['launch'].get('gpu_busy_pct'))}% of the window, "
                 f"kernels {_num(timeline['launch']['kernel_median_ns'] / 1e3, 2)} µs vs launches every "
                 f"{_num((timeline['launch'].get('launch_interval_median_ns') or 0) / 1e3, 2)} µs")
    else:
        bw = s.pct_peak_bandwidth
        fl = s.pct_peak_flops
        unit = "tensor" if s.tensor_cores else "FP32"
        issue = (f"roofline est.: {_num(bw)}% of peak DRAM BW, {_num(fl)}% of {unit} peak "
                 f"(model bytes/FLOPs; no counters in this mode)")
    return StageView(s, d, issue)


def _overall_gain(stage_gain_pct: float, share: float) -> float:
    """Amdahl: a stage taking ``share`` of the time getting ``g`` % faster."""
    g = stage_gain_pct / 100.0
    return 100.0 * (1.0 / (1.0 - share + share / (1.0 + g)) - 1.0)


def ranked_opportunities(result: ProfileResult, views: list[StageView]) -> list[tuple[str, float, str]]:
    total = sum(v.stage.timing.median_ns for v in views) or 1.0
    multi = len(views) > 1
    out = []
    for v in views:
        if v.diagnosis is None:
            continue
        share = v.stage.timing.median_ns / total
        # Both kinds carry name, est_gain_pct and trigger.
        opps = [*v.diagnosis.opportunities, *analysis.rule_opportunities(v.stage.ncu_rules)]
        for o in opps:
            name = f"[{v.stage.name}] {o.name}" if multi else o.name
            out.append((name, _overall_gain(o.est_gain_pct, share), o.trigger))
    if result.timeline:  # whole-plan findings: already gains of the plan
        out += [(o.name, o.est_gain_pct, o.trigger, 1)
                for o in analysis.timeline_opportunities(result.timeline, result.plan_kind)]
    # Ties (capped gains) go to what the timeline saw: it measured the plan, the rest is estimated.
    out.sort(key=lambda t: (t[1], t[3] if len(t) > 3 else 0), reverse=True)
    return [t[:3] for t in out]


def render_contract(result: ProfileResult, baseline: ProfileResult | None = None) -> str:
    """The Profiler Output Contract, in SPEC.md's exact shape."""
    views = [stage_view(s, result.device.kind, result.timeline) for s in result.stages]
    cols = config_columns(result)
    lines = [f"## Profile: {result.kernel} {result.version}", "", "### Configuration"]
    lines += _table(cols, [[result.params[c] for c in cols]])
    lines += ["", "### Stages"]
    rows = []
    for v in views:
        s = v.stage
        rows.append([s.name, f"{s.timing.median_ns / 1e3:.2f}", _num(s.tc_pct), _num(s.dram_pct),
                     _num(s.occupancy_pct), v.diagnosis.bottleneck if v.diagnosis else NA, v.key_issue])
    lines += _table(["Stage", "Duration (us)", "TC%", "DRAM%", "Occ%", "Bottleneck", "Key Issue"], rows)

    main = max(views, key=lambda v: v.stage.timing.median_ns)
    lines.append("")
    if main.diagnosis is None:
        reason = ("CPU timing (no GPU): no roofline or counters to classify with"
                  if result.device.kind != "cuda" else "device not in devices.json: no peaks to classify with")
        lines.append(f"**Bottleneck**: {NA} ({reason})")
        lines.append(f"**Root cause**: {NA}. Run on a GPU listed in devices.json for a diagnosis.")
    else:
        d = main.diagnosis
        lines.append(f"**Bottleneck**: {d.bottleneck}" + (" (+ locality issue: L2 hit < 80%)" if d.locality_issue else ""))
        cause = d.root_cause
        if not main.stage.counters_measured:
            region = main.stage.roofline_region
            cause = (f"{cause.rstrip('.')} (estimated from the FLOP/byte model; intensity "
                     f"{_num(main.stage.intensity_flop_per_byte, 2)} FLOP/B vs ridge "
                     f"{_num(main.stage.ridge_flop_per_byte, 0)} FLOP/B: {region}-bound region).")
        launch = (result.timeline or {}).get("launch") or {}
        if launch.get("launch_bound"):
            cause = (f"The plan is launch-bound: the GPU is busy {_num(launch.get('gpu_busy_pct'))}% of the time, "
                     f"and each kernel ({_num(launch['kernel_median_ns'] / 1e3, 2)} µs) is shorter than the gap "
                     f"between host launches ({_num((launch.get('launch_interval_median_ns') or 0) / 1e3, 2)} µs). "
                     "Per-kernel tuning cannot help until launches are fused or captured in a CUDA graph.")
        lines.append(f"**Root cause**: {cause}")
    lines += ["", "### Top 3 Opportunities (ranked by estimated impact)"]
    opps = ranked_opportunities(result, views)[:3]
    if opps:
        lines += [f"{i}. {name} — est. {gain:.1f}% gain — trigger: {trigger}" for i, (name, gain, trigger) in
                  enumerate(opps, 1)]
    elif main.diagnosis is None:
        lines.append(f"1. {NA} — no GPU measurements to rank opportunities from")
    else:
        lines.append("1. None triggered — every measured metric is within its healthy range")
    lines += ["", "### vs Baseline (if applicable)"]
    lines += render_baseline_table(result, baseline)
    return "\n".join(lines) + "\n"


def _change(prev: float | None, cur: float | None, lower_is_better: bool, noise: float = 0.0) -> str:
    if prev is None or cur is None or prev == 0:
        return NA
    pct = 100.0 * (cur - prev) / prev
    txt = f"{pct:+.1f}%"
    if lower_is_better and cur > 0:
        speed = prev / cur
        txt += f" ({speed:.2f}x {'faster' if speed >= 1 else 'slower'})"
    if abs(pct) <= 100.0 * noise:
        txt += " (within noise)"
    return txt


def render_baseline_table(result: ProfileResult, baseline: ProfileResult | None) -> list[str]:
    header = ["Metric", "Previous", "Current", "Change"]
    if baseline is None:
        return _table(header, [])
    rows: list[list[Any]] = []
    noise = max([s.timing.rel_iqr for s in result.stages + baseline.stages] or [0.0])
    pt, ct = baseline.total_time_ns(), result.total_time_ns()
    rows.append(["Duration (us)", f"{pt / 1e3:.2f}", f"{ct / 1e3:.2f}", _change(pt, ct, True, noise)])
    prev_stages = {s.name: s for s in baseline.stages}
    for s in result.stages:
        p = prev_stages.get(s.name)
        if p is None:
            continue
        if len(result.stages) > 1:
            rows.append([f"{s.name} duration (us)", f"{p.timing.median_ns / 1e3:.2f}",
                         f"{s.timing.median_ns / 1e3:.2f}", _change(p.timing.median_ns, s.timing.median_ns, True, noise)])
        rows.append([f"{s.name} TFLOP/s" if len(result.stages) > 1 else "Achieved TFLOP/s",
                     f"{p.achieved_flops_per_s / 1e12:.3f}", f"{s.achieved_flops_per_s / 1e12:.3f}",
                     _change(p.achieved_flops_per_s, s.achieved_flops_per_s, False, noise)])
        rows.append([f"{s.name} GB/s" if len(result.stages) > 1 else "Achieved GB/s",
                     f"{p.achieved_bytes_per_s / 1e9:.1f}", f"{s.achieved_bytes_per_s / 1e9:.1f}",
                     _change(p.achieved_bytes_per_s, s.achieved_bytes_per_s, False, noise)])
        for label, a, b in (("TC%", p.tc_pct, s.tc_pct), ("DRAM%", p.dram_pct, s.dram_pct),
                            ("Occ%", p.occupancy_pct, s.occupancy_pct)):
            if a is not None or b is not None:
                rows.append([label, _num(a), _num(b), NA if a is None or b is None else f"{b - a:+.1f} pts"])
    lines = _table(header, rows)
    notes = []
    if baseline.kernel != result.kernel:
        notes.append(f"baseline is kernel {baseline.kernel!r}, not {result.kernel!r}")
    if baseline.params != result.params:
        diff = {k: (baseline.params.get(k), result.params.get(k)) for k in set(baseline.params) | set(result.params)
                if baseline.params.get(k) != result.params.get(k)}
        notes.append(f"parameters differ (previous, current): {diff}")
    if baseline.device.name != result.device.name:
        notes.append(f"devices differ: {baseline.device.name} vs {result.device.name}")
    if baseline.mode != result.mode:
        notes.append(f"modes differ: {baseline.mode} vs {result.mode}")
    lines.append("")
    lines.append(f"Baseline: {baseline.kernel} {baseline.version} ({baseline.profile_dir}); timing spread up to "
                 f"{100 * noise:.1f}% IQR/median" + ("; " + "; ".join(notes) if notes else "") + ".")
    return lines


def render_report(result: ProfileResult, baseline: ProfileResult | None = None,
                  others: list[ProfileResult] | None = None) -> str:
    """``report.md``: the contract, then (with counters) the Nsight Compute metrics, measured-vs-
    model roofline, rule results and a comparison across versions; then the roofline, timing,
    resources, tiling, device and warnings."""
    out = [render_contract(result, baseline).rstrip("\n"), "", "---", "", f"# Details ({result.mode} mode)", ""]
    d = result.device
    if any(s.counters_measured for s in result.stages):
        out += _nsight_sections(result, others or [])
    if result.timeline:
        out += _timeline_sections(result)
    out.append("## Roofline (model FLOPs and bytes over measured median time)")
    rows = []
    for s in result.stages:
        rows.append([s.name, f"{s.flops:.4g}", f"{s.bytes_model:.4g}", _num(s.intensity_flop_per_byte, 3),
                     _num(s.ridge_flop_per_byte, 1), f"{s.achieved_flops_per_s / 1e12:.3f}",
                     f"{s.achieved_bytes_per_s / 1e9:.1f}", _num(s.pct_peak_flops), _num(s.pct_peak_bandwidth),
                     s.roofline_region or NA, _num(s.pct_of_roofline)])
    out += _table(["Stage", "FLOPs", "Bytes (model)", "FLOP/B", "Ridge FLOP/B", "TFLOP/s", "GB/s",
                   "% peak FLOP/s", "% peak BW", "Region", "% of roofline"], rows)
    if d.kind == "cuda" and result.stages and result.stages[0].peak_bytes_per_s:
        s0 = result.stages[0]
        out.append("")
        out.append(f"Peaks ({d.spec_name}, devices.json): {s0.peak_bytes_per_s / 1e9:.0f} GB/s; "
                   + ", ".join(f"{s.name}: {_num((s.peak_flops_per_s or 0) / 1e12, 1)} TFLOP/s "
                               f"({'tensor cores' if s.tensor_cores else 'FP32 SIMT'}, {s.dtype})" for s in result.stages)
                   + ". Bytes are the model's minimum traffic: measured DRAM traffic can only be higher.")
    out += ["", "## Timing"]
    if result.mode in ("annotation", "ncu"):
        out.append("Duration is Nsight Compute's gpu__time_duration of each profiled launch (kernel time only, "
                   "no launch overhead), under the clock and cache control stated below; it is not comparable "
                   "with event-mode times at boost clocks.")
        out.append("")
    trows = []
    for s in result.stages:
        t = s.timing
        trows.append([s.name, t.method, t.runs, f"{t.median_ns / 1e3:.3f}", f"{t.iqr_ns / 1e3:.3f}",
                      f"{100 * t.rel_iqr:.2f}", f"{t.min_ns / 1e3:.3f}", t.stop_reason, "yes" if t.l2_flushed else "no"])
    if result.plan_total is not None:
        t = result.plan_total
        trows.append(["(whole plan)", t.method, t.runs, f"{t.median_ns / 1e3:.3f}", f"{t.iqr_ns / 1e3:.3f}",
                      f"{100 * t.rel_iqr:.2f}", f"{t.min_ns / 1e3:.3f}", t.stop_reason, "yes" if t.l2_flushed else "no"])
    out += _table(["Stage", "Method", "Runs", "Median (us)", "IQR (us)", "IQR/median %", "Min (us)", "Stopped by",
                   "L2 flushed"], trows)
    out.append("")
    out.append("Raw samples: `samples.csv` (ns)." + (" Event timing includes launch overhead of the Python call."
                                                     if result.mode == "event" else ""))
    if result.phases_s:
        out.append("")
        out.append("Wall time of the profiling process by phase (s): "
                   + ", ".join(f"{k} {v:.2f}" for k, v in result.phases_s.items()) + ".")
    out += ["", "## Compiled kernel resources"]
    rrows = []
    for s in result.stages:
        r = s.resources
        rrows.append([s.name, (r.kernel_name if r else None) or NA, _num(r.registers_per_thread if r else None, 0),
                      _num(r.local_spill_bytes if r else None, 0), _num(r.shared_memory_bytes if r else None, 0),
                      _num(r.num_warps if r else None, 0), _num(r.num_stages if r else None, 0),
                      s.grid_blocks if s.grid_blocks is not None else NA, _num(s.waves_per_sm, 2)])
    out += _table(["Stage", "Kernel", "Regs/thread", "Spill bytes/thread", "Shared mem (B)", "Warps", "Stages",
                   "Grid blocks", "Blocks/SM"], rrows)
    if any(s.resources is None for s in result.stages):
        out.append("")
        out.append("n/a: no compiled GPU kernel (CPU interpreter run) — IR and resources exist only for GPU compiles.")
    out += ["", "## Tiling"]
    for s in result.stages:
        out.append(f"- {s.name}: `{json.dumps(s.tiling, default=str) if s.tiling else NA}`")
    out += ["", "## Device, clocks and versions"]
    out += _table(["Field", "Value"], [
        ["device", d.name], ["kind", d.kind], ["table entry", d.spec_name or f"{NA} ({d.spec_note})"],
        ["SMs", d.sm_count if d.sm_count is not None else NA],
        ["L2 (bytes)", d.l2_bytes if d.l2_bytes is not None else NA],
        ["clock control", d.clock_control], ["clocks before", json.dumps(d.clocks_before) if d.clocks_before else NA],
        ["clocks after", json.dumps(d.clocks_after) if d.clocks_after else NA],
        ["torch", d.torch_version], ["triton", d.triton_version], ["CUDA", d.cuda_version or NA],
        ["driver", d.driver_version or NA], ["python", d.python_version], ["TRITON_INTERPRET", d.triton_interpret],
    ])
    out += ["", "## Correctness", "Checked against the package reference before timing: "
            + ", ".join(f"output {o['index']}: rel. L2 error {o.get('rel_l2_error', float('nan')):.3g} "
                        f"(tolerance {result.correctness.get('tolerance_rel_l2')})"
                        for o in result.correctness.get("outputs", []))]
    out += ["", "## Warnings"]
    out += [f"- {w}" for w in result.warnings] or ["- none"]
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- timeline

def _us(v: float | None, digits: int = 2) -> str:
    return NA if v is None else f"{v / 1e3:.{digits}f}"


def _timeline_sections(result: ProfileResult) -> list[str]:
    tl = result.timeline
    launch = tl.get("launch") or {}
    out = ["## Timeline", "",
           f"Engine: {tl.get('engine')}. {tl.get('iterations')} iterations of the whole plan recorded back to back; "
           f"GPU window {_us(tl.get('window_ns'))} µs, GPU busy {_num(tl.get('gpu_busy_pct'))}% of it. "
           f"Files: `trace.json` (open in https://ui.perfetto.dev or chrome://tracing), `timeline.png`, "
           f"`timeline/*.csv`."]
    if tl.get("nsys"):
        out.append(f"Nsight Systems: {tl['nsys']}")
    if launch:
        out += ["", f"**Launch overhead**: {launch.get('verdict')}. Median host launch call "
                    f"{_us(launch.get('launch_api_median_ns'))} µs, median interval between launches "
                    f"{_us(launch.get('launch_interval_median_ns'))} µs, median kernel "
                    f"{_us(launch.get('kernel_median_ns'))} µs, {launch.get('launches')} launches."]
    out += ["", "### Kernels (as `nsys stats` cuda_gpu_kern_sum)"]
    out += _table(["Time %", "Total (µs)", "Instances", "Avg (µs)", "Med (µs)", "Min (µs)", "Max (µs)", "StdDev (µs)",
                   "Name"], [[f"{r['time_pct']:.1f}", _us(r["total_ns"]), r["instances"], _us(r["avg_ns"], 3),
                              _us(r["med_ns"], 3), _us(r["min_ns"], 3), _us(r["max_ns"], 3), _us(r["std_ns"], 3),
                              r["name"]] for r in tl.get("kernel_summary", [])])
    out += ["", "### CUDA API (as `nsys stats` cuda_api_sum)"]
    out += _table(["Time %", "Total (µs)", "Calls", "Avg (µs)", "Min (µs)", "Max (µs)", "Name"],
                  [[f"{r['time_pct']:.1f}", _us(r["total_ns"]), r["instances"], _us(r["avg_ns"], 3),
                    _us(r["min_ns"], 3), _us(r["max_ns"], 3), r["name"]] for r in tl.get("api_summary", [])[:15]])
    out += ["", "### Memory operations"]
    mem = tl.get("memop_summary", [])
    out += _table(["Total (µs)", "Count", "Avg (µs)", "Name"],
                  [[_us(r["total_ns"]), r["instances"], _us(r["avg_ns"], 3), r["name"]] for r in mem]) if mem else [
        "None in the recorded iterations."]
    out += ["", "### Stages (ranges `kprof_<stage>`)"]
    out += _table(["Stage", "Kernels/iteration", "GPU kernel time (µs, median)", "GPU span (µs, median)",
                   "Host range (µs, median)", "Streams"],
                  [[r["stage"], r["kernels_per_iteration"], _us(r["gpu_time_ns_median"]), _us(r["gpu_span_ns_median"]),
                    _us(r["cpu_range_ns_median"]), ", ".join(r["streams"]) or NA] for r in tl.get("stages", [])])
    out += ["", "### Stream concurrency"]
    out += _table(["Stream", "Kernels", "Busy (µs)", "Overlapping other streams (µs)", "Overlap %"],
                  [[r["stream"], r["kernels"], _us(r["busy_ns"]), _us(r["overlap_ns"]), f"{r['overlap_pct']:.1f}"]
                   for r in tl.get("streams", [])]) if tl.get("streams") else ["No GPU streams recorded."]
    if result.plan_total is not None and len(result.stages) > 1:
        serial = sum(s.timing.median_ns for s in result.stages)
        out.append("")
        out.append(f"Whole plan per iteration: {_us(result.plan_total.median_ns)} µs (GPU span) vs "
                   f"{_us(serial)} µs if the stages ran one after another "
                   f"({serial / result.plan_total.median_ns:.2f}× )." if result.plan_total.median_ns else "")
    out += ["", "### Launch order (iteration 0, host order; device order in the last column)"]
    order = tl.get("launch_order", [])
    out += _table(["#", "Kernel", "Stage", "Stream", "Host launch at (µs)", "API (µs)", "GPU start at (µs)",
                   "Queue delay (µs)", "Kernel (µs)", "Device order"],
                  [[r["launch"], r["kernel"], r["stage"] or NA, r["stream"], _us(r["host_launch_at_ns"]),
                    _us(r["api_ns"]), _us(r["gpu_start_at_ns"]), _us(r["queue_delay_ns"]), _us(r["kernel_ns"], 3),
                    r["device_order"]] for r in order[:20]]) if order else ["No kernel launches recorded."]
    if len(order) > 20:
        out.append(f"({len(order) - 20} more in `timeline/launch_order.csv`.)")
    out += ["", "### GPU idle gaps (largest first)"]
    out += _table(["At (µs)", "Gap (µs)", "After", "Before"],
                  [[_us(g["at_ns"]), _us(g["gap_ns"], 3), g["after"], g["before"]] for g in tl.get("gaps", [])]) \
        if tl.get("gaps") else ["None: the GPU was never idle inside the window."]
    out += ["", "### Grid vs SMs (waves)"]
    out += _table(["Kernel", "Grid blocks", "SMs", "Blocks/SM", "Full waves", "Last-wave efficiency", "Note"],
                  [[w["kernel"], w["grid_blocks"], w["sm_count"], f"{w['blocks_per_sm']:.2f}", w["full_waves"],
                    f"{w['last_wave_efficiency']:.2f}", w["note"] or ""] for w in tl.get("waves", [])]) \
        if tl.get("waves") else ["n/a (no GPU kernels or SM count)."]
    out.append("")
    out.append("Waves assume one resident block per SM per wave slot (blocks ÷ SMs); with several resident "
               "blocks per SM the real wave count is lower.")
    out.append("")
    return out


# ----------------------------------------------------------------------------- Nsight Compute

def _mb(v: float | None) -> str:
    return NA if v is None else f"{v / 1e6:.2f}"


def _nsight_sections(result: ProfileResult, others: list[ProfileResult]) -> list[str]:
    out = ["## Nsight Compute metrics per stage"]
    rows = []
    for s in result.stages:
        rows.append([s.name, ", ".join(s.ncu_kernels) or NA, f"{s.timing.median_ns / 1e3:.2f}",
                     _num(s.sm_clock_hz / 1e6 if s.sm_clock_hz else None, 0), _num(s.tc_pct), _num(s.sm_pct),
                     _num(s.dram_pct), _num(s.occupancy_pct), _num(s.theoretical_occupancy_pct), _num(s.l2_hit_pct),
                     _num(s.measured_local_bytes, 0), _num(s.measured_waves_per_sm, 2),
                     _num(s.registers_per_thread, 0), _num(s.shared_mem_per_block_bytes, 0), _mb(s.dram_bytes)])
    out += _table(["Stage", "Kernel(s)", "Duration (us)", "SM MHz", "TC%", "SM%", "DRAM%", "Occ% achieved",
                   "Occ% theoretical", "L2 hit%", "Local (spill) bytes", "Waves/SM", "Regs/thread",
                   "Smem/block (B)", "DRAM MB"], rows)
    missing = [f"{s.name}: {', '.join(s.missing_metrics)}" for s in result.stages if s.missing_metrics]
    out.append("")
    out.append("Missing metrics (n/a, never 0): " + ("; ".join(missing) if missing else "none") + ".")
    out += ["", "## Roofline: measured traffic vs the FLOP/byte model"]
    rows = []
    for s in result.stages:
        meas_int = s.flops / s.dram_bytes if s.dram_bytes else None
        meas_bw = s.measured_dram_bytes_per_s
        rows.append([s.name, f"{s.flops:.4g}", _mb(s.bytes_model), _mb(s.dram_bytes), _num(s.over_fetch_ratio, 2),
                     _num(s.intensity_flop_per_byte, 1), _num(meas_int, 1), _num(s.ridge_flop_per_byte, 1),
                     f"{s.achieved_flops_per_s / 1e12:.2f}", _num(meas_bw / 1e9 if meas_bw else None, 1),
                     _num(100 * meas_bw / s.peak_bytes_per_s if meas_bw and s.peak_bytes_per_s else None)])
    out += _table(["Stage", "FLOPs (model)", "Model MB", "Measured DRAM MB", "Measured ÷ model", "FLOP/B (model)",
                   "FLOP/B (measured)", "Ridge FLOP/B", "TFLOP/s", "Measured GB/s", "% peak BW (measured)"], rows)
    out.append("")
    out.append("Measured ÷ model > 1.25 flags over-fetch (uncoalesced or strided access, data re-read after "
               "L2 eviction); < 1 means part of the inputs were served from L2 (ncu flushes caches before "
               "each pass, so that reuse happened inside the launch).")
    out += ["", "## Nsight Compute rule results"]
    rows = []
    for s in result.stages:
        for r in s.ncu_rules:
            if r.get("type") in ("OK", "NONE") and r.get("speedup_pct") is None:
                continue
            est = NA if r.get("speedup_pct") is None else f"{r['speedup_pct']:.1f}% ({r.get('speedup_type')})"
            msg = (r.get("message") or "").replace("|", "/").replace("\n", " ")
            rows.append([s.name, f"{r.get('section')}/{r.get('rule')}", r.get("type"), est,
                         (r.get("title") + ": " if r.get("title") else "") + (msg[:400] + ("…" if len(msg) > 400 else ""))])
    out += _table(["Stage", "Section/rule", "Type", "Est. speedup", "Finding"], rows) if rows else [
        "No rule fired with a finding (or the report has no rule results)."]
    out.append("")
    out.append("Est. speedup is Nsight Compute's: the share of runtime it expects to save (global: of the whole "
               "kernel; local: of the part the rule looks at). Global estimates also rank in the contract's "
               "opportunities, converted to a gain (1/(1 − saving) − 1).")
    if others:
        out += ["", f"## Versions compared ({result.mode} mode, same parameters, latest profile of each)"]
        rows = []
        for r in sorted(others + [result], key=lambda x: x.version):
            main = max(r.stages, key=lambda st: st.timing.median_ns)
            view = stage_view(main, r.device.kind)
            mark = " (this profile)" if r is result else ""
            rows.append([r.version + mark, f"{r.total_time_ns() / 1e3:.2f}", _num(main.tc_pct), _num(main.sm_pct),
                         _num(main.dram_pct), _num(main.occupancy_pct), _num(main.l2_hit_pct),
                         _num(main.over_fetch_ratio, 2), _num(main.registers_per_thread, 0),
                         json.dumps(main.tiling, default=str) if main.tiling else NA,
                         view.diagnosis.bottleneck if view.diagnosis else NA])
        out += _table(["Version", "Duration (us)", "TC%", "SM%", "DRAM%", "Occ%", "L2 hit%", "DRAM ÷ model",
                       "Regs", "Tiling", "Bottleneck"], rows)
    p = result.profiler
    if p:
        out += ["", "## Profiler run"]
        out += _table(["Field", "Value"], [
            ["engine", f"{p.get('engine')} {p.get('ncu_version')} ({p.get('ncu_path')})"],
            ["command", "`ncu " + " ".join(p.get("command", [])) + " <python -m kprof_mcp.worker run ...>`"],
            ["profiled launches", f"{p.get('profiled_launches')} (replay passes each: {p.get('passes_per_launch')})"],
            ["clock control", p.get("clock_control")], ["cache control", p.get("cache_control")],
            ["NVTX ranges", ", ".join(p.get("nvtx_ranges", []))],
            ["metric names", f"resolved by {p.get('metric_catalog')}; unknown to this ncu: "
                             f"{sorted(p.get('metrics_unknown', {})) or 'none'}"],
            ["parser", p.get("parser")], ["report", p.get("report_file")],
            ["profiled process wall time (s)", p.get("profiled_process_wall_s")],
        ])
    out.append("")
    return out


def render_verbose(result: ProfileResult, sections: dict[str, list[dict[str, Any]]]) -> str:
    """``report-verbose.md``: every Nsight Compute section of every stage, then every rule."""
    out = [f"# {result.kernel} {result.version} — every Nsight Compute section ({result.mode} mode)", "",
           f"Source: `{result.profiler.get('report_file', 'profile.ncu-rep')}`, read with "
           f"{result.profiler.get('parser', NA)}. Values in the units Nsight Compute reports.", ""]
    for s in result.stages:
        out.append(f"## Stage {s.name} ({', '.join(s.ncu_kernels) or NA})")
        for sec in sections.get(s.name, []):
            out += ["", f"### {sec.get('name')} (`{sec.get('id')}`)"]
            rows = [[m.get("name"), m.get("value"), m.get("unit") or ""] for m in sec.get("metrics", [])]
            out += _table(["Metric", "Value", "Unit"], rows) if rows else ["(no metrics)"]
            rules = [r for r in s.ncu_rules if r.get("section") == sec.get("id")]
            for r in rules:
                est = "" if r.get("speedup_pct") is None else f" — est. speedup {r['speedup_pct']:.1f}% ({r.get('speedup_type')})"
                out.append("")
                out.append(f"- **{r.get('type')}** {r.get('rule')}{est}: {(r.get('title') or '')} {r.get('message') or ''}".rstrip())
        if not sections.get(s.name):
            out.append("")
            out.append("(no section data in this report)")
        out.append("")
    return "\n".join(out) + "\n"


def render_source(stage: str, kernel: str, view: dict[str, Any], top: int = 25) -> str:
    """Per-source-line SASS metrics: where warps were sampled, what they stalled on, which
    instructions ran most. Samples are Nsight Compute's warp-state sampling counts per PC."""
    import pandas as pd

    df = pd.DataFrame(view["rows"])
    stall_cols = [c for c in view.get("stall_columns", []) if c in df.columns]
    for c in ("samples", "inst_executed"):
        if c not in df.columns:
            df[c] = 0.0
    df["file"] = df["file"].fillna("(no line info)")
    df["line"] = df["line"].fillna(0).astype(int)
    total = float(df["samples"].sum()) or 1.0
    out = [f"# Source view: stage {stage}, kernel `{kernel}`", "",
           f"{len(df)} SASS instructions; {int(df['samples'].sum())} warp-state samples. Per-PC data: "
           f"`source/{stage}.sass.csv`; imported source files: `source/{stage}.files/`.", ""]
    lines = {}
    for fname, text in view.get("files", {}).items():
        lines[fname] = text.splitlines()
    grouped = df.groupby(["file", "line"], as_index=False)[["samples", "inst_executed", *stall_cols]].sum()
    grouped = grouped.sort_values("samples", ascending=False).head(top)
    out.append("## Hottest source lines (by warp-state samples)")
    rows = []
    for _, g in grouped.iterrows():
        stalls = sorted(((g[c], c[len("stall_"):]) for c in stall_cols if g[c] > 0), reverse=True)[:3]
        src = ""
        text = lines.get(g["file"])
        if text and 0 < g["line"] <= len(text):
            src = "`" + text[g["line"] - 1].strip().replace("|", "\\|")[:90] + "`"
        rows.append([f"{_basename(g['file'])}:{g['line']}", src, f"{100 * g['samples'] / total:.1f}",
                     f"{g['inst_executed']:.4g}",
                     ", ".join(f"{n} {100 * v / max(g['samples'], 1):.0f}%" for v, n in stalls) or NA])
    out += _table(["Line", "Source", "% samples", "Warp insts executed", "Top stall reasons"], rows)
    out += ["", "## Hottest SASS instructions"]
    hot = df.sort_values("samples", ascending=False).head(top)
    rows = []
    for _, r in hot.iterrows():
        stalls = sorted(((r[c], c[len("stall_"):]) for c in stall_cols if r[c] > 0), reverse=True)[:2]
        rows.append([f"0x{int(r['offset']):x}", "`" + str(r.get("sass", "")).replace("|", "\\|") + "`",
                     f"{_basename(r['file'])}:{r['line']}", f"{100 * r['samples'] / total:.1f}",
                     f"{r['inst_executed']:.4g}", ", ".join(n for _, n in stalls) or NA])
    out += _table(["Offset", "SASS", "Line", "% samples", "Executed", "Stalls"], rows)
    if stall_cols:
        out += ["", "## Stall reasons over the whole kernel (% of samples)"]
        sums = sorted(((float(df[c].sum()), c[len("stall_"):]) for c in stall_cols), reverse=True)
        out += _table(["Reason", "% of samples"], [[n, f"{100 * v / total:.1f}"] for v, n in sums if v > 0])
    return "\n".join(out) + "\n"


def _basename(fname: Any) -> str:
    return str(fname).rsplit("/", 1)[-1]


# ----------------------------------------------------------------------------- devlog

DEVLOG_MARK = "<!-- kprof-devlog "


def devlog_metrics(result: ProfileResult) -> dict[str, Any]:
    """The numbers a devlog entry shows (and the next entry compares with)."""
    views = [stage_view(s, result.device.kind) for s in result.stages]
    main = max(views, key=lambda v: v.stage.timing.median_ns)
    total_s = result.total_time_ns() * 1e-9
    flops = sum(s.flops for s in result.stages)
    nbytes = sum(s.bytes_model for s in result.stages)
    occ = [s.occupancy_pct for s in result.stages if s.occupancy_pct is not None]
    tc = [s.tc_pct for s in result.stages if s.tc_pct is not None]
    return {
        "version": result.version,
        "duration_us": result.total_time_ns() / 1e3,
        "tflops": flops / total_s / 1e12 if total_s > 0 else None,
        "gbps": nbytes / total_s / 1e9 if total_s > 0 else None,
        "occupancy_pct": max(occ) if occ else None,
        "tc_pct": max(tc) if tc else None,
        "bottleneck": main.diagnosis.bottleneck if main.diagnosis else NA,
        "profile_dir": result.profile_dir,
        "mode": result.mode,
        "params": result.params,
        "device": result.device.name,
    }


def render_devlog_entry(result: ProfileResult, previous: dict[str, Any] | None, issues: list[str],
                        insights: list[str], profile_ref: str) -> str:
    """SPEC.md's development-log template, "vs Previous" filled from the previous entry's metrics."""
    m = devlog_metrics(result)
    d = result.device
    if d.kind != "cuda":
        clocks = "CPU timing"
    elif result.mode in ("annotation", "ncu") and d.clocks_locked:
        clocks = "locked to base clocks by ncu, Nsight Compute duration"
    else:
        clocks = "clocks not locked"
    cfg = ", ".join(f"{k}={result.params[k]}" for k in config_columns(result) if k != "dtype")

    def vs(key: str, lower_is_better: bool) -> str:
        if not previous or previous.get(key) in (None, 0) or m.get(key) is None:
            return "--"
        prev, cur = float(previous[key]), float(m[key])
        if lower_is_better:
            pct = 100.0 * (prev - cur) / prev
            return f"{abs(pct):.1f}% {'faster' if pct >= 0 else 'slower'}"
        return f"{100.0 * (cur - prev) / prev:+.1f}%"

    def pct(v):
        return NA if v is None else f"{v:.0f}%"

    lines = [
        f"### {result.kernel} {result.version} — {result.created_at} ({result.mode} mode)",
        "",
        f"Profile: `{profile_ref}`" + (f" (previous: {previous.get('version')})" if previous else ""),
        "",
        f"**Performance** ({d.name}, {clocks}, {result.params.get('dtype')}, {cfg}):",
        "| Metric | Value | vs Previous |",
        "| --- | --- | --- |",
        f"| Duration | {m['duration_us']:.2f} μs | {vs('duration_us', True)} |",
        f"| Achieved TFLOPs/s | {_num(m['tflops'], 2)} | {vs('tflops', False)} |",
        f"| Achieved GB/s | {_num(m['gbps'], 2)} | {vs('gbps', False)} |",
        f"| Occupancy | {pct(m['occupancy_pct'])} | -- |",
        f"| TC Util | {pct(m['tc_pct'])} | -- |",
        f"**Bottleneck**: {m['bottleneck']}",
        "**Issues**:",
        *[f"- {i}" for i in (issues or ["(none recorded)"])],
        "**Insights**:",
        *[f"- {i}" for i in (insights or ["(none recorded)"])],
        DEVLOG_MARK + json.dumps(m, default=str) + " -->",
        "",
    ]
    return "\n".join(lines)


def last_devlog_metrics(text: str, like: ProfileResult | None = None) -> dict[str, Any] | None:
    """The metrics of the last entry; with ``like``, the last entry measured the same way (mode,
    parameters, device), since durations across modes (boost vs locked base clocks, events vs
    kernel time) or devices are not comparable. Entries from before the mode was recorded
    count as event mode."""
    pos = len(text)
    while True:
        idx = text.rfind(DEVLOG_MARK, 0, pos)
        if idx < 0:
            return None
        end = text.find(" -->", idx)
        pos = idx
        try:
            m = json.loads(text[idx + len(DEVLOG_MARK):end])
        except (json.JSONDecodeError, ValueError):
            continue
        if like is None:
            return m
        if (m.get("mode", "event") == like.mode and m.get("params", like.params) == like.params
                and m.get("device", like.device.name) == like.device.name):
            return m

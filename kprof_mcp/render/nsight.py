"""report.md sections of the Nsight Compute modes (``annotation``, ``ncu``), ``report-verbose.md``
(every section) and the source view (SASS samples and stalls per source line)."""

from __future__ import annotations

import json
from typing import Any

from ..analysis.accounting import account
from ..models import ProfileResult
from ..parsers.ncu import NcuSection, SourceView
from .diagnosis import assess, rule_not_ranked
from .markdown import NA, mb, num, table


def where_the_time_went(result: ProfileResult) -> list[str]:
    """Per stage, the hardware's accounting: warp states (each stall reason's share of the warps'
    time, what it means), pipe utilisation, instruction mix, atomics, coalescing, bank conflicts,
    divergence. Empty when no stage has it (event mode, or an older recording)."""
    stages = [(s, account(s.accounting, s.tc_pct)) for s in result.stages if s.accounting]
    if not stages:
        return []
    out = [
        "",
        "## Where the time went (Nsight Compute's accounting)",
        "",
        "Warp states: each stall reason's share of the cycles between two instructions of a warp (ncu's "
        "WarpStateStats, `smsp__average_warps_issue_stalled_*_per_issue_active`); the largest shares own the "
        "time.",
    ]
    for s, a in stages:
        out += ["", f"### {s.name}", ""]
        if a.stalls:
            cpi = f"{a.cycles_per_issue:.1f}" if a.cycles_per_issue else NA
            out.append(f"{cpi} cycles between a warp's issues; issue slots busy {num(a.issue_active_pct)} %.")
            out.append("")
            out += table(
                ["Warp state", "Share %", "Cycles/issue", "Meaning"],
                [
                    [st.reason, f"{100 * st.share:.1f}", f"{st.cycles_per_issue:.2f}", st.meaning]
                    for st in a.stalls[:6]
                ],
            )
        facts = []
        if a.pipes:
            facts.append(
                "pipes (% of peak): "
                + ", ".join(f"{k} {v:.1f}" for k, v in sorted(a.pipes.items(), key=lambda kv: -kv[1]))
            )
        if a.inst_executed:
            mix = f"instructions: {a.inst_executed:.4g} warp-level"
            if a.tensor_inst is not None:
                mix += f", tensor-core (HMMA/GMMA) {a.tensor_inst:.4g}"
            if a.ffma_thread_inst is not None:
                mix += f", FFMA {a.ffma_thread_inst / 32:.4g} (warp equivalents)"
            facts.append(mix)
        if a.atomic_requests:
            per = a.atomics_per_inst
            facts.append(
                f"global atomics/reductions: {a.atomic_requests:.4g} requests"
                + (f" ({100 * per:.2f} % of instructions)" if per is not None else "")
                + (f", {a.atomic_l2_sectors:.4g} L2 sectors" if a.atomic_l2_sectors is not None else "")
            )
        if a.ld_sectors_per_request is not None or a.st_sectors_per_request is not None:
            facts.append(
                f"sectors per request: loads {num(a.ld_sectors_per_request, 1)}, stores "
                f"{num(a.st_sectors_per_request, 1)} (4 = coalesced 4-byte accesses, 32 = one sector per "
                "thread)"
            )
        if a.bank_conflicts_per_wavefront:
            facts.append(f"shared-memory bank conflicts: {a.bank_conflicts_per_wavefront:.2f} per wavefront")
        if a.threads_per_inst is not None:
            facts.append(f"active threads per warp instruction: {a.threads_per_inst:.1f} of 32")
        out += [""] + [f"- {f}" for f in facts]
    return out


def nsight_sections(result: ProfileResult, others: list[ProfileResult]) -> list[str]:
    """The Nsight Compute modes' sections of report.md: metrics per stage, measured traffic vs the
    model, rule results, the versions compared and the profiler run."""
    out = ["## Nsight Compute metrics per stage"]
    rows = []
    for s in result.stages:
        rows.append(
            [
                s.name,
                ", ".join(s.ncu_kernels) or NA,
                f"{s.timing.median_ns / 1e3:.2f}",
                num(s.sm_clock_hz / 1e6 if s.sm_clock_hz else None, 0),
                num(s.tc_pct),
                num(s.sm_pct),
                num(s.dram_pct),
                num(s.occupancy_pct),
                num(s.theoretical_occupancy_pct),
                num(s.l2_hit_pct),
                num(s.measured_local_bytes, 0),
                num(s.measured_waves_per_sm, 2),
                num(s.registers_per_thread, 0),
                num(s.shared_mem_per_block_bytes, 0),
                mb(s.dram_bytes),
            ]
        )
    out += table(
        [
            "Stage",
            "Kernel(s)",
            "Duration (us)",
            "SM MHz",
            "TC%",
            "SM%",
            "DRAM%",
            "Occ% achieved",
            "Occ% theoretical",
            "L2 hit%",
            "Local (spill) bytes",
            "Waves/SM",
            "Regs/thread",
            "Smem/block (B)",
            "DRAM MB",
        ],
        rows,
    )
    missing = [f"{s.name}: {', '.join(s.missing_metrics)}" for s in result.stages if s.missing_metrics]
    out.append("")
    out.append("Missing metrics (n/a, never 0): " + ("; ".join(missing) if missing else "none") + ".")
    out += where_the_time_went(result)
    out += ["", "## Roofline: measured traffic vs the FLOP/byte model"]
    rows = []
    for s in result.stages:
        m = s.has_model  # a command's stage without stage_models: n/a, not 0
        meas_int = s.flops / s.dram_bytes if s.dram_bytes and m else None
        meas_bw = s.measured_dram_bytes_per_s
        rows.append(
            [
                s.name,
                f"{s.flops:.4g}" if m else NA,
                mb(s.bytes_model if m else None),
                mb(s.dram_bytes),
                num(s.over_fetch_ratio, 2),
                num(s.intensity_flop_per_byte, 1),
                num(meas_int, 1),
                num(s.ridge_flop_per_byte, 1),
                f"{s.achieved_flops_per_s / 1e12:.2f}" if m else NA,
                num(meas_bw / 1e9 if meas_bw else None, 1),
                num(100 * meas_bw / s.peak_bytes_per_s if meas_bw and s.peak_bytes_per_s else None),
            ]
        )
    out += table(
        [
            "Stage",
            "FLOPs (model)",
            "Model MB",
            "Measured DRAM MB",
            "Measured ÷ model",
            "FLOP/B (model)",
            "FLOP/B (measured)",
            "Ridge FLOP/B",
            "TFLOP/s",
            "Measured GB/s",
            "% peak BW (measured)",
        ],
        rows,
    )
    out.append("")
    out.append(
        "Measured ÷ model > 1.25 flags over-fetch (uncoalesced or strided access, data re-read after "
        "L2 eviction); < 1 means part of the inputs were served from L2 (ncu flushes caches before "
        "each pass, so that reuse happened inside the launch)."
    )
    out += ["", "## Nsight Compute rule results"]
    rows = []
    for s in result.stages:
        for r in s.ncu_rules:
            if r.get("type") in ("OK", "NONE") and r.get("speedup_pct") is None:
                continue
            est = NA if r.get("speedup_pct") is None else f"{r['speedup_pct']:.1f}% ({r.get('speedup_type')})"
            why = rule_not_ranked(r) if r.get("speedup_type") == "global" and r.get("speedup_pct") else None
            if why:
                est += f"; not ranked: {why}"
            msg = (r.get("message") or "").replace("|", "/").replace("\n", " ")
            rows.append(
                [
                    s.name,
                    f"{r.get('section')}/{r.get('rule')}",
                    r.get("type"),
                    est,
                    (r.get("title") + ": " if r.get("title") else "")
                    + (msg[:400] + ("…" if len(msg) > 400 else "")),
                ]
            )
    out += (
        table(["Stage", "Section/rule", "Type", "Est. speedup", "Finding"], rows)
        if rows
        else ["No rule fired with a finding (or the report has no rule results)."]
    )
    out.append("")
    out.append(
        "Est. speedup is Nsight Compute's: the share of runtime it expects to save (global: of the whole "
        "kernel; local: of the part the rule looks at). Global estimates also rank in the contract's "
        "opportunities, converted to a gain (1/(1 − saving) − 1), unless the row says why not."
    )
    if others:
        out += ["", f"## Versions compared ({result.mode} mode, same parameters, latest profile of each)"]
        rows = []
        for r in sorted(others + [result], key=lambda x: x.version):
            ra = assess(r)
            main = ra.main.stage
            mark = " (this profile)" if r is result else ""
            rows.append(
                [
                    r.version + mark,
                    f"{r.total_time_ns() / 1e3:.2f}",
                    num(main.tc_pct),
                    num(main.sm_pct),
                    num(main.dram_pct),
                    num(main.occupancy_pct),
                    num(main.l2_hit_pct),
                    num(main.over_fetch_ratio, 2),
                    num(main.registers_per_thread, 0),
                    json.dumps(main.tiling, default=str) if main.tiling else NA,
                    ra.bottleneck or NA,
                ]
            )
        out += table(
            [
                "Version",
                "Duration (us)",
                "TC%",
                "SM%",
                "DRAM%",
                "Occ%",
                "L2 hit%",
                "DRAM ÷ model",
                "Regs",
                "Tiling",
                "Bottleneck",
            ],
            rows,
        )
    p = result.profiler
    if p:
        out += ["", "## Profiler run"]
        out += table(
            ["Field", "Value"],
            [
                ["engine", f"{p.get('engine')} {p.get('ncu_version')} ({p.get('ncu_path')})"],
                [
                    "command",
                    "`ncu " + " ".join(p.get("command", [])) + " <python -m kprof_mcp.child run ...>`",
                ],
                [
                    "profiled launches",
                    f"{p.get('profiled_launches')} (replay passes each: {p.get('passes_per_launch')})",
                ],
                ["clock control", p.get("clock_control")],
                ["cache control", p.get("cache_control")],
                ["NVTX ranges", ", ".join(p.get("nvtx_ranges", []))],
                [
                    "metric names",
                    f"resolved by {p.get('metric_catalog')}; unknown to this ncu: "
                    f"{sorted(p.get('metrics_unknown', {})) or 'none'}",
                ],
                ["parser", p.get("parser")],
                ["report", p.get("report_file")],
                ["profiled process wall time (s)", p.get("profiled_process_wall_s")],
            ],
        )
    out.append("")
    return out


def render_verbose(result: ProfileResult, sections: dict[str, list[NcuSection]]) -> str:
    """``report-verbose.md``: every Nsight Compute section of every stage, then every rule."""
    out = [
        f"# {result.kernel} {result.version} — every Nsight Compute section ({result.mode} mode)",
        "",
        f"Source: `{result.profiler.get('report_file', 'profile.ncu-rep')}`, read with "
        f"{result.profiler.get('parser', NA)}. Values in the units Nsight Compute reports.",
        "",
    ]
    for s in result.stages:
        out.append(f"## Stage {s.name} ({', '.join(s.ncu_kernels) or NA})")
        for sec in sections.get(s.name, []):
            out += ["", f"### {sec.name} (`{sec.id}`)"]
            rows = [[m.name, m.value, m.unit or ""] for m in sec.metrics]
            out += table(["Metric", "Value", "Unit"], rows) if rows else ["(no metrics)"]
            rules = [r for r in s.ncu_rules if r.get("section") == sec.id]
            for r in rules:
                est = (
                    ""
                    if r.get("speedup_pct") is None
                    else f" — est. speedup {r['speedup_pct']:.1f}% ({r.get('speedup_type')})"
                )
                out.append("")
                out.append(
                    f"- **{r.get('type')}** {r.get('rule')}{est}: {(r.get('title') or '')} {r.get('message') or ''}".rstrip()
                )
        if not sections.get(s.name):
            out.append("")
            out.append("(no section data in this report)")
        out.append("")
    return "\n".join(out) + "\n"


def render_source(stage: str, kernel: str, view: SourceView, top: int = 25) -> str:
    """Per-source-line SASS metrics: where warps were sampled, what they stalled on, which
    instructions ran most. Samples are Nsight Compute's warp-state sampling counts per PC."""
    import pandas as pd

    df = pd.DataFrame(view.rows)
    stall_cols = [c for c in view.stall_columns if c in df.columns]
    for c in ("samples", "inst_executed"):
        if c not in df.columns:
            df[c] = 0.0
    df["file"] = df["file"].fillna("(no line info)")
    df["line"] = df["line"].fillna(0).astype(int)
    total = float(df["samples"].sum()) or 1.0
    out = [
        f"# Source view: stage {stage}, kernel `{kernel}`",
        "",
        f"{len(df)} SASS instructions; {int(df['samples'].sum())} warp-state samples. Per-PC data: "
        f"`source/{stage}.sass.csv`; imported source files: `source/{stage}.files/`.",
        "",
    ]
    lines = {}
    for fname, text in view.files.items():
        lines[fname] = text.splitlines()
    grouped = df.groupby(["file", "line"], as_index=False)[["samples", "inst_executed", *stall_cols]].sum()
    grouped = grouped.sort_values("samples", ascending=False).head(top)
    out.append("## Hottest source lines (by warp-state samples)")
    rows = []
    for _, g in grouped.iterrows():
        stalls = sorted(((g[c], c[len("stall_") :]) for c in stall_cols if g[c] > 0), reverse=True)[:3]
        src = ""
        text = lines.get(g["file"])
        if text and 0 < g["line"] <= len(text):
            src = "`" + text[g["line"] - 1].strip().replace("|", "\\|")[:90] + "`"
        rows.append(
            [
                f"{_basename(g['file'])}:{g['line']}",
                src,
                f"{100 * g['samples'] / total:.1f}",
                f"{g['inst_executed']:.4g}",
                ", ".join(f"{n} {100 * v / max(g['samples'], 1):.0f}%" for v, n in stalls) or NA,
            ]
        )
    out += table(["Line", "Source", "% samples", "Warp insts executed", "Top stall reasons"], rows)
    out += ["", "## Hottest SASS instructions"]
    hot = df.sort_values("samples", ascending=False).head(top)
    rows = []
    for _, r in hot.iterrows():
        stalls = sorted(((r[c], c[len("stall_") :]) for c in stall_cols if r[c] > 0), reverse=True)[:2]
        rows.append(
            [
                f"0x{int(r['offset']):x}",
                "`" + str(r.get("sass", "")).replace("|", "\\|") + "`",
                f"{_basename(r['file'])}:{r['line']}",
                f"{100 * r['samples'] / total:.1f}",
                f"{r['inst_executed']:.4g}",
                ", ".join(n for _, n in stalls) or NA,
            ]
        )
    out += table(["Offset", "SASS", "Line", "% samples", "Executed", "Stalls"], rows)
    if stall_cols:
        out += ["", "## Stall reasons over the whole kernel (% of samples)"]
        sums = sorted(((float(df[c].sum()), c[len("stall_") :]) for c in stall_cols), reverse=True)
        out += table(["Reason", "% of samples"], [[n, f"{100 * v / total:.1f}"] for v, n in sums if v > 0])
    return "\n".join(out) + "\n"


def _basename(fname: Any) -> str:
    return str(fname).rsplit("/", 1)[-1]

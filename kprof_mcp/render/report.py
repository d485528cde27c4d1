"""``report.md``: the contract followed by every detail of a profile. Mode-specific sections
come from the mode (:class:`ModeReport`); this module renders what every mode has."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..analysis.baseline import VsBaseline
from ..analysis.occupancy import LABEL
from ..analysis.peaks import AtClock
from ..models import ProfileResult
from ..parsers.sass import CLASSES
from ..parsers.sass import LABEL as SASS_LABEL
from .contract import pct_of_peak, render_contract
from .diagnosis import Assessment, assess
from .diagnosis.ranks import ms, why_text
from .markdown import NA, num, table
from .phases import phase_lines
from .rank_idle import idle_lines
from .rank_plot import picture_line


@dataclass(frozen=True)
class ModeReport:
    """What a mode contributes to ``report.md`` (see :meth:`kprof_mcp.modes.base.Mode.report`):
    its own sections after the contract, a note above the timing table, and one after it."""

    sections: list[str] = field(default_factory=list)
    timing_note: str | None = None
    samples_note: str = ""


def command_section(result: ProfileResult) -> list[str]:
    """What ran (profile_command): the argument vector, where, how it ended, where the stages
    came from, the kernels in each stage, and the end of its output."""
    c = result.command
    by = {
        "range": "its ranges (NVTX / record_function / kprof.range)",
        "kernel": "its kernels, grouped by name",
    }
    out = [
        "## Command",
        "",
        f"`{' '.join(c.get('argv') or [])}` in `{c.get('cwd')}`: exit status "
        f"{c.get('exit_code', NA)}, {c.get('wall_s', NA)} s of its own run; stages are "
        f"{by.get(c.get('stages_from'), NA)}"
        + (f", include={c.get('include')}" if c.get("include") else "")
        + ".",
    ]
    models = [s.name for s in result.stages if s.bytes_model or s.flops]
    if len(models) < len(result.stages):
        out.append(
            "Stages without a FLOP/byte model (pass stage_models): no roofline or speed-of-light time for "
            "them, so their opportunities are ranked from the counters alone, each capped like generic advice."
        )
    out += [""]
    out += table(
        ["Stage", "Occurrences", "Kernels (launches)"],
        [
            [s.name, s.timing.runs, ", ".join(s.ncu_kernels[:6]) + (" …" if len(s.ncu_kernels) > 6 else "")]
            for s in result.stages
        ],
    )
    out += rank_section(c.get("ranks") or [], c.get("communication"))
    tail = c.get("output_tail")
    if tail:
        out += ["", "Its output ends:", "", "```", tail, "```"]
    return out + [""]


def rank_section(ranks: list[dict], comm: dict | None = None) -> list[str]:
    """The processes a multi-process command started (issue 39): each rank's stages, occurrences and
    time in them, and with ``comm`` (``result.command["communication"]``) its step's compute,
    communication, exposed communication, overlap, host time, wait at the collectives and lateness
    (medians per step) and the straggler; the processes that were not ranks or left no record, with why."""
    if not ranks:
        return []
    per_step = bool(comm) and any("step_ns" in r for r in ranks)
    rows = []
    for r in ranks:
        wall = r.get("wall_ns")
        row = [
            NA if r.get("rank") is None else r["rank"],
            r.get("pid", NA),
            r.get("role", NA) if r.get("status") == "ok" else f"{r.get('role', NA)} ({r.get('status')})",
            ", ".join(s.split("/", 1)[-1] for s in r.get("stages") or []) or NA,
            r.get("occurrences", 0),
            f"{(r.get('time_ns') or 0) / 1e6:.3f}",
            NA if wall is None else f"{wall / 1e9:.2f}",
        ]
        if per_step:
            row += [ms(r.get(k)) for k in RANK_COMM[:4]] + [num(r.get("overlap_pct"))]
            row += [ms(r.get(k)) for k in RANK_COMM[4:]]
        rows.append(row + [r.get("note", "")])
    n = sum(1 for r in ranks if r.get("role") == "rank" and r.get("status") == "ok")
    head = ["Rank", "PID", "Role", "Stages", "Occurrences", "Time in stages (ms)", "Recorded (s)"]
    if per_step:
        head += ["Step (ms)", "Compute (ms)", "Comm (ms)", "Exposed (ms)", "Overlap %", "Host (ms)"]
        head += ["Wait (ms)", "Late (ms)"]
    out = [
        "",
        f"### Ranks ({n} recorded; their stages are named rank<r>/<range>)",
        "",
        *table(head + ["Note"], rows),
    ]
    if per_step:
        out += ["", comm_text(comm)]  # type: ignore[arg-type]
        out += picture_line(comm)
    out += idle_lines(ranks)
    return out


RANK_COMM = ("step_ns", "compute_ns", "comm_ns", "exposed_ns", "host_ns", "wait_ns", "late_ns")


def comm_text(c: dict) -> str:
    """What the per-step columns are, and the straggler (analysis.comm's summary)."""
    out = (
        f"Per step, medians over {c['steps']} steps with {c['collectives']} collectives matched across the ranks "
        "by order of issue: compute and communication (NCCL kernels; gloo's collectives from issue to end), "
        "exposed = communication no compute of the rank overlaps, host = neither; wait = the rank's wait at "
        "the collectives for the last to arrive, late = how much later than the next rank it arrived where it "
        f"was last. Replayed step {ms(c['period_ns'])} ms (recorded {ms(c['recorded_period_ns'])} ms)."
    )
    s = c.get("straggler")
    if s:
        out += (
            f" Straggler: rank {s['rank']}, late {ms(s['late_ns'])} ms per step (last at {num(s['last_pct'])}% of "
            f"the collectives); {why_text(s['why'], s['extra_host_ns'], s['extra_compute_ns'])}; without its "
            f"extra work the step replays in {ms(s['whatif_ns'])} ms."
        )
    return out


def at_clock_text(c: AtClock, at: float | None, nominal: float | None) -> str:
    """A % of a compute roof at the clock the stage ran, the boost-clock figure beside it where they differ."""
    if c.clock_mhz is None or pct_of_peak(at) == pct_of_peak(nominal):
        return pct_of_peak(at)
    return f"{pct_of_peak(at)} at {c.clock_mhz:.0f} MHz ({pct_of_peak(nominal)} at boost)"


def energy_range(vals: list[float], digits: int) -> str:
    """median [min–max] of energy or power figures."""
    import statistics

    if not vals:
        return NA
    return f"{statistics.median(vals):.{digits}f} [{min(vals):.{digits}f}–{max(vals):.{digits}f}]"


def render_report(
    result: ProfileResult,
    baseline: ProfileResult | None = None,
    *,
    assessment: Assessment | None = None,
    mode: ModeReport | None = None,
    vs: VsBaseline | None = None,
) -> str:
    """``report.md``: the contract, then the mode's own sections (Nsight Compute metrics and
    rules, the timeline, ...), then the roofline, timing, resources, tiling, device and
    warnings."""
    a = assessment or assess(result)
    mode = mode or ModeReport()
    out = [
        render_contract(result, baseline, assessment=a, vs=vs).rstrip("\n"),
        "",
        "---",
        "",
        f"# Details ({result.mode} mode)",
        "",
    ]
    d = result.device
    if result.command:
        out += command_section(result)
    out += mode.sections
    out.append("## Roofline (model FLOPs and bytes over measured median time)")
    rows = []
    for sa in a.stages:
        s, c = sa.stage, sa.at_clock
        m = s.has_model  # a command's stage without stage_models: no FLOPs or bytes, n/a rather than 0
        rows.append(
            [
                s.name,
                f"{s.flops:.4g}" if m else NA,
                f"{s.bytes_model:.4g}" if m else NA,
                num(s.intensity_flop_per_byte, 3),
                num(s.ridge_flop_per_byte, 1),
                f"{s.achieved_flops_per_s / 1e12:.3f}" if m else NA,
                f"{s.achieved_bytes_per_s / 1e9:.1f}" if m else NA,
                at_clock_text(c, c.pct_peak_flops, c.pct_peak_flops_nominal),
                pct_of_peak(c.pct_peak_bandwidth),
                s.roofline_region or NA,
                at_clock_text(c, c.pct_of_roofline, c.pct_of_roofline_nominal),
            ]
        )
    out += table(
        [
            "Stage",
            "FLOPs",
            "Bytes (model)",
            "FLOP/B",
            "Ridge FLOP/B",
            "TFLOP/s",
            "GB/s",
            "% peak FLOP/s",
            "% peak BW",
            "Region",
            "% of roofline",
        ],
        rows,
    )
    if d.kind == "cuda" and result.stages and result.stages[0].peak_bytes_per_s:
        s0 = result.stages[0]
        out.append("")
        out.append(
            f"Peaks ({d.spec_name}, devices.json): {s0.peak_bytes_per_s / 1e9:.0f} GB/s; "
            + ", ".join(
                f"{s.name}: {num((s.peak_flops_per_s or 0) / 1e12, 1)} TFLOP/s "
                f"({'tensor cores' if s.tensor_cores else 'FP32 SIMT'}, {s.dtype})"
                for s in result.stages
            )
            + ". Bytes are the model's minimum traffic: measured DRAM traffic can only be higher."
        )
    out += ["", "## Timing"]
    if mode.timing_note:
        out.append(mode.timing_note)
        out.append("")

    def trow(label: str, t) -> list:
        return [
            label,
            t.method,
            t.runs,
            f"{t.median_ns / 1e3:.3f}",
            f"{t.iqr_ns / 1e3:.3f}",
            f"{100 * t.rel_iqr:.2f}",
            f"{t.min_ns / 1e3:.3f}",
            t.stop_reason,
            "yes" if t.l2_flushed else "no",
            f"{min(t.sm_clock_mhz):.0f}–{max(t.sm_clock_mhz):.0f}" if t.sm_clock_mhz else NA,
        ]

    trows = []
    for s in result.stages:
        trows.append(trow(s.name, s.timing))
        if s.launch_timing is not None:
            lt = s.launch_timing
            trows.append(
                trow(
                    f"{s.name} (launch-inclusive, +{100 * (lt.median_ns / s.timing.median_ns - 1):.1f}%)", lt
                )
            )
    if result.plan_total is not None:
        trows.append(trow("(whole plan)", result.plan_total))
    out += table(
        [
            "Stage",
            "Method",
            "Runs",
            "Median (us)",
            "IQR (us)",
            "IQR/median %",
            "Min (us)",
            "Stopped by",
            "L2 flushed",
            "SM MHz",
        ],
        trows,
    )
    erows = [
        [s.name, energy_range(s.timing.energy_mj_per_run, 3), energy_range(s.timing.power_w, 0)]
        for s in result.stages
        if s.timing.energy_mj_per_run
    ]
    if erows:
        out += [
            "",
            "Energy (NVML's energy counter; 0.6 s windows of runs back to back, no L2 flush; power between "
            "the counter's steps; median [min–max] over the windows):",
        ]
        out += table(["Stage", "Energy per run (mJ)", "Mean power (W)"], erows)
    krows = [
        [
            s.name,
            k.name[:90],
            f"{k.launches_per_run:g}",
            f"{k.median_ns / 1e3:.3f}",
            f"{k.total_median_ns / 1e3:.3f}",
        ]
        for s in result.stages
        for k in s.kernel_times
    ]
    if krows:
        out += ["", "Kernels of each stage (CUPTI, per run; the stage's time is their sum):", ""]
        out += table(
            ["Stage", "Kernel", "Launches/run", "Median per launch (us)", "Median per run (us)"], krows
        )
    out.append("")
    out.append("Raw samples: `samples.csv` (ns)." + mode.samples_note)
    out += phase_lines(result)
    out += ["", "## Compiled kernel resources"]
    rrows = []
    for s in result.stages:
        r = s.resources
        rrows.append(
            [
                s.name,
                (r.kernel_name if r else None) or NA,
                num(r.registers_per_thread if r else None, 0),
                num(r.local_spill_bytes if r else None, 0),
                num(r.shared_memory_bytes if r else None, 0),
                num(r.num_warps if r else None, 0),
                num(r.num_stages if r else None, 0),
                s.grid_blocks if s.grid_blocks is not None else NA,
                num(s.waves_per_sm, 2),
            ]
        )
    out += table(
        [
            "Stage",
            "Kernel",
            "Regs/thread",
            "Spill bytes/thread",
            "Shared mem (B)",
            "Warps",
            "Stages",
            "Grid blocks",
            "Blocks/SM",
        ],
        rrows,
    )
    out += occupancy_lines(a)
    out += sass_mix_lines(result)
    if any(s.resources is None for s in result.stages):
        out.append("")
        out.append(
            "n/a: no compiled GPU kernel (CPU wall time, no GPU) — IR and resources exist only for GPU compiles."
            if result.device.kind != "cuda"
            else "n/a: no Triton compile recorded for the stage (torch ops or a command's kernels) — IR and "
            "resources exist only for the Triton kernels kprof compiles."
        )
    out += ["", "## Tiling"]
    for s in result.stages:
        out.append(f"- {s.name}: `{json.dumps(s.tiling, default=str) if s.tiling else NA}`")
    out += ["", "## Device, clocks and versions"]
    out += table(
        ["Field", "Value"],
        [
            ["device", d.name],
            ["kind", d.kind],
            ["table entry", d.spec_name or f"{NA} ({d.spec_note})"],
            ["SMs", d.sm_count if d.sm_count is not None else NA],
            ["L2 (bytes)", d.l2_bytes if d.l2_bytes is not None else NA],
            ["clock control", d.clock_control],
            ["clocks before", json.dumps(d.clocks_before) if d.clocks_before else NA],
            ["clocks after", json.dumps(d.clocks_after) if d.clocks_after else NA],
            ["torch", d.torch_version],
            ["triton", d.triton_version],
            ["CUDA", d.cuda_version or NA],
            ["driver", d.driver_version or NA],
            ["python", d.python_version],
            ["TRITON_INTERPRET", d.triton_interpret],
        ],
    )
    where = result.correctness.get("checked_in")
    if result.command:
        out += [
            "",
            "## Correctness",
            "Not checked: a command has no reference (profile a kernel package for that).",
        ]
    else:
        out += [
            "",
            "## Correctness",
            (
                f"Checked against the package reference in {where}: "
                if where
                else "Checked against the package reference before timing: "
            )
            + ", ".join(
                f"output {o['index']}: rel. L2 error {o.get('rel_l2_error', float('nan')):.3g} "
                f"(tolerance {result.correctness.get('tolerance_rel_l2')})"
                for o in result.correctness.get("outputs", [])
            ),
        ]
        after = result.correctness.get("after_timing")
        if after:  # the integrity checks after the timed runs (kprof_mcp/capture/integrity.py)
            out += ["", "After the timed runs (integrity checks):"]
            out += [
                f"- {c['check']}: {'ok' if c['ok'] else 'FAILED'} — {c['message']}" for c in after["checks"]
            ]
    out += ["", "## Warnings"]
    out += [f"- {w.message}" for w in a.warnings] or ["- none"]
    return "\n".join(out) + "\n"


def occupancy_lines(a: Assessment) -> list[str]:
    """Each stage's theoretical occupancy (:mod:`kprof_mcp.analysis.occupancy`), labelled as the
    launch's ceiling, not a measurement; nothing where none was computed."""
    if not a.occupancy:
        return []
    arch = next(iter(a.occupancy.values())).arch
    out = [
        "",
        f"Occupancy, {LABEL}: the blocks of each stage's kernel that fit on one SM by {arch}'s limits "
        "(registers allocated per warp in units of 256 over 4 sub-partitions; shared memory per block "
        "plus 1 KB reserved, in units of 128 B, against the SM's full carveout; max warps and blocks per SM):",
        "",
    ]
    rows = [
        [
            name,
            o.warps_per_block,
            o.limits["registers"],
            o.limits["shared_memory"],
            o.limits["warps"],
            o.limits["blocks"],
            o.blocks_per_sm,
            o.warps_per_sm,
            f"{o.occupancy_pct:.1f}",
            o.limited_by.replace("_", " "),
        ]
        for name, o in a.occupancy.items()
    ]
    return out + table(
        [
            "Stage",
            "Warps/block",
            "Blocks by registers",
            "by shared mem",
            "by warps",
            "by blocks",
            "Blocks/SM",
            "Warps/SM",
            "Theoretical occupancy %",
            "Limited by",
        ],
        rows,
    )


def sass_mix_lines(result: ProfileResult) -> list[str]:
    """Each compiled stage's static instruction mix (its SASS listing by class, from the cubin:
    ``compiled/<stage>/kernel.sass``), labelled as the code's shape, not executed counts."""
    mixes = {s.name: s.resources.sass_mix for s in result.stages if s.resources and s.resources.sass_mix}
    if not mixes:
        return []
    order = [*CLASSES, "uniform", "other", "nop"]
    cols = [c for c in order if any(c in m for m in mixes.values())]
    rows = [[name, *(m.get(c, 0) for c in cols), sum(m.values())] for name, m in mixes.items()]
    return [
        "",
        f"Instructions by class, {SASS_LABEL}: each instruction the compiler emitted counted once (a loop "
        "body once however often it runs); the listing is `compiled/<stage>/kernel.sass`.",
        "",
        *table(["Stage", *cols, "total"], rows),
    ]

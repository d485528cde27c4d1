"""The Profiler Output Contract (SPEC.md's exact shape), rendered from a result and its
:class:`~kprof_mcp.analysis.assessment.Assessment`; the baseline comparison table."""

from __future__ import annotations

from typing import Any

from ..analysis.baseline import StageVerdict, VsBaseline, against, caveats, untrusted
from ..analysis.peaks import SUSPECT
from ..models import ProfileResult
from .diagnosis import Assessment, KeyIssue, RankedOpportunity, RootCause, assess
from .diagnosis.ranks import straggler_root_text
from .markdown import CPU_WALL_TIME, NA, num, table
from .noise import judgement_words


def config_columns(result: ProfileResult) -> list[str]:
    """The kernel's own parameters, then ``dtype`` (a command has only its argument vector)."""
    return [k for k in result.param_order if k != "dtype"] + (["dtype"] if "dtype" in result.params else [])


OVER_PEAK = "n/a (over peak)"


def pct_of_peak(v: float | None, digits: int = 1) -> str:
    """A percentage of a device peak as printed: never a figure above 100 % (issue 37: such a stage is
    ``suspect``, its key issue says why)."""
    return OVER_PEAK if v is not None and v > 100.0 else num(v, digits)


def key_issue_text(k: KeyIssue) -> str:
    if k.kind == "trigger":
        return k.trigger or NA
    if k.kind == "at_roof":
        return f"{k.trigger} (at the roof: nothing above 5 %)"
    if k.kind == "healthy":
        return "all measured metrics healthy"
    if k.kind == "cpu":
        return f"{CPU_WALL_TIME}: no GPU roofline"
    if k.kind == "suspect":
        return f"suspect: {k.values['reason']}"
    if k.kind == "no_peaks":
        return "unknown device: no peaks, no roofline"
    if k.kind == "no_model":
        return "no FLOP/byte model and no counters: pass stage_models, or use mode annotation"
    v = k.values
    if k.kind == "launch_bound":
        return (
            f"launch-bound: GPU busy {num(v.get('gpu_busy_pct'))}% of the window, "
            f"kernels {num(v['kernel_median_ns'] / 1e3, 2)} µs vs launches every "
            f"{num((v.get('launch_interval_median_ns') or 0) / 1e3, 2)} µs"
        )
    unit = "tensor" if v.get("tensor_cores") else "FP32"
    clock = (
        f" at {v['clock_mhz']:.0f} MHz ({pct_of_peak(v.get('pct_peak_flops_nominal'))}% of the boost-clock peak)"
        if v.get("clock_mhz")
        else ""
    )
    return (
        f"roofline est.: {pct_of_peak(v.get('pct_peak_bandwidth'))}% of peak DRAM BW, "
        f"{pct_of_peak(v.get('pct_peak_flops'))}% "
        f"of {unit} peak{clock} (model bytes/FLOPs; no counters in this mode)"
    )


# A launch-bound plan's idle owner (analysis/idle.py's parts) other than the launch calls, in words.
_IDLE_OWNER = {
    "host": "the host's own work between launches (Python, data preparation, checks)",
    "sync": "the host waiting for the GPU (synchronisations, reads of its values) and the work after them",
    "copy_h2d": "host-to-device copies the GPU waits for",
    "other_api": "other CUDA calls (allocation, frees)",
    "first_call": "one-off first calls (module loading, compilation)",
}


def root_cause_text(rc: RootCause) -> str:
    if rc.kind == "straggler":  # a multi-rank job (issue 39)
        return straggler_root_text(rc.values)
    if rc.kind == "suspect":
        return (
            f"none can be given: stage {rc.values['stage']} is suspect — {rc.values['reason']}. Check that every "
            "timed run does the work (fresh inputs, no cached output, the timed stream), then profile again."
        )
    if rc.kind == "roofline":
        v = rc.values
        return (
            f"{rc.text.rstrip('.')} (estimated from the FLOP/byte model; intensity "
            f"{num(v.get('intensity_flop_per_byte'), 2)} FLOP/B vs ridge "
            f"{num(v.get('ridge_flop_per_byte'), 0)} FLOP/B: {v.get('region')}-bound region)."
        )
    if rc.kind == "launch_bound":
        v = rc.values
        head = (
            f"The plan is launch-bound: the GPU is busy {num(v.get('gpu_busy_pct'))}% of the time, "
            f"and each kernel ({num(v['kernel_median_ns'] / 1e3, 2)} µs) is shorter than the gap "
            f"between host launches ({num((v.get('launch_interval_median_ns') or 0) / 1e3, 2)} µs). "
        )
        owner = _IDLE_OWNER.get(v.get("idle_owner") or "launch")
        if owner is not None:  # the gaps are mostly something else than the launch calls
            return head + (
                f"Most of the GPU's idle time ({num(v.get('idle_owner_pct'))}% of the wall time) is {owner}, "
                "not the launch calls: per-kernel tuning cannot help until that leaves the critical path."
            )
        return head + "Per-kernel tuning cannot help until launches are fused or captured in a CUDA graph."
    return rc.text


def opportunity_name(o: RankedOpportunity, a: Assessment) -> str:
    """Stage opportunities of a multi-stage plan carry their stage's name."""
    return f"[{o.stage}] {o.name}" if len(a.stages) > 1 and o.stage is not None else o.name


def render_contract(
    result: ProfileResult,
    baseline: ProfileResult | None = None,
    *,
    assessment: Assessment | None = None,
    vs: VsBaseline | None = None,
) -> str:
    """The Profiler Output Contract, in SPEC.md's exact shape (``vs``: ``result`` against ``baseline``,
    computed once by the caller, else here)."""
    a = assessment or assess(result)
    cols = config_columns(result)
    lines = [f"## Profile: {result.kernel} {result.version}", "", "### Configuration"]
    lines += table(cols, [[result.params[c] for c in cols]])
    lines += ["", "### Stages"]
    rows = []
    for sa in a.stages:
        s = sa.stage
        rows.append(
            [
                s.name,
                f"{s.timing.median_ns / 1e3:.2f}",
                pct_of_peak(s.tc_pct),
                pct_of_peak(s.dram_pct),
                num(s.occupancy_pct),
                sa.diagnosis.bottleneck if sa.diagnosis else NA,
                key_issue_text(sa.key_issue),
            ]
        )
    lines += table(["Stage", "Duration (us)", "TC%", "DRAM%", "Occ%", "Bottleneck", "Key Issue"], rows)
    lines.append("")
    failed = untrusted(result)
    if failed:
        lines += [integrity_line(failed), ""]
    said = caveats(result)
    if said:
        lines += ["**Caveat**: " + "; ".join(said) + ".", ""]
    if a.bottleneck is None:
        no_model = result.device.kind == "cuda" and a.main is not None and a.main.key_issue.kind == "no_model"
        reason = (
            "CPU timing (no GPU): no roofline or counters to classify with"
            if result.device.kind != "cuda"
            else f"the dominant stage, {a.main.stage.name}, has no FLOP/byte model and this mode no counters"
            if no_model
            else "device not in devices.json: no peaks to classify with"
        )
        lines.append(f"**Bottleneck**: {NA} ({reason})")
        if a.root_cause.kind == "straggler":  # a multi-rank job's, found without a roofline (issue 39)
            lines.append(f"**Root cause**: {root_cause_text(a.root_cause)}")
        else:
            lines.append(
                f"**Root cause**: {NA}. "
                + (
                    "Pass stage_models (FLOPs and bytes per range occurrence) for a roofline, or profile in mode annotation "
                    "for counters."
                    if no_model
                    else "Run on a GPU listed in devices.json for a diagnosis."
                )
            )
        if result.device.kind != "cuda":
            lines.append(cpu_figures_line(result))
    else:
        lines.append(
            f"**Bottleneck**: {a.bottleneck}"
            + (" (+ locality issue: L2 hit < 80%)" if a.locality_issue else "")
        )
        lines.append(f"**Root cause**: {root_cause_text(a.root_cause)}")
    lines += ["", "### Top 3 Opportunities (ranked by estimated impact)"]
    if a.opportunities:
        lines += [
            f"{i}. {opportunity_name(o, a)} — est. {o.est_gain_pct:.1f}% gain — trigger: {o.trigger}"
            for i, o in enumerate(a.opportunities[:3], 1)
        ]
    elif a.bottleneck is None:
        lines.append(f"1. {NA} — no GPU measurements to rank opportunities from")
    elif a.bottleneck == SUSPECT:
        lines.append(
            f"1. {NA} — the dominant stage is suspect: its figures are not its kernel's work (Key Issue)"
        )
    else:
        lines.append("1. None triggered — every measured metric is within its healthy range")
    lines += ["", "### vs Baseline (if applicable)"]
    lines += render_baseline_table(result, baseline, vs)
    return "\n".join(lines) + "\n"


def cpu_figures_line(result: ProfileResult) -> str:
    """On the CPU, where nearly every figure above is n/a: which figures report.md has, and where it is."""
    has = ["each stage's wall-time median, spread and runs (Timing; every sample in samples.csv)"]
    if any(s.has_model for s in result.stages):
        has.append("the FLOP/s and GB/s of the model at those times (Roofline)")
    if result.phases_s:
        has.append("the profiling process's wall time by phase")
    if not result.command:  # a command has no reference to check against
        has.append("the correctness and integrity checks")
    where = f"{result.profile_dir.rstrip('/')}/report.md" if result.profile_dir else "report.md"
    listed = ", ".join(has[:-1]) + " and " + has[-1] if len(has) > 1 else has[0]
    return f"**CPU figures**: {where} has {listed}."


def integrity_line(failed: list[str]) -> str:
    """The contract's line for a profile whose integrity checks after timing failed (issue 37)."""
    return (
        "**Integrity**: FAILED after timing — "
        + "; ".join(failed)
        + ". The times above are not the kernel's work: no verdict (baseline, compare_versions) calls this "
        "version faster."
    )


def _change(
    prev: float | None, cur: float | None, lower_is_better: bool, noise: float = 0.0, cpu: bool = False
) -> str:
    if prev is None or cur is None or prev == 0:
        return NA
    pct = 100.0 * (cur - prev) / prev
    txt = f"{pct:+.1f}%"
    if lower_is_better and cur > 0:
        speed = prev / cur
        txt += f" ({'CPU: ' if cpu else ''}{speed:.2f}x {'faster' if speed >= 1 else 'slower'})"
    if abs(pct) <= 100.0 * noise:
        txt += " (within noise)"
    return txt


def _baseline_ci(vs: VsBaseline, cpu: bool = False) -> str | None:
    """The speed-up's 95 % bootstrap CI from both profiles' raw samples, when both kept them
    (same timing method, one stage or a whole-plan time, ≥ 4 samples a side)."""
    c = vs.whole
    if c is None:
        return None
    return ("CPU: " if cpu else "") + (
        f"speed-up {c.speedup:.3f} (95 % CI {c.ci_low:.3f}–{c.ci_high:.3f}, {c.verdict}; bootstrap of the two "
        "profiles' raw samples, taken in separate processes: compare_versions gives the same-process verdict)"
    )


def _verdict_row(sv: StageVerdict, cpu: bool = False) -> list[Any]:
    """A stage's verdict: faster / slower / no significant change, and what it used; on the CPU
    prefixed "CPU:" and never bold (a CPU wall time says nothing of the GPU)."""
    used, floor = judgement_words(sv.judgement), sv.floor
    if floor and floor.get("from"):  # which A/A series set the floor, and whether it is of the stage's class
        cls = {
            "same": f"{floor.get('bound')}-bound, as this stage",
            "any": f"no {floor.get('bound')}-bound series measured",
        }.get(floor.get("class", ""), "")
        used = used.replace(
            f"noise floor {floor['pct']:.2f} %",
            f"noise floor {floor['pct']:.2f} % ({floor['from']}" + (f"; {cls}" if cls else "") + ")",
            1,
        )
    verdict = f"CPU: {sv.judgement.verdict}" if cpu else f"**{sv.judgement.verdict}**"
    return [sv.stage, f"{sv.prev_ns / 1e3:.2f} → {sv.cur_ns / 1e3:.2f}", verdict, used]


def _verdicts(result: ProfileResult, vs: VsBaseline) -> list[str]:
    """The verdict table under the vs-Baseline table (issue 27): per stage, from both profiles'
    samples (CI) and this GPU's measured noise floor."""
    rows = [_verdict_row(sv, result.device.kind != "cuda") for sv in vs.stages]
    if not rows:
        return []
    src = result.noise_floor.get("source") if result.noise_floor else None
    return [
        "",
        "Verdict per stage (time in µs, previous → current; faster/slower only when the change exceeds the "
        "noise floor (with none measured, the profiles' own spread) and the CI excludes no change"
        + (f"; floor from {src}" if src else "")
        + "):",
    ] + table(["Stage", "Time (µs)", "Verdict", "Used"], rows)


NO_BASELINE = "no baseline (first profile of this version, or none given)"


def render_baseline_table(
    result: ProfileResult, baseline: ProfileResult | None, vs: VsBaseline | None = None
) -> list[str]:
    """The vs-Baseline table, the verdict per stage and the baseline's line; ``vs``: ``result``
    against ``baseline`` (:func:`kprof_mcp.analysis.baseline.against`), computed here when not given."""
    header = ["Metric", "Previous", "Current", "Change"]
    if baseline is None:  # SPEC's heading stays; an empty table would be an empty section
        return [NO_BASELINE]
    vs = vs or against(result, baseline)
    which = f"Baseline: {baseline.kernel} {baseline.version} ({baseline.profile_dir})"
    if vs.refused:
        return [f"Refused: {vs.refused}.", "", which + "."]
    cpu = result.device.kind != "cuda"
    lines: list[str] = []
    if vs.mismatch:
        lines += [
            "Compared despite a mismatch (allow_mismatch): " + "; ".join(vs.mismatch) + ". The verdict below "
            "is not of like with like.",
            "",
        ]
    rows: list[list[Any]] = []
    noise = max([s.timing.rel_iqr for s in result.stages + baseline.stages] or [0.0])
    pt, ct = baseline.total_time_ns(), result.total_time_ns()
    rows.append(["Duration (us)", f"{pt / 1e3:.2f}", f"{ct / 1e3:.2f}", _change(pt, ct, True, noise, cpu)])
    prev_stages = {s.name: s for s in baseline.stages}
    for s in result.stages:
        p = prev_stages.get(s.name)
        if p is None:
            continue
        if len(result.stages) > 1:
            rows.append(
                [
                    f"{s.name} duration (us)",
                    f"{p.timing.median_ns / 1e3:.2f}",
                    f"{s.timing.median_ns / 1e3:.2f}",
                    _change(p.timing.median_ns, s.timing.median_ns, True, noise, cpu),
                ]
            )
        # a stage without a FLOP/byte model (a command's, without stage_models): n/a, not 0
        pm, cm = p.has_model, s.has_model
        rows.append(
            [
                f"{s.name} TFLOP/s" if len(result.stages) > 1 else "Achieved TFLOP/s",
                f"{p.achieved_flops_per_s / 1e12:.3f}" if pm else NA,
                f"{s.achieved_flops_per_s / 1e12:.3f}" if cm else NA,
                _change(p.achieved_flops_per_s, s.achieved_flops_per_s, False, noise) if pm and cm else NA,
            ]
        )
        rows.append(
            [
                f"{s.name} GB/s" if len(result.stages) > 1 else "Achieved GB/s",
                f"{p.achieved_bytes_per_s / 1e9:.1f}" if pm else NA,
                f"{s.achieved_bytes_per_s / 1e9:.1f}" if cm else NA,
                _change(p.achieved_bytes_per_s, s.achieved_bytes_per_s, False, noise) if pm and cm else NA,
            ]
        )
        for label, a, b in (
            ("TC%", p.tc_pct, s.tc_pct),
            ("DRAM%", p.dram_pct, s.dram_pct),
            ("Occ%", p.occupancy_pct, s.occupancy_pct),
        ):
            if a is not None or b is not None:
                rows.append([label, num(a), num(b), NA if a is None or b is None else f"{b - a:+.1f} pts"])
    lines += table(header, rows)
    notes = []
    if baseline.kernel != result.kernel:
        notes.append(f"baseline is kernel {baseline.kernel!r}, not {result.kernel!r}")
    from ..analysis.fingerprint import differences

    env = differences(baseline, result)
    if env:
        notes.append(
            "environments differ (" + "; ".join(env) + "): part of the change may be the environment's"
        )
    prev_m, cur_m = (
        sorted({s.timing.method for s in baseline.stages}),
        sorted({s.timing.method for s in result.stages}),
    )
    if prev_m != cur_m:
        note = f"timing methods differ (previous {', '.join(prev_m)}; current {', '.join(cur_m)})"
        if "cuda_events" in prev_m and "cupti_kernel_sum" in cur_m:
            note += (
                ": CUDA-event times include launch latency (+2 to +9 % on 70–300 µs kernels on an H100), so "
                "part of this change is the method; report.md's launch-inclusive row is the like-for-like "
                "figure, or profile the baseline again"
            )
        notes.append(note)
    ci = _baseline_ci(vs, cpu)
    if ci:
        notes.append(ci)
    lines += _verdicts(result, vs)
    lines.append("")
    lines.append(
        f"{which}; timing spread up to {100 * noise:.1f}% IQR/median"
        + ("; " + "; ".join(notes) if notes else "")
        + "."
    )
    return lines

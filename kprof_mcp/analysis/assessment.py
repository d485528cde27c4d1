"""The assessment of one profile, computed once: what every renderer reads.

:func:`assess` turns a :class:`~kprof_mcp.models.ProfileResult` into an :class:`Assessment`:
per stage the metrics the classifier sees, its diagnosis and its key issue; the dominant
stage and its bottleneck; the root cause; every opportunity of every stage (and of the
timeline) ranked by its estimated gain for the *whole profile*; and the result's typed
warnings. The contract, the structured tool output, ``report.md`` and the devlog all read
this object, worded by :func:`kprof_mcp.render.diagnosis.assess`, so a change to the diagnosis is
made here once.

Units stay as measured (ns, bytes, FLOP/s, %) and opportunities and the root cause are facts;
formatting, scaling and wording belong to :mod:`kprof_mcp.render`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..models import ProfileResult, ResultWarning, StageResult
from . import diagnosis as dx
from .accounting import account
from .idle import idle_owner
from .machine_inputs import (
    as_ran,
    dot_on_fma_pipes,
    elem_bytes,
    host_floor_share,
    host_method_share,
    kernel_busy,
    machine_for,
    model_inputs,
)
from .occupancy import Occupancy, of_result
from .peaks import (
    ROOFLINE_COMPUTE_ATTAINABLE_LOCKED_PCT,
    SUSPECT,
    AtClock,
    OverPeak,
    _over_peak,
    at_clock,
    clock_ratio,
    pct_peak_flops_at_clock,
    peak_mhz,
    ran_at_mhz,
    suspect_reasons,
)
from .ranks import rank_opportunities, rank_root_cause

# A stage whose best opportunity is below this is at its roof: the key issue names the limiter.
KEY_ISSUE_MIN_GAIN_PCT = 5.0


@dataclass(frozen=True)
class KeyIssue:
    """The one-line issue of a stage, as data.

    ``kind``: ``trigger`` (the top opportunity, ``top``: the dominant limiter), ``at_roof`` (nothing
    worth 5 %: ``values`` has the bottleneck's own ``metric`` and ``value``), ``healthy`` (counters
    measured, nothing triggered), ``launch_bound`` (the timeline shows the host cannot feed the
    GPU), ``roofline`` (no counters: % of peak from the FLOP/byte model), ``cpu`` (CPU timing)
    ``suspect`` (its figures cannot be its kernel's work: ``values['reason']``, issue 37),
    ``no_peaks`` (device not in devices.json) or ``no_model`` (a command's stage with neither a
    FLOP/byte model nor counters).
    """

    kind: str
    top: dx.Opportunity | None = None
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StageAssessment:
    stage: StageResult
    metrics: dx.Metrics | None  # what the classifier saw (counters, or the roofline estimate)
    diagnosis: dx.Diagnosis | None  # None when nothing can be classified (CPU timing, unknown device)
    key_issue: KeyIssue
    share: float  # of the summed stage time: weights this stage's gains in the whole profile
    at_clock: AtClock | None = None  # its % of the peaks at the clock it ran (set by assess)


@dataclass(frozen=True)
class RankedOpportunity:
    """One opportunity with its estimated gain for the whole profile (Amdahl over the stage's
    share of the time) and the gain of its stage alone."""

    opportunity: dx.Opportunity  # its cause and facts, as the stage's (or the timeline's) diagnosis found it
    est_gain_pct: float
    stage: str | None  # None: a whole-plan finding of the timeline
    stage_gain_pct: float
    source: str  # "kprof" (our model), "ncu" (Nsight Compute's rule estimate), "timeline" or "ranks"

    @property
    def cause(self) -> str:
        """The diagnosis' cause key (spills, few_blocks, tail, over_fetch, launch, ...)."""
        return self.opportunity.cause


@dataclass(frozen=True)
class RootCause:
    """``kind``: ``suspect`` (the main stage's figures are not its kernel's work: ``values`` has its
    ``stage`` and ``reason``), ``diagnosis`` (counters), ``roofline`` (estimated from the FLOP/byte model;
    ``values`` has the intensity, ridge and region), ``launch_bound`` (timeline) or ``none``
    (nothing to classify with; ``values['reason']`` is ``cpu`` or ``no_peaks``)."""

    kind: str
    facts: dx.RootCauseFacts | None  # the main stage's diagnosis (None for kind none)
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Assessment:
    stages: tuple[StageAssessment, ...]
    main: StageAssessment  # the dominant stage: the longest
    bottleneck: str | None
    locality_issue: bool
    root_cause: RootCause
    opportunities: tuple[RankedOpportunity, ...]  # all of them, largest estimated gain first
    warnings: tuple[ResultWarning, ...]  # the result's; render adds the over-peak ones, worded
    total_time_ns: float
    flops: float
    bytes_model: float
    over_peak: tuple[OverPeak, ...] = ()
    occupancy: dict[str, Occupancy] = field(default_factory=dict)

    @property
    def achieved_flops_per_s(self) -> float | None:
        return self.flops / (self.total_time_ns * 1e-9) if self.total_time_ns > 0 else None

    @property
    def achieved_bytes_per_s(self) -> float | None:
        return self.bytes_model / (self.total_time_ns * 1e-9) if self.total_time_ns > 0 else None

    def stage(self, name: str) -> StageAssessment:
        return next(s for s in self.stages if s.stage.name == name)


def sol_ns(s: StageResult, max_sm_mhz: float | None = None) -> float | None:
    """The stage's speed-of-light time at the clocks it ran: max(FLOPs / (peak FLOP/s x clock
    ratio), model bytes / peak bytes/s), and never under the device's shortest launch times the
    stage's launches per run (an empty kernel: 0.83 µs on an H100, where a 4-block 1 µs kernel
    got slower, not 33x faster, on 132 blocks). Memory clocks are not locked by ncu, so the
    bandwidth term keeps the datasheet peak."""
    if not s.peak_bytes_per_s or not s.has_model:
        return None  # no FLOP/byte model (a command's stage): no speed of light
    t_mem = s.bytes_model / s.peak_bytes_per_s
    t_math = s.flops / (s.peak_flops_per_s * clock_ratio(s, max_sm_mhz)) if s.peak_flops_per_s else 0.0
    launches = sum(k.launches_per_run for k in s.kernel_times) or 1.0
    floor = (s.min_kernel_ns or 0.0) * launches
    return max(1e9 * max(t_mem, t_math), floor)


def _local_share(s: StageResult) -> float | None:
    """Spill bytes as a share of all L1 traffic (ncu), else of spill + DRAM traffic."""
    local = s.measured_local_bytes
    if local is None or local <= 0:
        return None
    if s.l1_bytes:
        return min(1.0, local / s.l1_bytes)
    if s.dram_bytes is not None:
        return local / (local + s.dram_bytes)
    return None


def _attainable_sol_ns(s: StageResult, max_sm_mhz: float | None) -> float | None:
    """The model's bytes at 90 % of peak bandwidth, its FLOPs at 95 % of the peak at the clock the
    stage ran: what tuned kernels reach (None without a model)."""
    if not (s.peak_bytes_per_s and s.has_model):
        return None
    ratio = clock_ratio(s, max_sm_mhz)
    t_mem = s.bytes_model / (s.peak_bytes_per_s * dx._DRAM_ATTAINABLE_PCT / 100.0)
    t_math = (
        s.flops / (s.peak_flops_per_s * ratio * dx._COMPUTE_ATTAINABLE_PCT / 100.0)
        if s.peak_flops_per_s
        else 0.0
    )
    return 1e9 * max(t_mem, t_math)


def _evidence(s: StageResult, max_sm_mhz: float | None) -> dict[str, Any]:
    """What the catalogue weighs the accounting against (see ``diagnosis.accounting_causes``)."""
    if not s.accounting:
        return {}
    return dict(
        accounting=account(s.accounting, s.tc_pct),
        flops=s.flops or None,
        int_ops=s.int_ops or None,
        elem_bytes=elem_bytes(s.dtype),
        attainable_sol_ns=_attainable_sol_ns(s, max_sm_mhz),
    )


def stage_metrics(
    s: StageResult,
    max_sm_mhz: float | None = None,
    kernel_busy: float = 1.0,
    result: ProfileResult | None = None,
    machine: Any = None,
) -> dx.Metrics:
    """What the classifier sees: counters when measured, else the roofline estimate from the
    FLOP/byte model (a lower bound on real traffic); and the time model (measured time,
    speed-of-light time at the clocks it ran, grid, SMs, spill share). A persistent stage's
    waves and grid are left out: fewer programs than slots is its design, not idle SMs."""
    if not s.counters_measured:
        s = dot_on_fma_pipes(s, result)  # a GEMM library's SIMT kernels: its math ran on the FMA pipes
    spill = s.resources.local_spill_bytes if s.resources else None
    waves = None if s.persistent else s.waves_per_sm
    timing = dict(
        time_ns=s.timing.median_ns,
        sol_ns=sol_ns(s, max_sm_mhz),
        grid_blocks=None if s.persistent else s.grid_blocks,
        sm_count=s.sm_count,
        kernel_busy=kernel_busy,
        host_cap=host_floor_share(result),
        host_cap_method=host_method_share(result),
        **model_inputs(s, result, machine, clock_ratio(s, max_sm_mhz)),
    )
    if s.counters_measured:
        if s.measured_local_bytes is not None:
            spill = s.measured_local_bytes
        return dx.Metrics(
            tc_pct=s.tc_pct,
            dram_pct=s.dram_pct,
            occupancy_pct=s.occupancy_pct,
            l2_hit_pct=s.l2_hit_pct,
            local_spill_bytes=spill,
            waves_per_sm=waves,
            compute_pct=s.sm_pct,
            over_fetch_ratio=s.over_fetch_ratio,
            waves_measured=s.measured_waves_per_sm is not None and not s.persistent,
            local_share=_local_share(s),
            l1_bytes=s.l1_bytes,
            kernels=max(1, len(s.ncu_kernels)),
            **timing,
            **_evidence(s, max_sm_mhz),
        )
    ratio = clock_ratio(s, max_sm_mhz)  # the compute peak at the clock the stage ran; DRAM's is not scaled
    est = dx.roofline_metrics(
        s.achieved_flops_per_s,
        s.achieved_bytes_per_s,
        s.peak_flops_per_s * ratio if s.peak_flops_per_s else s.peak_flops_per_s,
        s.peak_bytes_per_s,
        s.tensor_cores,
    )
    kernels = max(1, len(s.ncu_kernels), len(s.kernel_times))
    locked = result is not None and bool(result.device.sm_clock_lock_mhz) and ratio < 1.0
    return dx.Metrics(
        tc_pct=est.tc_pct,
        dram_pct=est.dram_pct,
        compute_pct=est.compute_pct,
        compute_attainable_pct=ROOFLINE_COMPUTE_ATTAINABLE_LOCKED_PCT
        if locked
        else est.compute_attainable_pct,
        local_spill_bytes=spill,
        waves_per_sm=waves,
        kernels=kernels,
        attainable_sol_ns=_attainable_sol_ns(s, max_sm_mhz),
        flops=s.flops or None,
        **timing,
    )


def _rounded(d: dx.Diagnosis) -> dx.Diagnosis:
    """Gains at 0.1 % resolution, as they are shown: ranking on unshown digits would order ties
    arbitrarily."""
    return replace(
        d, opportunities=tuple(replace(o, est_gain_pct=round(o.est_gain_pct, 1)) for o in d.opportunities)
    )


LAUNCH_BOUND_BUSY_PCT = 50.0  # as the timeline's verdict: kernels run under half of the time


def _launch(result: ProfileResult) -> dict[str, Any]:
    """The launch verdict: the timeline's, or in event mode the one its two timings give.

    Event mode times each stage's kernels (CUPTI) and, beside that, each run from the host's
    first launch to the last kernel's end (CUDA events). When a run launches several kernels and
    they are busy under half of that time, the host sets the pace: the GPU waits between launches,
    and no kernel tuning shortens the run. Shaped like the timeline's verdict, so the key issue,
    root cause and the launch opportunity are the same whichever mode found it."""
    tl = (result.timeline or {}).get("launch")
    if tl:
        return tl
    timed = [s for s in result.stages if s.launch_timing is not None and s.kernel_times]
    if not timed:
        return {}
    kernel_ns = sum(s.timing.median_ns for s in timed)
    run_ns = sum(s.launch_timing.median_ns for s in timed)
    launches = sum(k.launches_per_run for s in timed for k in s.kernel_times)
    if kernel_ns <= 0 or run_ns <= 0 or launches <= 1:
        return {}
    busy = 100.0 * kernel_ns / run_ns
    per_kernel, interval = kernel_ns / launches, run_ns / launches
    bound = busy < LAUNCH_BOUND_BUSY_PCT and per_kernel < interval
    return {
        "launch_bound": bound,
        "gpu_busy_pct": busy,
        "kernel_median_ns": per_kernel,
        "launch_interval_median_ns": interval,
        "launches_per_iteration": launches,
        "run_ns": run_ns,
        "source": "event mode: CUPTI kernel time vs launch-inclusive CUDA-event time per run",
    }


def assess_stage(
    s: StageResult,
    device_kind: str,
    launch: dict[str, Any] | None = None,
    share: float = 1.0,
    max_sm_mhz: float | None = None,
    kernel_busy: float = 1.0,
    result: ProfileResult | None = None,
    machine: Any = None,
) -> StageAssessment:
    """One stage: its metrics, diagnosis and key issue (``launch``: the timeline's launch
    verdict, when the profile has one; ``max_sm_mhz``: the device's maximum SM clock, to put
    the speed of light at the clock the stage ran)."""
    if device_kind != "cuda" or not s.peak_bytes_per_s:
        return StageAssessment(s, None, None, KeyIssue("cpu" if device_kind != "cuda" else "no_peaks"), share)
    if not s.has_model and not s.counters_measured:
        # A command's stage without counters or a FLOP/byte model: nothing to place or classify.
        return StageAssessment(s, None, None, KeyIssue("no_model"), share)
    m = stage_metrics(s, max_sm_mhz, kernel_busy, result, machine)
    d = _rounded(dx.diagnose(m))
    if s.counters_measured:
        top = d.opportunities[0] if d.opportunities else None
        if top is not None and top.est_gain_pct >= KEY_ISSUE_MIN_GAIN_PCT:
            issue = KeyIssue("trigger", top)
        else:  # nothing worth doing: the limiter is the roof itself
            c, src = dx.compute_utilisation(m)
            metric = (
                ("dram_pct", m.dram_pct)
                if d.bottleneck == dx.MEMORY_BOUND and m.dram_pct is not None
                else (src, c)
                if c is not None
                else None
            )
            issue = (
                KeyIssue("at_roof", values={"metric": metric[0], "value": metric[1]})
                if metric and d.bottleneck != dx.LATENCY_BOUND
                else KeyIssue("healthy")
            )
    elif launch and launch.get("launch_bound"):
        issue = KeyIssue(
            "launch_bound",
            values={
                k: launch.get(k) for k in ("gpu_busy_pct", "kernel_median_ns", "launch_interval_median_ns")
            },
        )
    else:
        issue = KeyIssue(
            "roofline",
            values={
                "pct_peak_bandwidth": s.pct_peak_bandwidth,
                "pct_peak_flops": pct_peak_flops_at_clock(s, max_sm_mhz),
                "pct_peak_flops_nominal": s.pct_peak_flops,
                "clock_mhz": ran_at_mhz(s) if clock_ratio(s, max_sm_mhz) < 1.0 else None,
                "tensor_cores": s.tensor_cores,
            },
        )
    return StageAssessment(s, m, d, issue, share)


def _suspected(sa: StageAssessment, why: str | None) -> StageAssessment:
    """A stage whose figures cannot be its kernel's work (issue 37, :func:`.peaks.suspect_reasons`):
    bottleneck ``suspect``, the reason as its key issue, and no opportunity on it."""
    if why is None:
        return sa
    d = sa.diagnosis and replace(sa.diagnosis, bottleneck=SUSPECT, opportunities=())
    return replace(sa, diagnosis=d, key_issue=KeyIssue("suspect", values={"reason": why}))


def overall_gain(stage_gain_pct: float, share: float) -> float:
    """Amdahl: the whole profile's gain when a stage taking ``share`` of the time gets
    ``stage_gain_pct`` % faster."""
    g = stage_gain_pct / 100.0
    return 100.0 * (1.0 / (1.0 - share + share / (1.0 + g)) - 1.0)


def _ranked(result: ProfileResult, stages: list[StageAssessment]) -> list[RankedOpportunity]:
    out: list[tuple[RankedOpportunity, int, bool]] = []
    for sa in stages:
        if sa.diagnosis is None or sa.diagnosis.bottleneck == SUSPECT:
            continue
        h = sa.metrics.headroom if sa.metrics else None
        explained = max((o.share for o in sa.diagnosis.opportunities if o.specific), default=0.0)
        rules = dx.rule_opportunities(sa.stage.ncu_rules, None if h is None else max(0.0, h - explained))
        for source, opps in (("kprof", sa.diagnosis.opportunities), ("ncu", rules)):
            for o in opps:
                out.append(
                    (
                        RankedOpportunity(
                            o, overall_gain(o.est_gain_pct, sa.share), sa.stage.name, o.est_gain_pct, source
                        ),
                        0,
                        o.specific,
                    )
                )
    launch = _launch(result)
    whole = [(o, "ranks") for o in rank_opportunities(result.command)]  # a multi-rank job's (issue 39)
    if (passes := dx.reread_across_stages(result, stages)) is not None:  # stages re-reading the data
        whole.append((passes, "kprof"))
    # small launches of one kernel in a row, launched as one
    if (batched := dx.batch_across_stages(result, stages)) is not None:
        whole.append((batched, "kprof"))
    if result.timeline or launch.get("launch_bound"):  # whole-plan findings: already gains of the plan
        sols = [sa.metrics.sol_ns if sa.metrics else None for sa in stages]
        # Event mode's launch verdict is a share of the run as the host sees it (CUDA events).
        total = result.total_time_ns() if result.timeline else launch["run_ns"]
        plan_headroom = max(0.0, 1.0 - sum(sols) / total) if total > 0 and sols and None not in sols else None
        tl = dx.timeline_opportunities(result.timeline or {"launch": launch}, result.plan_kind, plan_headroom)
        whole += [(o, "timeline") for o in tl]
    # A run of one partial-fill kernel the replay launched as one (streams, move "batch") and a stage's own
    # few-blocks what-if of those launches (the same grid) are two estimates of one under-filled GPU: the
    # replay's, made of the recorded launches in their order and with their durations, stands.
    batched = [o for o, _ in whole if o.cause == "streams" and o.facts.move == "batch"]
    runs = {o.facts.grid_blocks for o in batched if o.facts.grid_blocks is not None}
    out = [t for t in out if not (t[0].cause == "few_blocks" and t[0].opportunity.facts.grid_blocks in runs)]
    out += [(RankedOpportunity(o, o.est_gain_pct, None, o.est_gain_pct, src), 1, True) for o, src in whole]
    # Largest gain first. Ties (gains capped by the same headroom) go to what the timeline saw (it
    # measured the plan), then to our specific causes, then to generic advice and ncu's estimates.
    out.sort(key=lambda t: (round(t[0].est_gain_pct, 1), t[1], t[0].source == "kprof" and t[2]), reverse=True)
    return [o for o, _, _ in out]


def _root_cause(result: ProfileResult, main: StageAssessment) -> RootCause:
    if straggler := rank_root_cause(result.command):  # a multi-rank job's ranks wait for one (issue 39)
        return RootCause("straggler", None, straggler)
    if main.diagnosis is None:
        return RootCause("none", None, {"reason": main.key_issue.kind})
    if main.key_issue.kind == "suspect":
        why = {"stage": main.stage.name, "reason": main.key_issue.values["reason"]}
        return RootCause("suspect", None, why)
    launch = _launch(result)
    if launch.get("launch_bound"):
        owner = idle_owner((result.timeline or {}).get("idle") or {})
        return RootCause("launch_bound", main.diagnosis.root_cause, {**launch, **owner})
    s = main.stage
    if not s.counters_measured:
        return RootCause(
            "roofline",
            main.diagnosis.root_cause,
            {
                "intensity_flop_per_byte": s.intensity_flop_per_byte,
                "ridge_flop_per_byte": s.ridge_flop_per_byte,
                "region": s.roofline_region,
            },
        )
    return RootCause("diagnosis", main.diagnosis.root_cause)


def assess(result: ProfileResult) -> Assessment:
    """The whole profile's assessment (see the module docstring)."""
    result = as_ran(result)  # each stage's pipe as its kernels ran it, not as its model declared
    total = sum(s.timing.median_ns for s in result.stages) or 1.0
    launch = _launch(result)
    busy = kernel_busy(result)
    machine = machine_for(result)
    stages = [
        assess_stage(
            s,
            result.device.kind,
            launch,
            s.timing.median_ns / total,
            peak_mhz(result, s),
            busy.get(s.name, 1.0),
            result,
            machine,
        )
        for s in result.stages
    ]
    suspects = suspect_reasons(result)
    stages = [
        replace(
            _suspected(sa, suspects.get(sa.stage.name)),
            at_clock=at_clock(sa.stage, peak_mhz(result, sa.stage)),
        )
        for sa in stages
    ]
    main = max(stages, key=lambda sa: sa.stage.timing.median_ns)
    return Assessment(
        stages=tuple(stages),
        main=main,
        bottleneck=main.diagnosis.bottleneck if main.diagnosis else None,
        locality_issue=bool(main.diagnosis and main.diagnosis.locality_issue),
        root_cause=_root_cause(result, main),
        opportunities=tuple(_ranked(result, stages)),
        warnings=tuple(result.warnings),
        over_peak=tuple(_over_peak(result)),
        total_time_ns=result.total_time_ns(),
        flops=sum(s.flops for s in result.stages),
        bytes_model=sum(s.bytes_model for s in result.stages),
        occupancy=of_result(result),
    )

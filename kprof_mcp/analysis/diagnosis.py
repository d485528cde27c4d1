"""Pure analysis: health thresholds, bottleneck classification, ranked opportunities.

Everything here is a function of numbers (percentages, bytes, waves); nothing reads a
device, a file or a clock, so every rule is unit-testable and fast (``classify`` runs in
microseconds).

Thresholds and the classification table are SPEC.md's (from the profiling guide):

=================  =========  ==================================================
metric             healthy    if unhealthy
=================  =========  ==================================================
TC util            > 60 %     memory- or latency-bound
DRAM throughput    > 70 %     compute- or latency-bound
occupancy          > 25 %     register / shared-memory pressure
L2 hit rate        > 80 %     poor data reuse (a *locality issue* flag)
local spilling     0 bytes    register overflow
waves / SM         > 1.0      under-filled GPU
DRAM bytes ÷ model ≤ 1.25     over-fetch (uncoalesced/strided access, L2 misses)
=================  =========  ==================================================

The last row is ours, not the guide's: with counters, measured DRAM bytes over the kernel's
byte model exposes traffic the algorithm does not need.

A kernel with no tensor-core work (elementwise, reductions, FP32 SIMT) has TC% = 0 by
construction, so its compute utilisation is taken from SM throughput (``compute_pct``).

Estimated gains are upper-bound figures from a deliberately simple model, stated per rule
in :func:`opportunities`: "how much faster would this stage be if this one metric reached
its healthy value, all else equal". They rank opportunities; they are not predictions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

TC_HEALTHY_PCT = 60.0
DRAM_HEALTHY_PCT = 70.0
OCCUPANCY_HEALTHY_PCT = 25.0
L2_HIT_HEALTHY_PCT = 80.0
WAVES_HEALTHY = 1.0
SPILL_HEALTHY_BYTES = 0
OVER_FETCH_HEALTHY = 1.25

# What "at the roof" means when estimating headroom: a well-tuned memory-bound kernel
# reaches ~90 % of peak DRAM bandwidth, a well-tuned GEMM ~80 % of tensor peak.
_DRAM_ATTAINABLE_PCT = 90.0
_COMPUTE_ATTAINABLE_PCT = 80.0
_GAIN_CAP_PCT = 300.0

MEMORY_BOUND = "Memory-bound"
COMPUTE_BOUND = "Compute-bound"
LATENCY_BOUND = "Latency-bound"
BOTTLENECKS = (MEMORY_BOUND, COMPUTE_BOUND, LATENCY_BOUND)


@dataclass(frozen=True)
class Metrics:
    """Per-stage utilisation figures. ``None`` means "not measured", never zero."""

    tc_pct: float | None = None
    dram_pct: float | None = None
    occupancy_pct: float | None = None
    l2_hit_pct: float | None = None
    local_spill_bytes: float | None = None
    waves_per_sm: float | None = None
    compute_pct: float | None = None  # SM throughput; the compute figure when TC% is 0 by construction
    over_fetch_ratio: float | None = None  # measured DRAM bytes / model bytes


@dataclass(frozen=True)
class Opportunity:
    name: str
    est_gain_pct: float
    trigger: str  # "metric=value"
    hint: str = ""


@dataclass(frozen=True)
class Diagnosis:
    bottleneck: str
    locality_issue: bool
    unhealthy: tuple[str, ...]
    opportunities: tuple[Opportunity, ...]
    compute_source: str  # "tc_pct", "compute_pct" or "none"
    root_cause: str
    notes: tuple[str, ...] = field(default_factory=tuple)


def _fmt(v: float) -> str:
    return f"{v:.1f}" if abs(v) < 1e5 else f"{v:.3g}"


def compute_utilisation(m: Metrics) -> tuple[float | None, str]:
    """The compute figure to classify with, and where it came from.

    TC% when the kernel uses the tensor pipe; SM throughput when TC% is absent or ~0
    (kernels with no tensor-core work would otherwise all look latency-bound).
    """
    if m.tc_pct is not None and m.tc_pct >= 1.0:
        return m.tc_pct, "tc_pct"
    if m.compute_pct is not None:
        return m.compute_pct, "compute_pct"
    if m.tc_pct is not None:
        return m.tc_pct, "tc_pct"
    return None, "none"


def unhealthy_metrics(m: Metrics) -> list[str]:
    """``metric=value`` for each measured metric outside its healthy range."""
    out: list[str] = []
    compute, source = compute_utilisation(m)
    if compute is not None and compute <= TC_HEALTHY_PCT:
        out.append(f"{source}={_fmt(compute)}")
    if m.dram_pct is not None and m.dram_pct <= DRAM_HEALTHY_PCT:
        out.append(f"dram_pct={_fmt(m.dram_pct)}")
    if m.occupancy_pct is not None and m.occupancy_pct <= OCCUPANCY_HEALTHY_PCT:
        out.append(f"occupancy_pct={_fmt(m.occupancy_pct)}")
    if m.l2_hit_pct is not None and m.l2_hit_pct < L2_HIT_HEALTHY_PCT:
        out.append(f"l2_hit_pct={_fmt(m.l2_hit_pct)}")
    if m.local_spill_bytes is not None and m.local_spill_bytes > SPILL_HEALTHY_BYTES:
        out.append(f"local_spill_bytes={int(m.local_spill_bytes)}")
    if m.waves_per_sm is not None and m.waves_per_sm <= WAVES_HEALTHY:
        out.append(f"waves_per_sm={m.waves_per_sm:.2f}")
    if m.over_fetch_ratio is not None and m.over_fetch_ratio > OVER_FETCH_HEALTHY:
        out.append(f"dram_bytes/model={m.over_fetch_ratio:.2f}")
    return out


def classify(m: Metrics) -> str:
    """SPEC.md's table: DRAM high & compute low → memory; compute high & DRAM low → compute;
    both low → latency. When both are high, the one closer to its roof wins."""
    compute, _ = compute_utilisation(m)
    dram = m.dram_pct
    compute_high = compute is not None and compute > TC_HEALTHY_PCT
    dram_high = dram is not None and dram > DRAM_HEALTHY_PCT
    if dram_high and not compute_high:
        return MEMORY_BOUND
    if compute_high and not dram_high:
        return COMPUTE_BOUND
    if compute_high and dram_high:
        assert compute is not None and dram is not None
        return MEMORY_BOUND if dram / DRAM_HEALTHY_PCT >= compute / TC_HEALTHY_PCT else COMPUTE_BOUND
    return LATENCY_BOUND


def _headroom(current_pct: float, target_pct: float) -> float:
    """% faster if a throughput at ``current_pct`` of peak rose to ``target_pct``."""
    if current_pct <= 0:
        return _GAIN_CAP_PCT
    return max(0.0, min(_GAIN_CAP_PCT, (target_pct / current_pct - 1.0) * 100.0))


def _time_share_gain(fraction: float) -> float:
    """Speed-up in % when ``fraction`` of a stage's time disappears: 1/(1 − f) − 1."""
    return _GAIN_CAP_PCT if fraction >= 1.0 else max(0.0, (1.0 / (1.0 - fraction) - 1.0) * 100.0)


def opportunities(m: Metrics, bottleneck: str | None = None) -> list[Opportunity]:
    """Every opportunity the metrics trigger, ranked by estimated gain (largest first).

    Gain models (all capped at 300 %):

    * memory-bound, DRAM below 90 %: time ∝ 1/bandwidth → 90/dram − 1.
    * compute-bound, compute below 80 %: 80/compute − 1.
    * latency-bound: the stage is under both roofs; the gain of reaching the nearer roof's
      healthy level (70 % DRAM or 60 % compute) from the larger of the two utilisations.
    * waves/SM < 1: only that fraction of SMs work → 1/waves − 1.
    * occupancy below 25 %: latency hiding scales roughly with resident warps; half of
      25/occ − 1, and only when the stage is not already at a roof.
    * L2 hit below 80 %: misses become DRAM traffic; the share of traffic that a healthy
      hit rate would remove, x = (80 − hit)/(100 − hit). Memory-bound: 1/(1 − x) − 1.
      Latency-bound: only the DRAM-busy share of the time can shrink, f = dram% · x →
      1/(1 − f) − 1. Compute-bound: halved x. Not raised when measured DRAM bytes are within
      1.25× of the byte model: then every byte is fetched about once (streaming) and locality
      has nothing to save.
    * over-fetch (measured DRAM bytes ÷ model bytes = r > 1.25): time of a memory-bound stage
      scales with bytes moved → r − 1. Latency-bound: the removable traffic share is 1 − 1/r of
      a DRAM that is busy dram% of the time, f = dram% · (1 − 1/r) → 1/(1 − f) − 1 (on the
      H100, MLA decode at DRAM 17.5 % and r = 3.9 was credited 136 % by the old "halved r − 1"
      model; removing the over-fetch gained 2.4 %, this model says 15 %). None for
      compute-bound stages (fewer bytes do not make the math faster; it stays listed as unhealthy).
    * local spills: each spilled byte is extra local-memory traffic in the inner loop;
      10 % plus 5 % per doubling of the spill over 128 bytes, capped at 50 %.
    """
    bottleneck = bottleneck or classify(m)
    compute, source = compute_utilisation(m)
    out: list[Opportunity] = []

    if bottleneck == MEMORY_BOUND and m.dram_pct is not None and m.dram_pct < _DRAM_ATTAINABLE_PCT:
        out.append(Opportunity(
            "Move fewer bytes / reach peak DRAM bandwidth (data reuse, wider vector loads, TMA, fusion)",
            _headroom(m.dram_pct, _DRAM_ATTAINABLE_PCT), f"dram_pct={_fmt(m.dram_pct)}",
            "memory-bound: every byte not moved is time saved"))
    if bottleneck == COMPUTE_BOUND and compute is not None and compute < _COMPUTE_ATTAINABLE_PCT:
        out.append(Opportunity(
            "Raise tensor-core efficiency (tile sizes, pipelining stages, warp specialisation)"
            if source == "tc_pct" else "Raise SM instruction efficiency (fewer instructions per byte, vectorise)",
            _headroom(compute, _COMPUTE_ATTAINABLE_PCT), f"{source}={_fmt(compute)}",
            "compute-bound: the math units are the limit"))
    if bottleneck == LATENCY_BOUND:
        best = max([v for v in (m.dram_pct, compute) if v is not None], default=None)
        if best is not None:
            target = DRAM_HEALTHY_PCT if (m.dram_pct or 0) >= (compute or 0) else TC_HEALTHY_PCT
            which = "dram_pct" if target == DRAM_HEALTHY_PCT else source
            out.append(Opportunity(
                "Expose more parallelism to hide latency (more blocks in flight, more loads in flight, fewer syncs)",
                _headroom(best, target), f"{which}={_fmt(best)}",
                "latency-bound: neither memory nor math is busy"))
    if m.waves_per_sm is not None and 0 < m.waves_per_sm < WAVES_HEALTHY:
        out.append(Opportunity(
            "Fill the GPU: launch more blocks (split K/KV, smaller tiles)",
            min(_GAIN_CAP_PCT, (1.0 / m.waves_per_sm - 1.0) * 100.0), f"waves_per_sm={m.waves_per_sm:.2f}",
            "fewer blocks than SMs can hold: idle SMs"))
    at_roof = bottleneck in (MEMORY_BOUND, COMPUTE_BOUND)
    if m.occupancy_pct is not None and 0 < m.occupancy_pct < OCCUPANCY_HEALTHY_PCT and not at_roof:
        out.append(Opportunity(
            "Raise occupancy (fewer registers or less shared memory per block, smaller tiles)",
            min(_GAIN_CAP_PCT, 0.5 * (OCCUPANCY_HEALTHY_PCT / m.occupancy_pct - 1.0) * 100.0),
            f"occupancy_pct={_fmt(m.occupancy_pct)}", "too few warps to hide latency"))
    no_reuse = m.over_fetch_ratio is not None and m.over_fetch_ratio <= OVER_FETCH_HEALTHY
    if m.l2_hit_pct is not None and m.l2_hit_pct < L2_HIT_HEALTHY_PCT and not no_reuse:
        removable = (L2_HIT_HEALTHY_PCT - m.l2_hit_pct) / max(1e-9, 100.0 - m.l2_hit_pct)
        if bottleneck == MEMORY_BOUND:
            gain = _time_share_gain(removable)
        elif bottleneck == LATENCY_BOUND and m.dram_pct is not None:
            gain = _time_share_gain(m.dram_pct / 100.0 * removable)
        else:
            gain = removable * 0.5 * 100.0
        out.append(Opportunity(
            "Improve L2 locality (swizzled / grouped launch order, larger tiles, data layout)",
            min(_GAIN_CAP_PCT, gain), f"l2_hit_pct={_fmt(m.l2_hit_pct)}",
            "poor data reuse: misses go to DRAM"))
    if m.over_fetch_ratio is not None and m.over_fetch_ratio > OVER_FETCH_HEALTHY and bottleneck != COMPUTE_BOUND:
        if bottleneck == LATENCY_BOUND and m.dram_pct is not None:
            gain = _time_share_gain(m.dram_pct / 100.0 * (1.0 - 1.0 / m.over_fetch_ratio))
        else:
            gain = (m.over_fetch_ratio - 1.0) * 100.0
        out.append(Opportunity(
            "Cut DRAM over-fetch (coalesced/vectorised access, reuse through shared memory or L2, no re-reads)",
            min(_GAIN_CAP_PCT, gain),
            f"dram_bytes/model={m.over_fetch_ratio:.2f}", "more DRAM traffic than the algorithm needs"))
    if m.local_spill_bytes is not None and m.local_spill_bytes > SPILL_HEALTHY_BYTES:
        gain = min(50.0, 10.0 + 5.0 * max(0.0, math.log2(m.local_spill_bytes / 128.0)))
        out.append(Opportunity(
            "Remove register spills (smaller tiles, fewer accumulators, lower num_stages)",
            gain, f"local_spill_bytes={int(m.local_spill_bytes)}", "register overflow to local memory"))
    out.sort(key=lambda o: o.est_gain_pct, reverse=True)
    return out


def root_cause(m: Metrics, bottleneck: str) -> str:
    """At most two sentences naming the limiting resource and the strongest symptom."""
    compute, source = compute_utilisation(m)
    label = "tensor-pipe" if source == "tc_pct" else "SM"
    parts = []
    if m.dram_pct is not None:
        parts.append(f"DRAM at {_fmt(m.dram_pct)}% of peak")
    if compute is not None:
        parts.append(f"{label} utilisation at {_fmt(compute)}%")
    measured = " and ".join(parts) if parts else "no utilisation counters were measured"
    if bottleneck == MEMORY_BOUND:
        first = f"The stage is limited by device-memory bandwidth ({measured})."
    elif bottleneck == COMPUTE_BOUND:
        first = f"The stage is limited by arithmetic throughput ({measured})."
    else:
        first = f"Neither memory nor math is saturated ({measured}), so latency dominates."
    worst = unhealthy_metrics(m)
    if bottleneck == LATENCY_BOUND and worst:
        second = f"Unhealthy: {', '.join(worst[:3])}."
    elif (m.l2_hit_pct is not None and m.l2_hit_pct < L2_HIT_HEALTHY_PCT and m.over_fetch_ratio is not None
          and m.over_fetch_ratio <= OVER_FETCH_HEALTHY):
        second = (f"L2 hit rate {_fmt(m.l2_hit_pct)}% is low, but DRAM traffic is {m.over_fetch_ratio:.2f}× the "
                  "byte model: each byte is fetched about once, so locality has nothing to save.")
    elif m.l2_hit_pct is not None and m.l2_hit_pct < L2_HIT_HEALTHY_PCT:
        second = f"L2 hit rate {_fmt(m.l2_hit_pct)}% also signals poor data reuse."
    else:
        second = ""
    return (first + (" " + second if second else "")).strip()


def diagnose(m: Metrics) -> Diagnosis:
    """Classification, locality flag, unhealthy metrics and ranked opportunities in one call."""
    bottleneck = classify(m)
    _, source = compute_utilisation(m)
    notes = []
    if source == "compute_pct":
        notes.append("compute utilisation taken from SM throughput (no tensor-core work)")
    if source == "none":
        notes.append("no compute utilisation was measured")
    return Diagnosis(
        bottleneck=bottleneck,
        locality_issue=m.l2_hit_pct is not None and m.l2_hit_pct < L2_HIT_HEALTHY_PCT,
        unhealthy=tuple(unhealthy_metrics(m)),
        opportunities=tuple(opportunities(m, bottleneck)),
        compute_source=source,
        root_cause=root_cause(m, bottleneck),
        notes=tuple(notes),
    )


def roofline_metrics(achieved_flops_per_s: float | None, achieved_bytes_per_s: float | None,
                     peak_flops_per_s: float | None, peak_bytes_per_s: float | None,
                     tensor_cores: bool) -> Metrics:
    """Utilisation estimated from the FLOP/byte model (event mode has no counters).

    DRAM% = model bytes/s ÷ peak bytes/s: a lower bound on real traffic (over-fetch is
    invisible here). Compute% likewise from model FLOPs.
    """
    dram = None
    if achieved_bytes_per_s is not None and peak_bytes_per_s:
        dram = 100.0 * achieved_bytes_per_s / peak_bytes_per_s
    comp = None
    if achieved_flops_per_s is not None and peak_flops_per_s:
        comp = 100.0 * achieved_flops_per_s / peak_flops_per_s
    if tensor_cores:
        return Metrics(tc_pct=comp, dram_pct=dram)
    return Metrics(tc_pct=None, dram_pct=dram, compute_pct=comp)


def rule_opportunities(rules: list[dict]) -> list[Opportunity]:
    """Nsight Compute rule results that carry a *global* speed-up estimate, as opportunities.

    ncu states the estimate as the share of the kernel's runtime that could be saved
    (``r`` %); as a gain that is 1/(1 − r) − 1. Local estimates (a speed-up of one part of the
    kernel) and rules without an estimate stay in the report but are not ranked.
    """
    out = []
    for r in rules:
        pct = r.get("speedup_pct")
        if r.get("type") != "OPTIMIZATION" or pct is None or r.get("speedup_type") != "global" or pct <= 0:
            continue
        reduction = min(pct, 95.0) / 100.0
        focus = r.get("focus_metrics") or []
        if focus and focus[0].get("value") is not None:
            trigger = f"{focus[0]['name']}={_fmt(float(focus[0]['value']))}"
        else:
            trigger = f"ncu_est_runtime_saving={_fmt(pct)}%"
        title = r.get("title") or r.get("name") or r.get("rule")
        out.append(Opportunity(f"ncu {r.get('section')}/{r.get('rule')}: {title}",
                               min(_GAIN_CAP_PCT, (1.0 / (1.0 - reduction) - 1.0) * 100.0), trigger,
                               "Nsight Compute's own estimate"))
    out.sort(key=lambda o: o.est_gain_pct, reverse=True)
    return out


def timeline_opportunities(tl: dict, plan_kind: str) -> list[Opportunity]:
    """Opportunities the timeline shows (whole plan; gains capped at 300 %).

    * launch-bound (GPU busy b % of the window, kernels shorter than the launch interval):
      fusing launches or replaying them as a CUDA graph could remove the idle time → 100/b − 1.
    * concurrent plan whose streams overlap little: perfect overlap would take the longest
      stream's busy time instead of their union → union/max − 1.
    * partial last wave with few waves (1 ≤ waves < 4, last-wave efficiency e < 0.5): the
      tail idles (1 − e) of the SMs for one wave → ceil(w)/w − 1 as an upper bound.
    """
    out: list[Opportunity] = []
    launch = tl.get("launch") or {}
    busy = launch.get("gpu_busy_pct")
    if launch.get("launch_bound") and busy:
        out.append(Opportunity("Cut launch overhead: fuse the tiny kernels, or capture the plan in a CUDA graph",
                               min(_GAIN_CAP_PCT, (100.0 / busy - 1.0) * 100.0), f"gpu_busy_pct={_fmt(busy)}",
                               "the GPU waits for the host between kernels"))
    streams = tl.get("streams") or []
    if plan_kind == "concurrent" and len(streams) > 1:
        busy_max = max(s["busy_ns"] for s in streams)
        union = tl.get("gpu_busy_ns") or 0.0
        ov = min(s["overlap_pct"] for s in streams)
        if busy_max > 0 and union > busy_max * 1.1:
            out.append(Opportunity("Make the streams overlap (fewer blocks per kernel, no implicit syncs between "
                                   "streams, stream priorities)", min(_GAIN_CAP_PCT, (union / busy_max - 1.0) * 100.0),
                                   f"stream_overlap_pct={_fmt(ov)}", "concurrent stages run mostly one at a time"))
    for w in tl.get("waves") or []:
        waves = w.get("blocks_per_sm") or 0.0
        if 1.0 <= waves < 4.0 and w.get("last_wave_efficiency", 1.0) < 0.5:
            out.append(Opportunity(f"Even out the last wave of {w['kernel']} (grid a multiple of the SM count, "
                                   "persistent kernel)", min(_GAIN_CAP_PCT, (math.ceil(waves) / waves - 1.0) * 100.0),
                                   f"last_wave_efficiency={w['last_wave_efficiency']:.2f}", "wave quantization"))
    out.sort(key=lambda o: o.est_gain_pct, reverse=True)
    return out

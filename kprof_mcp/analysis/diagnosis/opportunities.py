"""The stage's opportunities from one time model, its root cause, and the whole diagnosis."""

from __future__ import annotations

import math

from .catalogue import (
    MEMORY_LATENCY_STALLS,
    _coalescing_evidence,
    _occupancy_advice,
    _stall_evidence,
    accounting_causes,
)
from .metrics import (
    _DRAM_ATTAINABLE_PCT,
    COMPUTE_BOUND,
    DRAM_HEALTHY_PCT,
    DRAM_SATURATED_PCT,
    L2_HIT_HEALTHY_PCT,
    LATENCY_BOUND,
    MEMORY_BOUND,
    METRICS_ONLY_MAX_SHARE,
    MIN_SHARE,
    OCCUPANCY_HEALTHY_PCT,
    OVER_FETCH_HEALTHY,
    SPILL_HEALTHY_BYTES,
    TAIL_MAX_WAVES,
    TC_HEALTHY_PCT,
    WAVES_HEALTHY,
    Diagnosis,
    Metrics,
    Opportunity,
    _fmt,
    _share_of_gap,
    classify,
    compute_utilisation,
    gain_pct,
    locality_issue,
    unhealthy_metrics,
)


def opportunities(m: Metrics, bottleneck: str | None = None) -> list[Opportunity]:
    """Every opportunity the metrics support, ranked by estimated gain (largest first).

    **One time model.** Every estimate is a *share of the stage's measured time* T that one
    change would remove; the gain is 1/(1 − share) − 1. Each share is capped by the stage's
    headroom h = 1 − T_sol/T, where T_sol = max(FLOPs / peak FLOP/s, model bytes / peak bytes/s)
    at the clocks the stage ran at, so no opportunity claims more than T/T_sol − 1. Shares of
    different causes may overlap (a spill is also memory traffic), so they are alternatives, not
    additive. Generic advice (reach the roof, hide latency, occupancy) is credited only with the
    headroom the specific causes leave unexplained, so a cause the counters pin down outranks
    advice that would apply to any slow kernel. Without T and T_sol (``classify_bottleneck`` on a
    few metrics) shares are capped at :data:`METRICS_ONLY_MAX_SHARE`.

    Kernel-level shares apply to the time kernels run: a timeline's stage span also holds launch
    gaps, so there every share is scaled by the kernels' busy share of the span.

    Specific causes (share of T):

    * too few blocks (grid < SMs, not a persistent grid): only grid/SMs of the SMs work →
      1 − grid/SMs. With only ncu's occupancy-aware waves w < 1 known: 1 − w (an upper bound).
    * tail effect (ncu waves 1 ≤ w < 4 with a partial last wave): the last wave's idle SMs cost
      ceil(w) − w waves of ceil(w) → 1 − w/ceil(w) (uniform block times assumed; with more
      waves the blocks' own spread hides most of the tail).
    * register spills: local-memory bytes as a share of all L1 traffic (time of a memory- or
      latency-bound stage follows its memory traffic). With no traffic counters (event mode:
      only the compiler's spill count) 10 % plus 5 % per doubling over 128 bytes.
    * DRAM over-fetch (measured DRAM bytes ÷ model bytes r > 1.25, not compute-bound): the
      removable traffic share 1 − 1/r, of the time DRAM is busy: all of it when memory-bound or
      at :data:`DRAM_SATURATED_PCT` (60 %) of peak or more (scattered sector traffic saturates
      DRAM there: an H100 strided transpose at 62 % with r = 7.0 says +600 %, its fix measured
      +846 %), dram%/60 of it below (MLA decode at DRAM 17.5 % and r = 3.9 says 28 %;
      removing most of its over-fetch gained 2.4 %: low-throughput stages are bounded by
      something else). A low L2 hit rate with r ≤ 1.25 is compulsory misses (streaming) and
      raises nothing.

    Generic advice (share of what the specific causes leave):

    * memory-bound below 90 % of peak DRAM bandwidth: 1 − dram/90.
    * compute-bound below what tuned kernels reach: 1 − compute/95 for Nsight Compute's pipe
      utilisation, 1 − compute/75 for % of the datasheet peak estimated without counters.
    * latency-bound: the unexplained headroom h − max(specific shares) (metrics only: the gap
      of the busier unit to its healthy level).
    * occupancy below 25 % while latency-bound: half of the latency share.
    """
    bottleneck = bottleneck or classify(m)
    compute, source = compute_utilisation(m)
    h = m.headroom
    cap = METRICS_ONLY_MAX_SHARE if h is None else h
    specific: list[Opportunity] = []

    def add(
        into: list[Opportunity], name: str, share: float, trigger: str, hint: str, cause: str, spec: bool
    ) -> None:
        # Kernel-level causes act only while kernels run: in a timeline's span, not in its gaps.
        share = min(share * m.kernel_busy, cap)
        if share >= MIN_SHARE:
            into.append(Opportunity(name, gain_pct(share), trigger, hint, cause, share, spec))

    if m.grid_blocks is not None and m.sm_count and m.grid_blocks < m.sm_count:
        add(
            specific,
            "Fill the GPU: launch more blocks than SMs (split the work: smaller tiles, split K/KV)",
            1.0 - m.grid_blocks / m.sm_count,
            f"grid_blocks={m.grid_blocks} (< {m.sm_count} SMs)",
            "idle SMs",
            "few_blocks",
            True,
        )
    elif m.grid_blocks is None and m.waves_per_sm is not None and m.waves_per_sm < WAVES_HEALTHY:
        add(
            specific,
            "Fill the GPU: launch more blocks (split K/KV, smaller tiles)",
            1.0 - m.waves_per_sm,
            f"waves_per_sm={m.waves_per_sm:.2f}",
            "fewer blocks than SMs can hold",
            "few_blocks",
            True,
        )
    if m.waves_measured and m.waves_per_sm is not None and 1.0 <= m.waves_per_sm < TAIL_MAX_WAVES:
        w = m.waves_per_sm
        tail = 1.0 - w / math.ceil(w)
        add(
            specific,
            "Even out the last wave (grid a multiple of the SMs x blocks per SM, or a persistent grid)",
            tail,
            f"waves_per_sm={w:.2f}",
            "the last wave leaves SMs idle",
            "tail",
            True,
        )
    if m.local_spill_bytes is not None and m.local_spill_bytes > SPILL_HEALTHY_BYTES:
        if m.local_share is not None:
            share, trigger = m.local_share, f"local_bytes_share={100 * m.local_share:.1f}%"
        else:
            share = 0.10 + 0.05 * max(0.0, math.log2(max(m.local_spill_bytes, 1.0) / 128.0))
            trigger = f"local_spill_bytes={int(m.local_spill_bytes)}"
        add(
            specific,
            "Remove register spills (smaller tiles, fewer accumulators, more warps, lower num_stages)",
            share,
            trigger,
            "register overflow to local memory",
            "spills",
            True,
        )
    if (
        m.over_fetch_ratio is not None
        and m.over_fetch_ratio > OVER_FETCH_HEALTHY
        and bottleneck != COMPUTE_BOUND
    ):
        removable = 1.0 - 1.0 / m.over_fetch_ratio
        busy = (
            1.0
            if bottleneck == MEMORY_BOUND or m.dram_pct is None
            else min(1.0, m.dram_pct / DRAM_SATURATED_PCT)
        )
        l2 = f", L2 hit {_fmt(m.l2_hit_pct)}%" if m.l2_hit_pct is not None else ""
        if m.kernels >= 2:
            # Several kernels moving N x the bytes the stage needs: each writes its intermediate to DRAM
            # and the next reads it back. Fusing them is what removes that traffic.
            add(
                specific,
                f"Fuse the {m.kernels} kernels of this stage into one (torch.compile, or one Triton "
                "kernel): together they move the stage's bytes several times over",
                removable * busy,
                f"kernels={m.kernels}, dram_bytes/model={m.over_fetch_ratio:.2f}",
                f"unfused kernels write and re-read intermediates in DRAM{l2}",
                "fusion",
                True,
            )
        else:
            add(
                specific,
                "Cut DRAM traffic above the model (coalesced/vectorised access, reuse through shared "
                "memory or L2: grouped launch order, larger tiles)",
                removable * busy,
                f"dram_bytes/model={m.over_fetch_ratio:.2f}{_coalescing_evidence(m)}",
                f"more DRAM traffic than the algorithm needs{l2}",
                "over_fetch",
                True,
            )

    if (
        m.kernels >= 2
        and m.over_fetch_ratio is None
        and m.accounting is None
        and m.attainable_sol_ns
        and m.time_ns
        and m.dram_pct is not None
        and m.dram_pct >= (compute or 0.0)
    ):
        # No counters (event mode, a timeline): a memory-bound stage of several kernels whose time is
        # N x what its model's bytes take at the attainable bandwidth. Each unfused kernel writes its
        # intermediate and the next reads it back; one kernel would move the model's bytes once.
        over = m.time_ns / m.attainable_sol_ns
        if over > OVER_FETCH_HEALTHY:
            add(
                specific,
                f"Fuse the {m.kernels} kernels of this stage into one (torch.compile, or one Triton "
                "kernel): their time is several times what the stage's bytes take at the bandwidth roof",
                1.0 - 1.0 / over,
                f"kernels={m.kernels}, time/bytes_at_roof={over:.2f} (no counters: from kernel times)",
                "unfused memory-bound kernels move intermediates through DRAM",
                "fusion",
                True,
            )
    for name, share, trigger, hint, cause in accounting_causes(m, bottleneck):
        add(specific, name, share, trigger, hint, cause, True)

    explained = max((o.share for o in specific), default=0.0)
    generic: list[Opportunity] = []
    if bottleneck == MEMORY_BOUND and m.dram_pct is not None:
        add(
            generic,
            "Reach peak DRAM bandwidth (wider vector loads, more loads in flight, TMA)",
            _share_of_gap(m.dram_pct, _DRAM_ATTAINABLE_PCT)
            if h is None
            else min(_share_of_gap(m.dram_pct, _DRAM_ATTAINABLE_PCT), max(0.0, h - explained)),
            f"dram_pct={_fmt(m.dram_pct)}",
            "memory-bound: the bandwidth is the limit",
            "dram_roof",
            False,
        )
    if bottleneck == COMPUTE_BOUND and compute is not None:
        add(
            generic,
            "Raise tensor-core efficiency (tile sizes, pipelining stages, warp specialisation)"
            if source == "tc_pct"
            else "Raise SM instruction efficiency (fewer instructions per byte, vectorise)",
            _share_of_gap(compute, m.compute_attainable_pct)
            if h is None
            else min(_share_of_gap(compute, m.compute_attainable_pct), max(0.0, h - explained)),
            f"{source}={_fmt(compute)}",
            "compute-bound: the math units are the limit",
            "compute_roof",
            False,
        )
    if bottleneck == LATENCY_BOUND:
        best = max([v for v in (m.dram_pct, compute) if v is not None], default=None)
        target = DRAM_HEALTHY_PCT if (m.dram_pct or 0) >= (compute or 0) else TC_HEALTHY_PCT
        which = "dram_pct" if target == DRAM_HEALTHY_PCT else source
        if h is not None:
            latency = max(0.0, h - explained)
        elif best is not None:
            latency = max(0.0, _share_of_gap(best, target) - explained)
        else:
            latency = 0.0
        if best is not None or h is not None:
            top = m.accounting.stalls[0].reason if m.accounting is not None and m.accounting.stalls else None
            add(
                generic,
                "Hide memory latency: more loads in flight (num_stages ≥ 3 to pipeline the loads, more "
                "elements per program, more programs)"
                if top in MEMORY_LATENCY_STALLS
                else "Expose more parallelism to hide latency (more loads in flight, more blocks, fewer syncs)",
                latency,
                (f"{which}={_fmt(best)}" if best is not None else "latency-bound") + _stall_evidence(m),
                "latency-bound: neither memory nor math is busy",
                "latency",
                False,
            )
        if m.occupancy_pct is not None and m.occupancy_pct < OCCUPANCY_HEALTHY_PCT:
            name, why = _occupancy_advice(m)
            add(
                generic,
                name,
                0.5 * latency,
                f"occupancy_pct={_fmt(m.occupancy_pct)}{why}",
                "too few warps to hide latency",
                "occupancy",
                False,
            )
    out = specific + generic
    # Largest gain first; on a tie a specific cause before generic advice.
    out.sort(key=lambda o: (round(o.est_gain_pct, 1), o.specific), reverse=True)
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
    top = next((o for o in opportunities(m, bottleneck) if o.specific), None)
    if top is not None and top.share >= 0.05:
        second = f"Dominant cause: {top.hint} ({top.trigger}), about {100 * top.share:.0f}% of the time."
    elif bottleneck == LATENCY_BOUND and worst:
        second = f"Unhealthy: {', '.join(worst[:3])}."
    elif (
        m.l2_hit_pct is not None
        and m.l2_hit_pct < L2_HIT_HEALTHY_PCT
        and m.over_fetch_ratio is not None
        and m.over_fetch_ratio <= OVER_FETCH_HEALTHY
    ):
        second = (
            f"L2 hit rate {_fmt(m.l2_hit_pct)}% is low, but DRAM traffic is {m.over_fetch_ratio:.2f}× the "
            "byte model: each byte is fetched about once, so locality has nothing to save."
        )
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
        locality_issue=locality_issue(m, bottleneck),
        unhealthy=tuple(unhealthy_metrics(m)),
        opportunities=tuple(opportunities(m, bottleneck)),
        compute_source=source,
        root_cause=root_cause(m, bottleneck),
        notes=tuple(notes),
    )

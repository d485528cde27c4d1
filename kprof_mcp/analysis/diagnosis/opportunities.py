"""The stage's opportunities from one time model, its root cause, and the whole diagnosis: facts,
worded by :mod:`kprof_mcp.render.diagnosis`."""

from __future__ import annotations

import math
from dataclasses import replace

from . import dispatch, static_mix
from .catalogue import (
    LIBRARY_SLOW,
    MEMORY_LATENCY_STALLS,
    accounting_causes,
    core_keeps,
    dram_busy,
    excess_core_work,
    excess_tensor_work,
    host_link_bytes,
    library_gemm_excess,
    reread_share,
    top_stalls,
    uncoalesced,
    uncoalesced_l2_share,
)
from .limiter import ATTAINABLE, ATTAINABLE_PIPE, PIPES, limiter, slot_shares, source_of_limit
from .metrics import (
    _DRAM_ATTAINABLE_PCT,
    COMPUTE_BOUND,
    DRAM_HEALTHY_PCT,
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
    Facts,
    Metrics,
    Opportunity,
    RootCauseFacts,
    _share_of_gap,
    classify,
    compute_utilisation,
    gain_pct,
    locality_issue,
    unhealthy_metrics,
)
from .moves import what_if_moves, widened_dot
from .parallelism import (
    balance_share,
    chain_share,
    fill_share,
    grid_occupancy_share,
    memory_waits,
    occupancy_share,
    serial_kernel,
    tail_share,
    waves_share,
    wider_loads_share,
    work_floor,
    work_unit,
)
from .spills import spill_share


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
    few metrics) shares are capped at :data:`METRICS_ONLY_MAX_SHARE`. Kernel-level shares apply to the time kernels run: a timeline's stage span also holds launch
    gaps, so there every share is scaled by the kernels' busy share of the span.

    Specific causes (share of T):

    * too few blocks (grid < SMs, not a persistent grid): only grid/SMs of the SMs work →
      1 − grid/SMs. With only ncu's occupancy-aware waves w < 1 known: 1 − w (an upper bound).
    * tail effect (ncu waves 1 ≤ w < 4 with a partial last wave): the last wave's idle SMs cost
      ceil(w) − w waves of ceil(w) → 1 − w/ceil(w) (uniform block times assumed; with more
      waves the blocks' own spread hides most of the tail).
    * register spills: local-memory bytes as a share of all L1 traffic (time of a memory- or
      latency-bound stage follows its memory traffic). With no traffic counters (event mode:
      only the compiler's spill count) the spills' share of the memory time of one pass over the
      kernel's SASS listing (``static_mix.spill_share``), else 10 % plus 5 % per doubling over 128 bytes.
    * DRAM over-fetch (DRAM bytes ÷ model bytes r > 1.25; compute-bound: counters and DRAM busy): the
      removable traffic share 1 − 1/r, of the time DRAM is busy: all of it when memory-bound or
      at the scattered-sector bandwidth (measured: ``kprof device --calibrate``'s dram_sector; else
      :data:`DRAM_SATURATED_PCT`, 60 %) of peak or more (scattered sector traffic saturates
      DRAM there: an H100 strided transpose at 62 % with r = 7.0 says +600 %, its fix measured
      +846 %), dram%/60 of it below (MLA decode at DRAM 17.5 % and r = 3.9 says 28 %;
      removing most of its over-fetch gained 2.4 %: low-throughput stages are bounded by something
      else). A low L2 hit rate with r ≤ 1.25 is compulsory misses (streaming) and raises nothing.

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
    # A specific cause may reach the speed of light of its best legal mix of pipes; generic advice its own roof.
    best = m.best_headroom
    cap_specific = METRICS_ONLY_MAX_SHARE if best is None else best
    lim = limiter(m)
    specific: list[Opportunity] = []

    def add(into: list[Opportunity], cause: str, share: float, facts: dict, spec: bool) -> None:
        share = min(share * m.kernel_busy, cap_specific if spec else cap)  # while kernels run, not in gaps
        if m.host_cap is not None and (not spec or cause not in ("fusion", "move_work")):
            # A change that keeps every launch cannot beat its host (fusion and work not needed remove launches);
            # a costlier method's host time above the lean eager op's floor goes with it (host_cap_method).
            cap_h = m.host_cap_method if cause == "move_work" and m.host_cap_method else m.host_cap
            share = min(share, cap_h)
        if share >= MIN_SHARE:
            into.append(Opportunity(cause, gain_pct(share), share, spec, Facts(**facts)))

    if bottleneck == LATENCY_BOUND and (chain := chain_share(m, lim)) is not None:
        # Loops whose loads wait on the last value (round trips in a row): first on a tie with the warps' what-ifs.
        facts = {"move": "chain", "lines": chain[1], "memory_wait": m.accounting.memory_wait}
        add(specific, "latency", chain[0], {**facts, "memory_stalls": True}, True)
    if m.grid_blocks is not None and m.sm_count and m.grid_blocks < m.sm_count:
        filled = fill_share(m, lim)
        # A command's grid is its longest kernel's (its share of the kernel time, alone, is filled).
        alone = m.top_kernel[1] if m.command_no_counters and m.top_kernel is not None else 1.0
        add(
            specific,
            "few_blocks",
            alone * (1.0 - m.grid_blocks / m.sm_count if filled is None else filled),
            {"grid_blocks": m.grid_blocks, "sm_count": m.sm_count},
            True,
        )
    elif m.grid_blocks is None and m.waves_per_sm is not None and m.waves_per_sm < WAVES_HEALTHY:
        add(specific, "few_blocks", waves_share(m, lim), {"waves_per_sm": m.waves_per_sm}, True)
    if (blocks := dispatch.fewer_blocks(m, lim, ATTAINABLE, ATTAINABLE_PIPE)) is not None:
        add(specific, "occupancy", blocks[0], blocks[1], True)  # the block scheduler bounds it
    occ_limiter = m.accounting.occupancy_limiter if m.accounting is not None else None
    if bottleneck == LATENCY_BOUND and (by_grid := grid_occupancy_share(m, lim)) is not None:
        # The grid gives the SMs fewer blocks than fit: the limit of the occupancy achieved is the grid's.
        occ_limiter = ("grid", by_grid[1])
        facts = {"occupancy_pct": m.occupancy_pct, "limiter": occ_limiter}
        add(specific, "occupancy", by_grid[0], facts, True)
    if (
        bottleneck == LATENCY_BOUND
        and m.occupancy_pct is not None
        and m.occupancy_pct < OCCUPANCY_HEALTHY_PCT
        and occ_limiter is not None
        and occ_limiter[0] in ("registers", "shared_mem")
        and (lifted := occupancy_share(m, lim)) is not None
    ):
        # Latency-bound with few warps, held there by what the code spends per block (registers, shared
        # memory): lifting it to the next limit is a what-if of its own (Little's law), not generic advice.
        add(specific, "occupancy", lifted, {"occupancy_pct": m.occupancy_pct, "limiter": occ_limiter}, True)
    if (wider := wider_loads_share(m, lim, bottleneck == LATENCY_BOUND)) is not None:
        # Narrow loads: the bytes in flight (or each loop step's data) grow with the bytes a load brings.
        per_step = lim.resource if lim.bound else None
        facts = {"sectors_per_request": wider[1], "memory_stalls": not lim.bound, "resource": per_step}
        add(specific, "latency", wider[0], facts, True)
    balanced = balance_share(m, lim)
    if m.waves_measured and m.waves_per_sm is not None and 1.0 <= m.waves_per_sm < TAIL_MAX_WAVES:
        add(specific, "tail", tail_share(m, lim), {"waves_per_sm": m.waves_per_sm}, True)
    elif balanced is not None:  # many waves, SMs mostly idle: a few long programs
        sm_active = 100.0 * m.accounting.sm_active_frac
        add(specific, "tail", balanced, {"waves_per_sm": m.waves_per_sm, "sm_active_pct": sm_active}, True)
    if m.local_spill_bytes is not None and m.local_spill_bytes > SPILL_HEALTHY_BYTES:
        if (measured := spill_share(m, lim)) is not None:  # the counters' what-if (.spills)
            share, facts = measured, {"local_share": m.local_share}
        elif m.local_share is not None:
            share, facts = m.local_share, {"local_share": m.local_share}
        elif (static := static_mix.spill_share(m)) is not None:  # no counters: the SASS listing's share
            share, facts = static, {"local_share": static, "source": static_mix.SOURCE}
        else:
            share = 0.10 + 0.05 * max(0.0, math.log2(max(m.local_spill_bytes, 1.0) / 128.0))
            facts = {"local_spill_bytes": m.local_spill_bytes}
        add(specific, "spills", share, facts, True)
    ratio = m.over_fetch_ratio
    if (
        ratio is not None
        and m.bytes_model
        and m.local_spill_bytes
        and m.local_share is not None
        and m.kernels < 2
    ):
        # DRAM traffic above the model that spilled registers explain is the spills' (one cause, one
        # estimate): over-fetch keeps only what is left of the excess beyond the local-memory bytes.
        excess = max(0.0, (ratio - 1.0) * m.bytes_model - m.local_spill_bytes)
        ratio = 1.0 + excess / m.bytes_model
    if (ratio or 0.0) > OVER_FETCH_HEALTHY and (bottleneck != COMPUTE_BOUND or dram_busy(m, lim)):
        removable = 1.0 - 1.0 / ratio
        busy = (
            1.0
            if bottleneck == MEMORY_BOUND or m.dram_pct is None
            else min(1.0, m.dram_pct / m.scattered_dram_pct)
        )
        facts = {"over_fetch_ratio": m.over_fetch_ratio, "l2_hit_pct": m.l2_hit_pct}
        if m.kernels >= 2:
            # Several kernels moving N x the bytes the stage needs (intermediates written and read back): fusion.
            fused = {"kernels": m.kernels, **facts, "resource": "dram"}  # the round trips' level: DRAM
            add(specific, "fusion", removable * busy, fused, True)
        else:
            # What-if: the DRAM-busy time goes and the model's bytes (1/r of today's) come back. Scattered traffic
            # (uncoalesced, or at most the scattered saturation) streams coalesced once fixed (90 % of peak); measured
            # uncoalesced with the warps waiting on memory, its latency goes too. Else it keeps its efficiency.
            scattered = bool(uncoalesced(m)) or (
                m.dram_pct is not None and m.dram_pct <= m.scattered_dram_pct
            )
            after = m.dram_pct / (ratio * _DRAM_ATTAINABLE_PCT) if scattered else busy / ratio
            held = 1.0 if uncoalesced(m) and memory_waits(m) else busy
            share = max(removable * held, held - min(held, after))
            if lim is not None and m.time_ns:  # the next limiter bounds it: the SMs' work stays, all but the
                keeps = core_keeps(m)  # arithmetic on the surplus data beyond the model's FLOPs
                rest = [
                    u.util * keeps.get(u.key, 1.0) / ATTAINABLE.get(u.key, ATTAINABLE_PIPE)
                    for u in lim.uses
                    if u.key in (*PIPES, "issue")
                ]
                share = min(share, 1.0 - max(rest, default=0.0))
            add(
                specific,
                "over_fetch",
                share,
                {**facts, "uncoalesced": uncoalesced(m), "resource": "dram"},
                True,
            )
    if m.wide_share is not None:
        # Float64 kernels where the stage's model is narrower (type promotion): in float32 each moves half
        # its bytes; the other kernels keep their time (machine_inputs.wide_share).
        share, wide = m.wide_share
        add(
            specific,
            "over_fetch",
            share,
            {"kernels": wide, "dtype_from": "float64", "dtype_to": "float32"},
            True,
        )
    widened = widened_dot(m, lim)  # operands widened before the dot: its move explains the tensor excess
    if widened is None and (excess := excess_tensor_work(m, lim)) is not None:
        facts = {
            "resource": "tensor",
            "target": "tensor",
            "util_pct": 100.0 * next(u.util for u in lim.uses if u.key == "tensor"),
            "speedup": excess[1],
            "advice": "issue only the MMAs the result needs: skip tiles that are zero by construction (stop a "
            "causal K loop at the diagonal, mask-aware tiling, no padded work) or recomputed, and one MMA per "
            "product at the precision the tolerance allows (TF32 for fp32 data, not a 3xTF32 split)",
            "condition": "the tensor work above the FLOP model is wasted; if the model undercounts, fix the model",
        }
        add(specific, "move_work", excess[0], facts, True)
    if (host := host_link_bytes(m, lim)) is not None:
        facts = {
            "resource": "host",
            "host_bytes": host[1],
            "util_pct": 100.0 * next(u.util for u in lim.uses if u.key == "host"),
        }
        add(specific, "copy", host[0], facts, True)
    reread, l1_side = reread_share(m, lim), lim is not None and lim.bound and lim.resource in ("l1", "lsu")
    if (core := excess_core_work(m, lim)) is not None and not (l1_side and reread is not None):
        # Issue-, L1- or latency-bound: the work to cut is the instructions of the pipe taking most slots.
        slots = lim if lim.resource == "issue" else replace(lim, resource="issue")
        own = lim.bound and lim.resource != "issue" and not l1_side
        src = lim.resource if own else source_of_limit(m, slots) or "issue"
        facts = {
            "resource": src,
            "target": src,
            "util_pct": 100.0 * (lim.use(src) if src != lim.resource else lim.util),
            "issue_active_pct": 100.0 * lim.use("issue") if src != lim.resource else None,
            "value": 100.0 * slot_shares(m, lim).get(src, 0.0) if src != lim.resource else None,
            "per_element": lim.per_element,
            "speedup": core[1],
            **({"metric": lim.resource, "bound_pct": 100.0 * lim.util} if l1_side else {}),
            "advice": (
                "use the instruction the hardware has instead of emulating it (popc, clz, brev, a max or min "
                "reduction instead of a sort), and compute once what every program recomputes (prefix offsets, "
                "shared tables)"
                if src == "alu"
                else "do no work the result does not use: size the block to the data (not to the largest case), "
                "end each lane's loop at its own count (sort or bucket the items), keep values instead of recomputing"
            ),
            "condition": "the work above the model's operations is wasted (emulated instructions, masked-off "
            "lanes, finished iterations, recomputation); if the model undercounts, fix the model",
        }
        add(specific, "move_work", core[0], facts, True)
    if (lib := library_gemm_excess(m)) is not None:
        facts = {
            "resource": "tensor",
            "target": "tensor",
            "move": "library_gemm",
            "speedup": lib[1],
            "source": "model",
            "advice": "compute only what is used (slice rows or positions before the matmul, not after), and "
            "give the library a shape it runs well (dimensions multiples of 8, aligned operands: pad)",
            "condition": "the GEMM's extra work is thrown away, or the padding is sliced off after it",
        }
        add(specific, "move_work", lib[0], facts, True)
    if reread is not None:
        facts = {"over_fetch_ratio": reread[2], "resource": reread[1], "reread": True}
        add(specific, "over_fetch", reread[0], facts, True)
    if (l2_share := uncoalesced_l2_share(m, lim)) is not None:
        a = m.accounting
        ratio_l2 = a.level_bytes["l2"] / m.bytes_model
        facts = {"over_fetch_ratio": ratio_l2, "uncoalesced": uncoalesced(m), "resource": "l2"}
        add(specific, "over_fetch", l2_share, facts, True)
    if (
        m.kernels >= 2
        and m.over_fetch_ratio is None
        and m.accounting is None
        and m.attainable_sol_ns
        and m.time_ns
        and m.dram_pct is not None
        and m.dram_pct >= (compute or 0.0)
        and not (m.grid_blocks is not None and m.sm_count and m.grid_blocks < m.sm_count)
    ):
        # No counters (event mode, a timeline): a memory-bound stage of several kernels whose time is N x what
        # its model's bytes take at the attainable bandwidth: each unfused kernel writes its intermediate and the
        # next reads it back; one kernel would move the model's bytes once. Not on a grid under the SMs: kernels
        # on a few SMs are not bound by the chip's DRAM (the few-blocks what-if owns that gap).
        over = m.time_ns / m.attainable_sol_ns
        if over > OVER_FETCH_HEALTHY:
            # One kernel moves the model's bytes once. Where some of the kernels only copy data (a layout
            # round trip), the copies go and the kernels that do the work keep their measured time.
            after = 1.0 / over if m.copy_share is None else max(1.0 / over, 1.0 - m.copy_share)
            if m.top_kernel is not None and serial_kernel(m.top_activity):
                # The longest kernel neither moved data nor issued while it ran (GPU metrics): its time is its
                # own chain of steps, which a fused kernel keeps (parallelism.serial_kernel).
                after = max(after, m.top_kernel[1])
            facts = {"kernels": m.kernels, "time_over_roof": over, "copy_share": m.copy_share}
            add(specific, "fusion", 1.0 - after, {**facts, "resource": "dram"}, True)
    for cause, share, facts in accounting_causes(m, bottleneck, lim):
        add(specific, cause, share, facts, True)
    # A contended lock owns the waiting (.locks): no latency what-if for its stage.
    if any(o.facts.move == "lock" for o in specific):
        specific[:] = [o for o in specific if o.cause not in ("occupancy", "latency")]
    for cause, share, facts in what_if_moves(m, lim):
        add(specific, cause, share, facts, True)
    if widened is not None:
        add(specific, "move_work", widened[0], widened[1], True)
    explained = max((o.share for o in specific), default=0.0)
    generic: list[Opportunity] = []
    if bottleneck == MEMORY_BOUND and m.dram_pct is not None:
        add(
            generic,
            "dram_roof",
            _share_of_gap(m.dram_pct, _DRAM_ATTAINABLE_PCT)
            if h is None
            else min(_share_of_gap(m.dram_pct, _DRAM_ATTAINABLE_PCT), max(0.0, h - explained)),
            {"dram_pct": m.dram_pct},
            False,
        )
    if bottleneck == COMPUTE_BOUND and compute is not None:
        add(
            generic,
            "compute_roof",
            _share_of_gap(compute, m.compute_attainable_pct)
            if h is None
            else min(_share_of_gap(compute, m.compute_attainable_pct), max(0.0, h - explained)),
            {"source": source, "compute_pct": compute, **_pipe_facts(lim)},
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
        if lim is not None and lim.source == "counters" and m.time_ns:
            # Hiding latency keeps the work: no faster than the busiest resource at the rate tuned kernels reach.
            latency = min(latency, max(0.0, 1.0 - work_floor(m, lim) / m.time_ns))
        over = m.time_ns * m.kernel_busy / m.attainable_sol_ns if m.time_ns and m.attainable_sol_ns else None
        if m.command_no_counters and (best is not None or h is not None) and over and over >= LIBRARY_SLOW:
            # A command's kernels timed without counters, far longer than the model's work needs at the roof
            # (at least LIBRARY_SLOW times, as for a vendor GEMM): a library's kernel that far from its roof does
            # more work than the model counts or uses a costlier method (a sparse or general kernel where a dense
            # or specialised one does it; a whole tensor processed where a few rows change): the headroom is that
            # work's, the longest kernel where to look (ncu mode gives its limiter). Nearer: the generic advice.
            # Specific where the GPU samples show its longest kernel idle: that kernel's time goes, the rest stays.
            serial = serial_kernel(m.top_activity)
            share = min(h, m.top_kernel[1]) if serial and h is not None else latency
            # A narrower move of the same work (TF32 for part of its FFMA) does not stand for the whole excess.
            if not any(o.cause == "move_work" and o.share >= share * m.kernel_busy for o in specific):
                add(specific if serial else generic, "move_work", share, _over_model_facts(m, lim), serial)
        elif (best is not None or h is not None) and not any(o.cause == "latency" for o in specific):
            top = m.accounting.stalls[0].reason if m.accounting is not None and m.accounting.stalls else None
            facts = {
                "memory_stalls": top in MEMORY_LATENCY_STALLS,
                "metric": which if best is not None else None,
                "value": best,
                "stalls": top_stalls(m),
            }
            add(generic, "latency", latency, facts, False)
        if (
            m.occupancy_pct is not None
            and m.occupancy_pct < OCCUPANCY_HEALTHY_PCT
            and not any(o.cause == "occupancy" for o in specific)
        ):
            occ_limiter = m.accounting.occupancy_limiter if m.accounting is not None else None
            lifted = occupancy_share(m, lim)
            add(
                generic,
                "occupancy",
                min(lifted, latency) if lifted is not None else 0.5 * latency,
                {"occupancy_pct": m.occupancy_pct, "limiter": occ_limiter},
                False,
            )
    out = specific + generic
    # Largest gain first; on a tie a specific cause before generic advice.
    out.sort(key=lambda o: (round(o.est_gain_pct, 1), o.specific), reverse=True)
    return out


def _over_model_facts(m: Metrics, lim) -> dict:
    """The evidence of a command stage's kernels far from the model's roof, no counters: the kernel taking
    most of the kernel time (its share, %), the time over the speed of light, and the resource that kernel's work
    runs on (its GPU metrics samples' busiest unit), else the model's work's (the FLOP/byte model's limiter)."""
    name, share = m.top_kernel or (None, None)
    over = m.time_ns * m.kernel_busy / m.sol_ns if m.time_ns and m.sol_ns else None
    return {
        "move": "over_model",
        "resource": work_unit(m.top_activity, name) or (lim.resource if lim is not None else None),
        "kernel": name,
        "value": 100.0 * share if share is not None else None,
        "time_over_roof": over,
        "activity": m.top_activity,
        "serial": serial_kernel(m.top_activity) or None,
        "source": "model",
    }


def _pipe_facts(lim) -> dict:
    """The limiting pipe (or issue slots) and its use, for compute-roof advice: which unit to relieve."""
    if lim is None or lim.source != "counters" or lim.resource not in (*PIPES, "issue"):
        return {}
    return {"resource": lim.resource, "util_pct": 100.0 * lim.util, "per_element": lim.per_element}


def root_cause(m: Metrics, bottleneck: str) -> RootCauseFacts:
    """The limiting resource and the strongest symptom (worded as at most two sentences by
    :mod:`kprof_mcp.render.diagnosis`)."""
    compute, source = compute_utilisation(m)
    worst = tuple(unhealthy_metrics(m))
    top = next((o for o in opportunities(m, bottleneck) if o.specific), None)
    symptom = ""
    if top is not None and top.share >= 0.05:
        symptom = "dominant"
    elif bottleneck == LATENCY_BOUND and worst:
        symptom = "unhealthy"
    elif (
        m.l2_hit_pct is not None
        and m.l2_hit_pct < L2_HIT_HEALTHY_PCT
        and m.over_fetch_ratio is not None
        and m.over_fetch_ratio <= OVER_FETCH_HEALTHY
    ):
        symptom = "compulsory"
    elif m.l2_hit_pct is not None and m.l2_hit_pct < L2_HIT_HEALTHY_PCT:
        symptom = "low_l2"
    return RootCauseFacts(
        bottleneck,
        source,
        m.dram_pct,
        compute,
        symptom,
        top if symptom == "dominant" else None,
        worst,
        m.l2_hit_pct,
        m.over_fetch_ratio,
        limiter(m),
    )


def diagnose(m: Metrics) -> Diagnosis:
    """Classification, locality flag, unhealthy metrics and ranked opportunities in one call."""
    bottleneck = classify(m)
    _, source = compute_utilisation(m)
    return Diagnosis(
        bottleneck=bottleneck,
        locality_issue=locality_issue(m, bottleneck),
        unhealthy=tuple(unhealthy_metrics(m)),
        opportunities=tuple(opportunities(m, bottleneck)),
        compute_source=source,
        root_cause=root_cause(m, bottleneck),
    )

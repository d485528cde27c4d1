"""The diagnosis' sentences: one wording per opportunity cause (:data:`WORDS`, keyed by the cause
:mod:`kprof_mcp.analysis.diagnosis` found, each a function of that cause's facts), the unhealthy
metrics as ``metric=value``, the root cause's two sentences and why an ncu rule is not ranked."""

from __future__ import annotations

import math
from typing import Any, Callable

from ...analysis.diagnosis import COMPUTE_BOUND, MEMORY_BOUND, Facts, Opportunity, RootCauseFacts, rule_cause
from ...analysis.diagnosis import rule_not_ranked as _rule_not_ranked
from .idle_words import _copy, _cuda_api, _first_call, _host, _launch, _sync
from .memory import Words, _fmt, _fusion, _over_fetch
from .names import RESOURCE_NAMES, _short, resource_name  # noqa: F401 (re-exported)
from .parallel_words import _few_blocks, _tail
from .ranks import RANK_WORDS

# Where a figure came from when no counter measured it (static: analysis.diagnosis.static_mix.LABEL).
_SOURCE_NOTE = {
    "model": " (from the FLOP/byte model, no counters)",
    "static": " (static SASS mix / TTIR, no counters)",
    "grid": " (the grid at the block scheduler's measured rate)",
}


def _spills(f: Facts) -> Words:
    trigger = (
        f"local_bytes_share={100 * f.local_share:.1f}%{_SOURCE_NOTE.get(f.source or '', '')}"
        if f.local_share is not None
        else f"local_spill_bytes={int(f.local_spill_bytes)}"
    )
    return (
        "Remove register spills (smaller tiles, fewer accumulators, more warps, lower num_stages)",
        trigger,
        "register overflow to local memory",
    )


def _atomics(f: Facts) -> Words:
    if f.hot_slice_pct is not None:  # the busiest L2 slice's atomic unit (analysis.diagnosis.slices)
        return (
            _ATOMICS + " (or spread the counters over more addresses)",
            f"busiest L2 slice's atomic unit {f.hot_slice_pct:.0f}% of its peak, the slices' average "
            f"{f.slice_avg_pct:.1f}%",
            "atomics to a few addresses serialise on the L2 slice that owns them",
        )
    if f.move == "lock":  # a contended spin lock (analysis.diagnosis.locks)
        return (
            _LOCK,
            f"a compare-and-swap spin ({f.value:.0f}x one pass's atomics), waits {100 * (f.memory_wait or 0):.0f}%",
            "the programs hold the lock one at a time; the others' warps wait at barriers and fences",
        )
    if f.move == "cas_loop":  # an atomic emulated by a compare-and-swap loop (analysis.diagnosis.locks)
        return (
            "Use the native atomic instead of a compare-and-swap loop (tl.atomic_max/min/add/and/or/xor; a float "
            "max as an integer max on order-preserving bits), whose result the loop need not wait for",
            f"compare-and-swap in a loop: {f.value:.2f}x one pass's atomics executed, memory/sync waits "
            f"{100 * (f.memory_wait or 0):.0f}% of warp time",
            "every try waits a round trip for the swapped value, and contended tries fail and go round again",
        )
    if f.fence_wait is not None:  # fenced atomics (analysis.diagnosis.catalogue.fence_share)
        return (
            "Relax the atomics' memory ordering: sem='relaxed' where the values are read only after the kernel "
            "(tl.atomic_add defaults to acq_rel, a fence around every atomic), no __threadfence between "
            "independent atomics",
            f"membar stalls {100 * f.fence_wait:.0f}% of warp time; atomics {100 * (f.atomic_share or 0):.1f}% of "
            "global sectors",
            "each fenced atomic waits a memory round trip before the warp goes on",
        )
    if f.atomic_l2_sectors is None:  # no counters: the SASS listing's atomics (contention is in the data)
        trigger = f"global atomics {100 * (f.atomic_share or 0):.0f}% of the SASS listing's global accesses"
        return (_ATOMICS, trigger + _SOURCE_NOTE["static"], "warps may wait on serialised atomics (at most)")
    return (
        _ATOMICS,
        f"atomic L2 sectors={f.atomic_l2_sectors:.3g} ({100 * f.atomic_share:.1f}% of global sectors), "
        f"memory/sync waits {100 * f.memory_wait:.0f}% of warp time",
        "warps wait on serialised atomics to the same addresses",
    )


_LOCK = "Spread the lock: a lock and partial buffer per group of programs (the layer-norm backward's GROUP_SIZE_M), or a buffer per program summed by a second kernel, so that programs rarely meet"  # noqa: E501
_ATOMICS = "Cut contended global atomics: reduce within each block first (tl.sum, tl.histogram, a shared-memory accumulator), then one atomic per block and address"  # noqa: E501


def _small_tiles(f: Facts) -> Words:
    tile = f.reuse_tile
    return (
        f"Raise reuse per operand byte: larger tiles (BLOCK_M = BLOCK_N ≥ {tile}, BLOCK_K 64), "
        "num_warps=8, num_stages=3 (or a grouped/persistent order)",
        f"load bytes/FLOP={f.bytes_per_flop:.3g} (~{f.tile:.0f}-wide tiles; {tile}-wide need "
        f"{f.target_bytes_per_flop:.3g}), tc_pct={_fmt(f.tc_pct)}%, memory waits {100 * f.memory_wait:.0f}%",
        "each operand byte feeds few FLOPs: the tensor pipe starves on loads",
    )


def _bank_conflicts(f: Facts) -> Words:
    return (
        "Remove shared-memory bank conflicts (a conflict-free layout: tl.trans/reshape rather than a "
        "gather with a 32-word stride; pad rows by one element)",
        f"bank conflicts/wavefront={f.conflicts_per_wavefront:.2f}, shared-memory waits {100 * f.shared_wait:.0f}%",
        "shared-memory accesses replayed for bank conflicts",
    )


def _divergence(f: Facts) -> Words:
    return (
        "Make branches uniform per warp: sort or bucket the work so a warp's threads take the same path, "
        "select with tl.where instead of branching per thread, or split the kernel by case",
        f"threads per warp instruction={f.threads_per_inst:.1f} of 32, issue active {_fmt(f.issue_active_pct)}%",
        "divergent warps issue instructions with idle lanes",
    )


def _dram_roof(f: Facts) -> Words:
    return (
        "Reach peak DRAM bandwidth (wider vector loads, more loads in flight, TMA)",
        f"dram_pct={_fmt(f.dram_pct)}",
        "memory-bound: the bandwidth is the limit",
    )


def _per_element(f: Facts) -> str:
    per = f.per_element or ()
    return (" (" + ", ".join(f"{v:.3g} {k}" for k, v in per[:3]) + " per element)") if per else ""


def _move_work(f: Facts) -> Words:
    src, dst = resource_name(f.resource), resource_name(f.target)
    model = _SOURCE_NOTE.get(f.source or "", "")
    nxt = f"; then the {resource_name(f.next_limiter)} limits" if f.next_limiter else ""
    at = f" at {', '.join(f.lines[:3])}" if f.lines else ""
    if f.move == "library_gemm":  # a vendor GEMM far under its roof (timelines: no counters)
        return (
            f"Cut the library GEMM's work to what the result uses, or give it a shape it runs well: {f.advice}",
            f"its kernels took {f.speedup:.1f}x the time of the stage's modelled work at the tensor pipe's "
            "attainable rate (kernel times and the FLOP/byte model, no counters)",
            "a vendor GEMM this far under its roof computes work the model does not count (rows or padding "
            "thrown away after it) or runs a shape it handles badly; legal when " + (f.condition or ""),
        )
    if f.move == "over_model":  # a command's kernels far from the model's roof, no counters
        top = f" ({_short(f.kernel)}: {_fmt(f.value)}% of the kernel time)" if f.kernel else ""
        over = (
            f"its kernels take {f.time_over_roof:.1f}x"
            if f.time_over_roof
            else "its kernels take far more than"
        )
        act = f.activity or {}
        sampled = (
            f"; while it ran, DRAM {_fmt((act.get('dram_read_pct') or 0) + (act.get('dram_write_pct') or 0))}%, "
            f"SM issue {_fmt(act['issue_pct'])}%, warps in flight {_fmt(act['warps_pct'])}% of peak "
            "(GPU metrics samples)"
            if act.get("issue_pct") is not None and act.get("warps_pct") is not None
            else ""
        )
        return (
            f"Find the work the stage's kernels do beyond its model{top}: a costlier method than the model's "
            "(a sparse, general or fallback kernel where a dense or specialised one does the work; a whole tensor "
            "processed where a few rows change) or work the result does not use; Nsight Compute mode gives "
            "that kernel's limiter",
            f"{over} the time the stage's FLOPs and bytes need at the device's roof (kernel times and the "
            f"FLOP/byte model, no counters){sampled}",
            "the longest kernel's units sampled nearly idle while it ran: a chain of dependent steps on a few warps (a serial or "
            "costlier algorithm), not data a fused kernel would stop moving"
            if sampled and f.serial
            else "no counters: nothing measured says the warps wait; a library kernel this far from the roof does "
            "more work than the model counts or a slower algorithm",
        )
    if f.target == f.resource and f.issue_active_pct is not None:  # issue-bound: the pipe filling the slots
        # integer work: the ALU's ops and the integer multiply-adds the FMA pipe issues (limiter.slot_shares)
        work = (
            "integer and logic work (ALU ops, and IMADs where the FMA pipe issues them)"
            if f.resource == "alu"
            else src
        )
        fed = (
            f"{resource_name(f.metric)} {_fmt(f.bound_pct)}% of peak, fed by that code's loads and stores; "
            if f.bound_pct
            else ""
        )
        return (
            f"Replace the {src}'s code that fills the instruction issue slots: {f.advice}",
            f"{fed}issue slots {_fmt(f.issue_active_pct)}% of peak over the elapsed time{_per_element(f)}{model}, "
            f"the {work} taking the largest share of them ({_fmt(f.value)}% of the slots, "
            f"{f.resource}={_fmt(f.util_pct)}% of its peak); "
            f"{f.speedup:.1f}x fewer ops{nxt}",
            f"the {src}'s work is code a cheaper form replaces; legal when {f.condition}",
        )
    if f.target == f.resource:  # the same pipe, less work: a cheaper form of the code
        inf = f.speedup == math.inf  # the model needs none of them
        fewer = "the stage's model needs none of these ops: all go" if inf else f"{f.speedup:.1f}x fewer ops"
        return (
            f"Replace the code{at or ' limiting the ' + src}: {f.advice}",
            f"{f.resource}={_fmt(f.util_pct)}% of peak over the elapsed time{_per_element(f)}{model}; "
            f"{fewer}{nxt}",
            f"the {src}'s work is code a cheaper form replaces; legal when {f.condition}",
        )
    return (
        f"Move the {src}'s work to the {dst}{at}: {f.advice}",
        f"{f.resource}={_fmt(f.util_pct)}% of peak over the elapsed time{_per_element(f)}{model}; the {dst} do that work "
        f"{f.speedup:.1f}x faster{nxt}",
        f"the {src} limits the stage; legal when {f.condition}",
    )


def _compute_roof(f: Facts) -> Words:
    if f.resource is not None:
        return (
            f"Cut the work of the {resource_name(f.resource)} or raise its efficiency"
            + (
                " (tile sizes, pipelining stages, warp specialisation)"
                if f.resource == "tensor"
                else " (fewer instructions per element: vectorise, hoist invariant math, cheaper ops)"
            ),
            f"{f.resource}={_fmt(f.util_pct)}% of peak over the elapsed time{_per_element(f)} "
            f"({f.source}={_fmt(f.compute_pct)})",
            f"compute-bound: the {resource_name(f.resource)} is the limit",
        )
    return (
        "Raise tensor-core efficiency (tile sizes, pipelining stages, warp specialisation)"
        if f.source == "tc_pct"
        else "Raise SM instruction efficiency (fewer instructions per byte, vectorise)",
        f"{f.source}={_fmt(f.compute_pct)}",
        "compute-bound: the math units are the limit",
    )


def _latency(f: Facts) -> Words:
    if (
        f.move == "chain"
    ):  # loads that wait on the last one's value (analysis.diagnosis.parallelism.chain_share)
        at = " at " + ", ".join(f.lines) if f.lines else ""
        return (
            f"Break the chain of dependent loads{at}: know the addresses or keys ahead (a table of them, several "
            "independent chains per program, a search of fewer dependent steps) so that many round trips are in "
            "flight at once",
            f"each iteration's load (or its loop's exit) needs the last load's value{at}; memory/sync waits "
            f"{100 * (f.memory_wait or 0):.0f}% of warp time",
            "a chain of dependent memory round trips: one in flight per chain",
        )
    if f.sectors_per_request is not None and f.resource:  # narrow loads in a loop bound by its per-step work
        return (
            "Load 16 bytes per thread per instruction (a wider block per loop step; rows aligned to 16 bytes): "
            "each step covers more data, so the loop takes fewer steps, requests and per-step reductions",
            f"global loads {_fmt(f.sectors_per_request)} sectors/request (16 = 16-byte loads); {f.resource} "
            "bound by the loop's per-step work",
            "narrow loads make many loop steps",
        )
    if f.sectors_per_request is not None:  # narrow loads (analysis.diagnosis.parallelism.wider_loads_share)
        return (
            "Load 16 bytes per thread per instruction (rows aligned to 16 bytes — pad the row stride, "
            "tl.multiple_of hints — or vector types): more bytes in flight per load",
            f"global loads {_fmt(f.sectors_per_request)} sectors/request (16 = 16-byte loads), warps waiting "
            "on global memory",
            "narrow loads keep few bytes in flight",
        )
    stalls = f.stalls or ()
    evidence = "; warp time: " + ", ".join(f"{r} {100 * s:.0f}%" for r, s in stalls) if stalls else ""
    return (
        "Hide memory latency: more loads in flight (num_stages ≥ 3 to pipeline the loads, more "
        "elements per program, more programs)"
        if f.memory_stalls
        else "Expose more parallelism to hide latency (more loads in flight, more blocks, fewer syncs)",
        (f"{f.metric}={_fmt(f.value)}" if f.value is not None else "latency-bound") + evidence,
        "latency-bound: neither memory nor math is busy",
    )


_LIMITER_FIX = {
    "registers": "fewer registers per thread: smaller tiles or fewer accumulators per program, or fewer values "
    "per thread (more num_warps for the same tile)",
    "shared_mem": "less shared memory per block: fewer num_stages, smaller BLOCK_K or tiles",
    "warps": "smaller blocks (fewer num_warps) so more blocks fit",
    "blocks": "larger blocks (more num_warps, more work per program): the SM's block-slot limit is reached",
}


def _occupancy(f: Facts) -> Words:
    """The resource that limits occupancy when the launch statistics say (annotation/ncu), else the
    generic list."""
    if f.resource == "blocks":  # the block scheduler bounds it (analysis.diagnosis.dispatch)
        occ = f"; the SMs hold {_fmt(f.occupancy_pct)}% of their warps" if f.occupancy_pct is not None else ""
        return (
            "Give each program more work (several rows or tiles per program, more warps per block): "
            "a grid of a few waves of full blocks",
            f"grid_blocks={f.grid_blocks}: the block scheduler at {_fmt(f.util_pct)}% of its rate"
            f"{_SOURCE_NOTE['grid']}{occ}"
            + (f"; then the {resource_name(f.next_limiter)} limits" if f.next_limiter else ""),
            "blocks are dispatched about one per clock for the chip: tiny programs leave the SMs empty",
        )
    hint, trigger = "too few warps to hide latency", f"occupancy_pct={_fmt(f.occupancy_pct)}"
    if f.limiter is None:
        return (
            "Raise occupancy (fewer registers or less shared memory per block, smaller tiles)",
            trigger,
            hint,
        )
    name, blocks = f.limiter
    if name == "grid":  # the grid gives the SMs fewer blocks than fit (analysis.diagnosis.parallelism)
        per = f"{blocks:.2g} block(s) per SM" if blocks is not None else "too few blocks per SM"
        return (
            f"Raise occupancy, limited by the grid ({per}): launch more programs per SM (a persistent grid "
            "sized SMs x the blocks an SM holds, or one program per tile)",
            f"{trigger}; the grid gives {per}, fewer than the registers, shared memory and slots allow",
            "the grid, not the block's resources, keeps the SMs' warps few",
        )
    return (
        f"Raise occupancy, limited by {name.replace('_', ' ')} ({blocks:.0f} block(s) per SM): {_LIMITER_FIX[name]}",
        f"{trigger}; occupancy limited by {name} ({blocks:.0f} blocks/SM)",
        hint,
    )


def _ncu(f: Facts) -> Words:
    focus = f.focus
    return (
        f"ncu {f.section}/{f.rule}: {f.title}",
        f"{focus[0]}={_fmt(focus[1])}" if focus else f"ncu_est_runtime_saving={_fmt(f.speedup_pct)}%",
        "Nsight Compute's own estimate",
    )


def _streams(f: Facts) -> Words:
    if f.move == "batch":  # launches of one kernel run one after another (analysis.diagnosis.timeline)
        name = (f.kernel.split("<")[0].split("(")[0].split("::")[-1].split() or [f.kernel])[-1][:60]
        return (
            f"Run the {f.kernels} launches of {name} side by side: one launch over all their items (a batched "
            "or grouped kernel, a larger grid), or each on a stream of its own (torch.cuda.Stream) where they "
            "are independent; if each reads the last one's output, give each more blocks instead",
            f"{f.kernels} launches of {name} in a row on one stream, each filling "
            f"{_fmt(100 * f.waves_per_sm)}% of the GPU's block slots (grid {f.grid_blocks}); replayed side by side",
            "kernels that each fill a small part of the GPU run one after another",
        )
    return (
        "Make the streams overlap (fewer blocks per kernel, no implicit syncs between streams, stream priorities)",
        f"stream_overlap_pct={_fmt(f.stream_overlap_pct)}",
        "concurrent stages run mostly one at a time",
    )


# One wording per cause the diagnosis finds.
WORDS: dict[str, Callable[[dict[str, Any]], Words]] = {
    "few_blocks": _few_blocks,
    "tail": _tail,
    "spills": _spills,
    "fusion": _fusion,
    "over_fetch": _over_fetch,
    "move_work": _move_work,
    "atomics": _atomics,
    "small_tiles": _small_tiles,
    "bank_conflicts": _bank_conflicts,
    "divergence": _divergence,
    "dram_roof": _dram_roof,
    "compute_roof": _compute_roof,
    "latency": _latency,
    "occupancy": _occupancy,
    "ncu": _ncu,
    "launch": _launch,
    "streams": _streams,
    "sync": _sync,
    "host": _host,
    "first_call": _first_call,
    "copy": _copy,
    "cuda_api": _cuda_api,
    **RANK_WORDS,  # a multi-rank job's straggler and exposed communication (issue 39)
}


def words(o: Opportunity) -> Words:
    """An opportunity's name, trigger and hint."""
    return WORDS[o.cause](o.facts)


def metric_text(metric: str, value: float) -> str:
    """An unhealthy metric as ``metric=value``."""
    if metric == "local_spill_bytes":
        return f"{metric}={int(value)}"
    if metric in ("waves_per_sm", "dram_bytes/model"):
        return f"{metric}={value:.2f}"
    return f"{metric}={_fmt(value)}"


_FAMILY = {
    "memory": "waiting on global/local memory",
    "shared": "waiting on shared memory or the MIO queue",
    "sync": "waiting at barriers and fences",
    "latency": "waiting on dependent instructions' latency",
    "control": "branches and instruction fetch",
    "compute": "a busy math pipe",
    "other": "other stalls",
}


def _limiter_text(lim) -> str:
    """The machine model's limiter (analysis.diagnosis.limiter) as one sentence, with its evidence."""
    per = ", ".join(f"{v:.3g} {k}" for k, v in lim.per_element[:2])
    per = f": {per} per element" if per else ""
    if lim.bound:
        return f"The stage is limited by the {resource_name(lim.resource)} at {100 * lim.util:.0f}% of its peak{per}."
    fam = (
        f"; {100 * lim.family_share:.0f}% of the warps' time goes to {_FAMILY.get(lim.family, lim.family)}"
        if lim.family and lim.family_share
        else ""
    )
    return (
        f"No unit is near its peak (the busiest, the {resource_name(lim.resource)}, at {100 * lim.util:.0f}%)"
        f"{fam}: latency dominates."
    )


def _of_peak(pct: float) -> str:
    """A share of a peak as printed: never above 100 % (a counter or clock that reads a little over its
    peak, within the suspect check's tolerance, is at its peak)."""
    return f"{_fmt(pct)}%" if pct <= 100.0 else "100% (reads over it)"


def root_cause_text(rc: RootCauseFacts) -> str:
    """At most two sentences naming the limiting resource and the strongest symptom."""
    label = "tensor-pipe" if rc.compute_source == "tc_pct" else "SM"
    parts = []
    if rc.dram_pct is not None:
        parts.append(f"DRAM at {_of_peak(rc.dram_pct)} of peak")
    if rc.compute_pct is not None:
        parts.append(f"{label} utilisation at {_of_peak(rc.compute_pct)}")
    measured = " and ".join(parts) if parts else "no utilisation counters were measured"
    lim = rc.limiter
    if lim is not None and (lim.source == "counters" or lim.resource == "blocks" and lim.bound):
        first = _limiter_text(lim)
    elif rc.bottleneck == MEMORY_BOUND:
        first = f"The stage is limited by device-memory bandwidth ({measured})."
    elif rc.bottleneck == COMPUTE_BOUND:
        first = f"The stage is limited by arithmetic throughput ({measured})."
    else:
        first = f"Neither memory nor math is saturated ({measured}), so latency dominates."
    if rc.symptom == "dominant" and rc.dominant is not None:
        _, trigger, hint = words(rc.dominant)
        second = f"Dominant cause: {hint} ({trigger}), about {100 * rc.dominant.share:.0f}% of the time."
    elif rc.symptom == "unhealthy":
        second = f"Unhealthy: {', '.join(metric_text(k, v) for k, v in rc.unhealthy[:3])}."
    elif rc.symptom == "compulsory":
        second = (
            f"L2 hit rate {_fmt(rc.l2_hit_pct)}% is low, but DRAM traffic is {rc.over_fetch_ratio:.2f}× the "
            "byte model: each byte is fetched about once, so locality has nothing to save."
        )
    elif rc.symptom == "low_l2":
        second = f"L2 hit rate {_fmt(rc.l2_hit_pct)}% also signals poor data reuse."
    else:
        second = ""
    return (first + (" " + second if second else "")).strip()


NOTES = {
    "compute_pct": "compute utilisation taken from SM throughput (no tensor-core work)",
    "none": "no compute utilisation was measured",
}

_NOT_RANKED = {
    "data_dependent": "not a kernel change: compression depends on the data's values and on the allocator "
    "marking memory compressible",
}


def rule_not_ranked(rule: dict) -> str | None:
    """Why an ncu rule's estimate is not ranked among the opportunities (None: it may be)."""
    why = _rule_not_ranked(rule)
    if why == "modelled":
        return f"kprof models this cause ({rule_cause(rule)}) itself; its own estimate ranks"
    return None if why is None else _NOT_RANKED[why]

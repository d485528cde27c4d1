"""The words of the causes about memory traffic: fusion (intermediates through DRAM, copy kernels) and
over-fetch (DRAM or cache traffic above the model: uncoalesced, re-read, a wider dtype)."""

from __future__ import annotations

from ...analysis.diagnosis import Facts

Words = tuple[str, str, str]  # name, trigger ("metric=value" and the evidence), hint


def _fmt(v: float) -> str:
    return f"{v:.1f}" if abs(v) < 1e5 else f"{v:.3g}"


def _l2(f: Facts) -> str:
    return f", L2 hit {_fmt(f.l2_hit_pct)}%" if f.l2_hit_pct is not None else ""


def _fusion(f: Facts) -> Words:
    if f.copy_share is not None:  # kernels that only copy data (a layout round trip)
        return (
            "Drop the copy kernels of this stage (keep one layout, or fuse the transpose into the kernel "
            "that reads it)",
            f"copy kernels {100 * f.copy_share:.0f}% of its kernel time, time/bytes_at_roof={f.time_over_roof:.2f}",
            "data copied to another layout and back through DRAM",
        )
    if f.time_over_roof is not None:  # no counters: from the kernels' times
        return (
            f"Fuse the {f.kernels} kernels of this stage into one (torch.compile, or one Triton "
            "kernel): their time is several times what the stage's bytes take at the bandwidth roof",
            f"kernels={f.kernels}, time/bytes_at_roof={f.time_over_roof:.2f} (no counters: from kernel times)",
            "unfused memory-bound kernels move intermediates through DRAM",
        )
    return (
        f"Fuse the {f.kernels} kernels of this stage into one (torch.compile, or one Triton "
        "kernel): together they move the stage's bytes several times over",
        f"kernels={f.kernels}, dram_bytes/model={f.over_fetch_ratio:.2f}",
        f"unfused kernels write and re-read intermediates in DRAM{_l2(f)}",
    )


def _over_fetch(f: Facts) -> Words:
    if f.dtype_from is not None:  # float64 kernels in a narrower stage (type promotion)
        return (
            f"Compute in {f.dtype_to}: find the {f.dtype_from} operand that promotes this stage (a numpy "
            "array, a tensor made from Python floats) and cast it once",
            f"{f.kernels} kernel(s) named with {f.dtype_from} types in a {f.dtype_to}-or-narrower stage model",
            f"{f.dtype_from} moves twice the bytes the model's dtype needs",
        )
    if f.move == "scratch":  # the build's scratch written and read back (analysis.diagnosis.passes)
        stages = ", ".join(f.focus or ())
        return (
            "Keep the intermediate on chip: fuse the stage that writes the scratch buffer into the one that "
            "reads it back (read the source through its strides instead of a .contiguous() copy; for a split "
            "reduction, no split where the grid fills the GPU without it, else combine the partials inside the "
            "kernel: a thread-block cluster's shared memory, atomics, the last program of each tile reducing)",
            f"the stages move {f.over_fetch_ratio:.2f}x the bytes of the version's inputs and outputs through "
            f"DRAM: {f.value / 1e9:.3g} GB of them a scratch buffer the result does not need, written and read "
            f"back{' by ' + stages if stages else ''}",
            "a buffer between the stages makes a round trip through DRAM the result does not need",
        )
    if f.move == "unused_input":  # an input the reference does not read (analysis.diagnosis.passes)
        stages = ", ".join(f.focus or ())
        who, how = (
            ("the stages' models", "; FLOP/byte models, no counters")
            if f.source == "model"
            else ("the stages", "")
        )
        return (
            "Stop reading an input the result does not need: compute the index, mask or table it holds from "
            "the position or the data the kernel reads (a strided slice or a computed offset, not a "
            "materialised index tensor)",
            f"{who} move {f.over_fetch_ratio:.2f}x the bytes of the version's needed inputs and outputs through "
            f"DRAM: {f.value / 1e9:.3g} GB of them an input the package's reference computes the same output "
            f"without{' (' + stages + ')' if stages else ''}{how}",
            "a buffer the reference never reads is bytes the result does not need",
        )
    if f.move == "rewrites":  # the plan's stages write the same data again (analysis.diagnosis.passes)
        stages = ", ".join(f.focus or ())
        return (
            "Write each output once across the stages: drop the fill or initialisation a later stage "
            "overwrites (torch.empty, not torch.zeros, where every element is written), or fuse the stages "
            "that write the same data",
            f"the stages write {f.over_fetch_ratio:.2f}x the bytes of the version's data to DRAM "
            f"({f.value / 1e9:.3g} GB written again{' by ' + stages if stages else ''})",
            "each stage writes its outputs once, but together they write the same data again: the first "
            "writes are dead stores",
        )
    if f.move == "passes":  # the plan's stages read the same data again (analysis.diagnosis.passes)
        stages = ", ".join(f.focus or ())
        by = f" by {stages}" if stages else ""
        moved = (
            f"the stages' models move {f.over_fetch_ratio:.2f}x the bytes of the version's data through DRAM "
            f"({f.value / 1e9:.3g} GB more{by}: read again, or written and read back; FLOP/byte models, no counters)"
            if f.source == "model"
            else f"the stages read {f.over_fetch_ratio:.2f}x the bytes of the version's data from DRAM "
            f"({f.value / 1e9:.3g} GB read again{by})"
        )
        return (
            "Read the data once across the stages: fuse the passes that read it again into one (a one-pass "
            "algorithm: Welford's mean and variance, an online softmax; or keep each tile on chip between "
            "the passes)",
            moved,
            "each stage reads its inputs once, but together they read the same data (or a temporary one "
            "of them made) from DRAM again",
        )
    if f.hot_slice_pct is not None:  # a few lines load one L2 slice (analysis.diagnosis.slices)
        return (
            "Keep the few lines every program reads off the L2: in L1 or shared memory (no .cg or volatile "
            "loads of a small table, a flag polled by one thread per block), or spread them over more addresses",
            f"busiest L2 slice {f.hot_slice_pct:.0f}% of its peak, the slices' average {f.slice_avg_pct:.1f}%",
            "traffic to a few lines waits on the one L2 slice that owns them",
        )
    if f.reread:  # data re-read through a limiting cache level (catalogue.reread_share)
        lvl = f.resource.upper()
        return (
            f"Stop re-reading data through {lvl}: load it once and keep it in registers or shared memory "
            "(hoist loop-invariant loads, one program reads each input once)",
            f"{f.resource}_bytes/model={f.over_fetch_ratio:.2f}",
            f"{lvl} moves the same data many times",
        )
    worst = f.uncoalesced or ()
    why = "; uncoalesced " + ", ".join(f"{k} ({v:.1f} sectors/request)" for k, v in worst) if worst else ""
    lvl = "L2" if f.resource == "l2" else "DRAM"  # uncoalesced accesses at a bound L2 (catalogue)
    return (
        f"Cut {lvl} traffic above the model (coalesced/vectorised access, reuse through shared "
        "memory or L2: grouped launch order, larger tiles)",
        f"{lvl.lower()}_bytes/model={f.over_fetch_ratio:.2f}{why}",
        f"more {lvl} traffic than the algorithm needs{_l2(f) if lvl == 'DRAM' else ''}",
    )

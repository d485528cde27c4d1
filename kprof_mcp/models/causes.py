"""The cause keys of the contract's opportunities (``OpportunityModel.cause``), each with what it means: the
vocabulary an agent reads, and the one every cause the diagnosis names must come from
(tests/unit/test_causes.py checks it against the words of :mod:`kprof_mcp.render.diagnosis`)."""

from __future__ import annotations

CAUSES: dict[str, str] = {
    "over_fetch": "bytes moved at a memory level (the resource: dram, l2, l1) beyond what the stage's model needs: "
    "re-reads, dead loads or stores, uncoalesced or over-wide accesses",
    "move_work": "the needed work done on a slower unit or by a costlier method than a legal alternative "
    "(FP64 -> FP32, FFMA -> tensor cores, precise -> fast math, division -> multiply, emulated instructions, work "
    "above the model, a library kernel far from the roof); the resource is where the work runs now",
    "latency": "warps wait on dependent latency with no unit near its peak: more independent work in flight "
    "(pipelined loads, wider loads, more elements per program)",
    "occupancy": "too few warps resident per SM (registers, shared memory, block slots or the grid limit them), or "
    "programs so small that the block scheduler bounds the kernel",
    "few_blocks": "a grid with fewer programs than SMs",
    "tail": "a last wave that leaves most SMs idle, or a few long programs the others wait for",
    "small_tiles": "tiles too small for reuse: operand bytes per FLOP far above what 128-wide tiles need",
    "spills": "registers spilled to local memory",
    "atomics": "global atomics: contended (serialised on the same addresses) or fenced (acquire-release ordering)",
    "bank_conflicts": "shared-memory bank conflicts",
    "divergence": "lanes idle in divergent warps",
    "fusion": "several kernels where one would keep the intermediate data on chip",
    "dram_roof": "generic: a memory-bound stage below the DRAM bandwidth tuned kernels reach",
    "compute_roof": "generic: a compute-bound stage below the rate tuned kernels reach on its pipe",
    "ncu": "a finding of Nsight Compute's own rules",
    "launch": "per-kernel launch cost on the host sets the step (many small kernels): a CUDA graph or batching",
    "streams": "work serialised on one stream that could overlap on another",
    "sync": "the host waits for the GPU (.item(), synchronize, blocking copies or launches) and the GPU idles",
    "host": "CPU work between launches sets the step (data preparation, Python)",
    "first_call": "one-off costs in the timed window: module loading, compilation, autotuning, first launches",
    "copy": "host-device transfers in the step: pageable, per sample, on the compute's stream, or per-step "
    "snapshots",
    "cuda_api": "costly CUDA API calls in the loop: allocation, graph capture and instantiation",
    "straggler": "a multi-rank job's rank the others wait for at the collectives (more work or more host work)",
    "exposed_comm": "a multi-rank job's communication not overlapped by compute",
}


def described() -> str:
    """The vocabulary as one line per key (the contract field's description)."""
    return "; ".join(f"{k}: {v}" for k, v in CAUSES.items())

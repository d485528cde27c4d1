"""The limiter from the accounting, and gains as what-ifs on a model of the machine (issue 36).

**Resources.** Every execution pipe (FMA, FP64, ALU, XU, LSU, tensor), the warp schedulers' issue
slots and every memory level (DRAM, L2, L1) is a resource. Its *use* u is the fraction of its peak it
delivered over the stage's time: Nsight Compute's pipe utilisation (% of peak over the SM's active
cycles, times the SMs' active share of the elapsed time), its issue-active %, and the memory levels'
throughput %. u·T is the time the resource's work takes at its peak: its *busy time* t. Without
counters (event mode, counters blocked) the uses come from the FLOP/byte model instead — the math at the
pipe its dtype runs on, the model's bytes at DRAM — and say so (``source="model"``); where the kernel's
static SASS mix and TTIR name special work the FLOP/byte model cannot explain, the issue slots and pipes
come from the static mix (:mod:`.static_mix`, ``source="static"``) and the same moves run on them.

**The limiter** is the resource nearest its peak when one is at least :data:`NEAR_PEAK` busy (SPEC's
healthy threshold); otherwise the stall family that owns the largest share of the warps' time
(memory, shared, sync, latency, control...), because then no unit is the bound and the warps wait.

**Every gain a what-if.** A change moves or removes resources' work; each resource's new busy time is
recomputed from its work and its peak (``machines.json``: throughput per SM per clock), and the new
stage time is

    T' = max(T − Δ, max_r t'_r, floor)

where Δ is the busy time the change takes off the limiter's critical path (the moved work's time at
the source's peak, less its time at the destination's), max_r t'_r is the next limiter (no change makes
a resource faster than its peak) and ``floor`` the shortest launch. The gain is T/T' − 1. The time not
spent in the moved work stays: the estimate never assumes the rest of the kernel speeds up with it.

**Moves** of a limiting pipe's work to another pipe are :mod:`.moves`' what-ifs; the block scheduler
as a resource is :mod:`.dispatch`'s.

**Filling the GPU** (too few blocks): Little's law — a latency-bound kernel's throughput follows the
warps it keeps in flight, so with W' warps in flight instead of W its time becomes T·W/W', but never
below the busiest resource's work at the rate tuned kernels reach (90 % of DRAM, 95 % of a pipe).

Pure: numbers in, facts out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..accounting import STALL_MEANING
from . import dispatch, static_mix
from .static_mix import DOT_NAMES

# A resource at least this busy is the limiter (SPEC.md's healthy threshold for TC/compute %).
NEAR_PEAK = 0.60
# What tuned kernels reach on each kind of resource: a streaming kernel ~90 % of DRAM bandwidth,
# cuBLAS ~95-97 % of the tensor pipe (measured on an H100: docs/diagnosis-calibration.md). Machine
# properties, used only as the floor of a what-if that adds parallelism.
ATTAINABLE = {"dram": 0.90, "l2": 0.90, "l1": 0.90}
ATTAINABLE_PIPE = 0.95
# Pipes whose counters Nsight Compute reports (accounting key -> resource key). The "shared" pipe is
# Nsight Compute's FP16+tensor shared pipe, not shared memory: it is not a resource of its own.
PIPES = ("fma", "fp64", "alu", "xu", "lsu", "tensor")
MEMORY = ("dram", "l2", "l1", "host")


@dataclass(frozen=True)
class Use:
    """One resource's use: ``util`` of its peak over the stage's time (0-1: counters that read a little
    over their peak are held to it, so no figure built on a use passes 100 %); ``source`` ``counters``,
    ``model`` (the FLOP/byte model, no counters) or ``static`` (the static SASS mix, no counters)."""

    key: str
    util: float
    source: str = "counters"

    def __post_init__(self) -> None:
        object.__setattr__(self, "util", min(1.0, max(0.0, self.util)))


@dataclass(frozen=True)
class Limiter:
    """What limits the stage: ``resource`` (a pipe, ``issue`` or a memory level) at ``util`` of its
    peak, or, when none is near its peak, the stall ``family`` owning ``family_share`` of the warps'
    time (``resource`` is then the busiest one, for the record). ``per_element``: the limiter's work
    per element of the stage's model, by op class (evidence)."""

    resource: str
    util: float
    bound: bool  # the resource is at least NEAR_PEAK busy: throughput-bound on it
    family: str | None = None
    family_share: float | None = None
    uses: tuple[Use, ...] = ()
    per_element: tuple[tuple[str, float], ...] = ()
    source: str = "counters"

    def use(self, key: str) -> float:
        """The use of resource ``key`` (0 where it has none)."""
        return next((u.util for u in self.uses if u.key == key), 0.0)


def _active_frac(m) -> float:
    """The SMs' active share of the elapsed time: measured, else the grid's share of the SMs, else with
    Nsight Compute's waves per SM w the rounds' share the blocks fill, w/⌈w⌉ (equal blocks: a last wave
    of 13 programs on 132 SMs leaves 119 idle through it)."""
    a = m.accounting
    frac = a.sm_active_frac if a is not None else None
    if frac:
        return min(1.0, frac)
    if m.grid_blocks and m.sm_count and m.grid_blocks < m.sm_count:
        return m.grid_blocks / m.sm_count
    if m.waves_measured and m.waves_per_sm and m.waves_per_sm >= 1.0:
        return m.waves_per_sm / math.ceil(m.waves_per_sm)
    return 1.0


def uses(m) -> list[Use]:
    """Each resource's use, from the counters when measured, else from the FLOP/byte model (the static
    mix's issue slots and pipes where it names work that model cannot explain); and the block
    scheduler's, from the grid and its dispatch rate (:mod:`.dispatch`), in every case."""
    blocks = dispatch.use(m)
    return _uses(m, [Use(dispatch.KEY, blocks, "grid")] if blocks is not None else [])


def _uses(m, grid: list[Use]) -> list[Use]:
    a = m.accounting
    out: list[Use] = []
    if a is not None and a.measured:
        frac = _active_frac(m)
        for key in PIPES:
            pct = a.pipes.get(key)
            if pct is not None:
                out.append(Use(key, frac * pct / 100.0))
        if a.issue_active_pct is not None:
            out.append(Use("issue", frac * a.issue_active_pct / 100.0))
        levels = a.levels
        for key in ("l2", "l1"):
            if levels.get(key) is not None:
                # L1's throughput is per active SM cycle, L2's over the elapsed time.
                out.append(Use(key, (frac if key == "l1" else 1.0) * levels[key] / 100.0))
        if m.dram_pct is not None:
            out.append(Use("dram", m.dram_pct / 100.0))
        if levels.get("host") is not None and (a.level_bytes.get("host") or 0.0) > 0:
            # the host link, where the kernel's own loads and stores went to system memory
            out.append(Use("host", levels["host"] / 100.0))
        if (hot := hot_slice_use(a)) is not None:
            out.append(Use(SLICE, hot))
        return out + grid
    # No counters: the model's math at the pipe its dtype runs on, its bytes at DRAM.
    math = model_pipe(m)
    compute = m.tc_pct if m.tensor_work else m.compute_pct
    if math and compute is not None:
        out.append(Use(math, compute / 100.0, "model"))
    if m.dram_pct is not None:
        out.append(Use("dram", m.dram_pct / 100.0, "model"))
    # The static mix explains time the FLOP/byte model and the block scheduler leave unexplained.
    static = static_mix.uses(m, out + grid)
    if static is None:
        return out + grid
    return [Use(k, u, static_mix.SOURCE) for k, u in static] + [u for u in out if u.key == "dram"] + grid


# The L2's busiest slice (or atomic unit), a resource of its own where it is hot (:mod:`.slices`).
SLICE = "l2_slice"
# A slice is hot when it is busier than this many times the slices' average (a presence test: addresses hash
# evenly over the slices, so balanced traffic keeps the busiest within a few tens of % of the average).
HOT = 2.0


def hot_slice_use(a) -> float | None:
    """The busiest L2 slice's use (its throughput's or its atomic unit's, whichever is busier), 0-1, where it
    is more than :data:`HOT` times the slices' average of the same; None where the slices were not measured
    or none is hot (then the L2 level's average use stands for every slice)."""
    pairs = (
        (a.slices.get("l2"), a.levels.get("l2")),
        (a.slices.get("l2_atomic_max"), a.slices.get("l2_atomic")),
    )
    hot = [top / 100.0 for top, avg in pairs if top is not None and avg is not None and top > HOT * avg]
    return max(hot, default=None)


def model_pipe(m) -> str | None:
    """The pipe the stage's model says its math runs on (no counters)."""
    dtype = m.dtype or ""
    if m.tensor_work:
        return "tensor"
    if dtype == "float64":
        return "fp64"
    return "fma" if dtype else None


def _family(m) -> tuple[str | None, float | None]:
    """The stall family owning the largest share of the warps' time (issuing is not a stall)."""
    a = m.accounting
    if a is None or not a.stalls:
        return None, None
    shares: dict[str, float] = {}
    for st in a.stalls:
        fam = STALL_MEANING.get(st.reason, ("", "other"))[1]
        if fam != "issue":
            shares[fam] = shares.get(fam, 0.0) + st.share
    if not shares:
        return None, None
    fam = max(shares, key=lambda k: shares[k])
    return fam, shares[fam]


def per_element(m, resource: str) -> tuple[tuple[str, float], ...]:
    """The limiter's work per element of the stage's model (thread ops by class), largest first."""
    a = m.accounting
    if a is None or not m.elements:
        return ()
    counts = dict(a.op_counts)
    if a.ffma_thread_inst and "ffma" not in counts:
        counts["ffma"] = a.ffma_thread_inst
    if a.pipe_inst.get("xu"):
        counts["xu"] = 32.0 * a.pipe_inst["xu"]  # warp instructions: at most 32 threads' ops each
    classes = {
        "fp64": ("dfma", "dadd", "dmul"),
        "fma": ("ffma", "fadd", "fmul", "hfma", "hadd", "hmul"),
        "alu": ("integer",),
        "xu": ("xu", "conversion"),
        "issue": ("ffma", "fadd", "fmul", "dfma", "integer"),
    }.get(resource, ())
    got = [(c.upper(), counts[c] / m.elements) for c in classes if counts.get(c)]
    return tuple(sorted(got, key=lambda kv: -kv[1]))


def limiter(m) -> Limiter | None:
    """The stage's limiter (None: nothing measured or modelled)."""
    us = uses(m)
    if not us:
        return None
    top = max(us, key=lambda u: u.util)
    fam, share = _family(m)
    return Limiter(
        resource=top.key,
        util=top.util,
        bound=top.util >= NEAR_PEAK,
        family=fam,
        family_share=share,
        uses=tuple(sorted(us, key=lambda u: -u.util)),
        per_element=per_element(m, top.key),
        source=top.source,
    )


def dot_work(m) -> bool:
    """Evidence that the stage's FMA/FP64 work is dot products (what tensor cores do): its model says
    so, a kernel's name is a GEMM's, or its FMAs read operands that threads share through shared
    memory (a dot's reuse; an elementwise FMA chain reads none). High FLOPs per byte alone is not
    evidence: a long elementwise chain has it too."""
    if m.tensor_work:
        return True
    if any(k in name.lower() for name in m.kernel_names for k in DOT_NAMES):
        return True
    a = m.accounting
    shared = a.level_bytes.get("shared") if a is not None else None
    return bool(shared and a.ffma_thread_inst and shared >= 0.01 * a.ffma_thread_inst)


def stages_a_dot(m) -> bool:
    """Whether the kernel stages operands in shared memory for a dot (on the tensor cores or the FMA pipes),
    so that its shared-memory and L1 traffic goes with its loads: the model says tensor work, the TTIR has a
    ``tt.dot``, or its SASS loop tensor-core instructions; with neither compiled view, :func:`dot_work`."""
    if m.tensor_work or (m.ir_ops and any(op.get("kind") == "dot" for op in m.ir_ops)):
        return True
    loops = m.listing.loops if m.listing is not None else None
    if loops:
        return bool(loops.get("tensor_core"))
    return False if m.ir_ops else dot_work(m)


def issue_share(m, key: str, util: float) -> float:
    """The share of the SM's issue slots a pipe's busy time takes: a warp instruction issues 32
    threads' ops in one slot, four slots a clock per SM (one per scheduler, Volta and later), so a pipe of
    ``rate`` thread-ops per clock at ``util`` takes util × rate / 128 of them. Tensor instructions carry
    hundreds of FLOPs each: none."""
    rate = m.machine.rate(key) if m.machine is not None and key in m.machine.pipes else None
    return util * rate / ISSUE_RATE if rate else 0.0


# Thread-instructions issued per clock per SM: 4 schedulers x 1 warp instruction x 32 threads.
ISSUE_RATE = 128.0


# Floating-point op classes (and conversions) the FMA pipe executes, thread instructions; the rest of its
# work is integer: IMAD and friends, index math.
FP_ON_FMA = ("ffma", "fmul", "fadd", "hfma", "hadd", "hmul", "conversion")


def slot_shares(m, lim: Limiter) -> dict[str, float]:
    """Each CUDA-core pipe's share of the SM's issue slots (:func:`issue_share`), by the work's op class: the
    FMA pipe also issues integer multiply-adds (IMAD: index math, a search's arithmetic), and where the
    counters' instruction mix says most of its instructions are not floating-point (conversions counted
    with them), its slots are integer work, the ALU's kind (``alu``: integer and logic), not FP32 work."""
    shares = {u.key: issue_share(m, u.key, u.util) for u in lim.uses if u.key in PIPES and u.key != "tensor"}
    a = m.accounting
    fma_inst = (a.pipe_inst.get("fma") or 0.0) if a is not None else 0.0
    if shares.get("fma") and fma_inst and a.op_counts and "alu" in shares:
        fp = sum(a.op_counts.get(c, 0.0) for c in FP_ON_FMA) / (a.threads_per_inst or 32.0)
        if fp < 0.5 * fma_inst:
            shares["alu"] += shares.pop("fma")
    return shares


def source_of_limit(m, lim: Limiter) -> str | None:
    """The pipe whose work limits the stage: the limiter itself when it is a pipe, or, when the issue
    slots are, the pipe (by the work's op class: :func:`slot_shares`) that takes most of them."""
    if lim.resource in PIPES:
        return lim.resource
    if lim.resource == "issue":
        top = max(slot_shares(m, lim).items(), key=lambda kv: kv[1], default=None)
        return top[0] if top and top[1] > 0 else None
    return None


def waiting_goes(lim: Limiter, w: float) -> float:
    """The share of the time removed where the warps' waiting ``w`` (a share of their time: fences, a lock)
    goes and the instruction work stays, the issue slots and pipes bounding it: 1 − max(1 − w, their largest
    use)."""
    rest = max((u.util for u in lim.uses if u.key in (*PIPES, "issue")), default=0.0)
    return max(0.0, 1.0 - max(1.0 - w, rest))


def _tensor_for(dtype: str) -> str:
    return {"float32": "tensor_tf32", "tfloat32": "tensor_tf32", "float16": "tensor_fp16"}.get(
        dtype, "tensor_bf16" if dtype == "bfloat16" else ""
    )

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

**Moves** (``machines.json``'s list, each legal under its condition): FP64 → FP32 when fp32 accuracy
is enough, FFMA dot products → the tensor cores at the dtype (TF32 for fp32, DMMA for fp64), MUFU
transcendentals → FMA polynomials, 64-bit index math → 32-bit. A move is offered only when its work is
there (gates say "is it there at all", never how much) and the source pipe limits the stage.

**Filling the GPU** (too few blocks): Little's law — a latency-bound kernel's throughput follows the
warps it keeps in flight, so with W' warps in flight instead of W its time becomes T·W/W', but never
below the busiest resource's work at the rate tuned kernels reach (90 % of DRAM, 95 % of a pipe).

Pure: numbers in, facts out.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..accounting import STALL_MEANING
from . import dispatch, static_mix
from .static_mix import DOT_NAMES, ir_lines

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
MEMORY = ("dram", "l2", "l1")


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


def _active_frac(m) -> float:
    """The SMs' active share of the elapsed time: measured, else the grid's share of the SMs."""
    a = m.accounting
    frac = a.sm_active_frac if a is not None else None
    if frac:
        return min(1.0, frac)
    if m.grid_blocks and m.sm_count and m.grid_blocks < m.sm_count:
        return m.grid_blocks / m.sm_count
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


def _moved_fraction(m, mv, t_src: float) -> float:
    """The share of the source pipe's busy time that the move's work accounts for."""
    a = m.accounting
    if mv.work == "dot" and mv.src == "fma":
        # The FFMAs' own time at the FMA peak, when the counters give it; the pipe also issues
        # integer multiplies, FADD/FMUL and conversions, which stay.
        if a is not None and a.ffma_thread_inst and m.sm_count and m.sm_clock_hz and t_src > 0:
            rate = m.machine.rate("fma") or 0.0
            if rate:
                t_ffma = 1e9 * a.ffma_thread_inst / (rate * m.sm_count * m.sm_clock_hz)
                return min(1.0, t_ffma / t_src)
        return 1.0
    return 1.0


def issue_share(m, key: str, util: float) -> float:
    """The share of the SM's issue slots a pipe's busy time takes: a warp instruction issues 32
    threads' ops in one slot, four slots a clock per SM (one per scheduler, Volta and later), so a pipe of
    ``rate`` thread-ops per clock at ``util`` takes util × rate / 128 of them. Tensor instructions carry
    hundreds of FLOPs each: none."""
    rate = m.machine.rate(key) if m.machine is not None and key in m.machine.pipes else None
    return util * rate / ISSUE_RATE if rate else 0.0


# Thread-instructions issued per clock per SM: 4 schedulers x 1 warp instruction x 32 threads.
ISSUE_RATE = 128.0


def source_of_limit(m, lim: Limiter) -> str | None:
    """The pipe whose work limits the stage: the limiter itself when it is a pipe, or, when the issue
    slots are, the pipe that takes most of them."""
    if lim.resource in PIPES:
        return lim.resource
    if lim.resource == "issue":
        pipes = [
            (u.key, issue_share(m, u.key, u.util)) for u in lim.uses if u.key in PIPES and u.key != "tensor"
        ]
        top = max(pipes, key=lambda kv: kv[1], default=None)
        return top[0] if top and top[1] > 0 else None
    return None


# libdevice functions whose precise code runs on the FMA pipe where a MUFU approximation exists.
TRANSCENDENTALS = ("sin", "cos", "tan", "exp", "log", "pow", "tanh", "erf", "sinh", "cosh", "rsqrt", "sqrt")


def _precise(d: str) -> bool:
    """A libdevice call of a precise transcendental (``__nv_sinf``; ``__nv_fast_sinf`` is MUFU's)."""
    name = d.removeprefix("__nv_")
    return not name.startswith("fast_") and name.removesuffix("f") in TRANSCENDENTALS


def evidence_lines(m, mv) -> tuple[str, ...] | None:
    """The source lines holding a move's work, from the TTIR: () when the TTIR was read and holds none
    (the move is not there), None when there is no TTIR (counters and names decide)."""
    if not m.ir_ops:
        return None
    if mv.work == "dot":
        want = {"fma": ("f32 ieee", "f16", "bf16"), "fp64": ("f64",), "fp16": ("f16",)}.get(mv.src, ())
        return ir_lines(m, "dot", lambda d: d.startswith(want)) if want else ()
    if mv.work == "transcendental":
        return ir_lines(m, "libdevice", _precise) if mv.src == "fma" else ir_lines(m, "math")
    if mv.work == "any" and mv.src == "fp64":
        return ir_lines(m, "f64") or ir_lines(m, "dot", lambda d: d.startswith("f64"))
    if mv.work == "index":
        return (
            ir_lines(m, "int_div")
            if "div" in mv.key
            else ir_lines(m, "i64") + ir_lines(m, "int_div", lambda d: "i64" in d)
        )
    if mv.work == "division":
        return ir_lines(m, "fdiv")
    return None


def _legal(m, mv, lim: Limiter, u_src: float) -> bool:
    """Whether the move's work is there (gates only: "is it there at all"): the source pipe limits the
    stage (it is the limiter, or takes most of the limiting issue slots) and holds the move's kind of
    work, by the TTIR where there is one, else by the counters and the kernels' names."""
    if u_src <= 0.0 or source_of_limit(m, lim) != mv.src:
        return False
    lines = evidence_lines(m, mv)
    if lines is not None and not lines and mv.work in ("dot", "transcendental", "index", "division"):
        return False
    dtype = m.dtype or ""
    if mv.work == "dot":
        tensor = next((u.util for u in lim.uses if u.key == "tensor"), 0.0)
        if mv.src == "tensor" or tensor >= 0.05:
            # Tensor cores already busy: the FMAs are the epilogue's, not the dot's. A lower-precision
            # tensor format changes the model's numerics: not offered.
            return False
        if mv.src == "fma" and mv.dst != _tensor_for(dtype):
            return False
        if mv.src == "fp64" and dtype != "float64" and not lines:
            return False
        return bool(lines) or dot_work(m)
    if mv.work == "any":
        return True
    if mv.work == "transcendental":
        return mv.src == "xu" or bool(lines)  # precise FMA-pipe transcendentals: only with the TTIR's word
    if mv.work == "index":
        return (
            bool(lines)
            if lines is not None
            else (mv.key == "int64_to_int32" and dtype not in ("int32", "int64", "int8"))
        )
    if mv.work == "division":
        return bool(lines)
    return False


def _tensor_for(dtype: str) -> str:
    return {"float32": "tensor_tf32", "tfloat32": "tensor_tf32", "float16": "tensor_fp16"}.get(
        dtype, "tensor_bf16" if dtype == "bfloat16" else ""
    )


def _move_facts(m, mv, lim: Limiter, util: float, speedup, after: dict, lines, per_el) -> dict:
    """A move's facts (worded by render/diagnosis): the source pipe and its use, the destination, the
    next limiter after the move, the work per element, the source lines, the advice and its condition."""
    return {
        "resource": mv.src,
        "util_pct": 100.0 * util,
        "target": mv.dst,
        "move": mv.key,
        "speedup": speedup,
        "next_limiter": max(after, key=lambda k: after[k]) if after else None,
        "per_element": per_el,
        "lines": lines,
        "advice": mv.advice,
        "condition": mv.when,
        "source": lim.source,
    }


# Moves whose work is a stretch of code spread over several pipes (a libdevice function, integer
# division, an IEEE division), not one pipe's instructions: the op classes ``per_op`` counts from (the
# table's per_op is destination ops per source-pipe op of that code).
CODE_OPS = {
    "transcendental": ("ffma", "fadd", "fmul"),
    "index": ("integer",),
    "division": ("ffma", "fmul"),
}


def _code_move(m, mv, lim: Limiter) -> tuple[float, dict] | None:
    """A move of code (``CODE_OPS``), the TTIR naming its lines. What-if: the SMs issue only what the
    stage's model needs (one op per FLOP, one memory op per element) plus the destination's ops
    (``per_op`` per source op of the code); every other issued instruction was the code's. The freed
    issue time comes off T where the issue slots limit (issue-bound), or in proportion where no unit is
    near its peak (latency-bound: the time goes with the instructions at the kernel's cycles per
    instruction); never under the destination pipe's time for the new ops, nor any other resource's.
    None without the instruction mix (recordings before issue 36; in event mode, the static mix's
    estimate where it applies) or the TTIR's evidence."""
    a = m.accounting
    if a is not None and a.op_counts and a.inst_executed:
        issued = a.inst_executed * (a.threads_per_inst or 32.0)
        src_ops = sum(a.op_counts.get(c, 0.0) for c in CODE_OPS[mv.work])
        flops = m.flops or 0.0
    elif (counts := static_mix.code_counts(m, mv, lim)) is not None:
        issued, src_ops = counts  # without counters: the static mix's estimate over the measured time
        flops = m.listing.flops
    else:
        return None
    lines = evidence_lines(m, mv)
    if not lines:
        return None
    if not issued or src_ops < 0.1 * issued:  # gate: the code is a visible part of what the SMs issue
        return None
    need = flops + (m.elements or 0.0)
    calls = [str(op.get("detail")) for op in m.ir_ops if op.get("kind") == "libdevice"]
    per_op = mv.per_op_for(calls) if mv.work == "transcendental" else mv.per_op
    new_ops = src_ops * per_op
    freed_f = max(0.0, (issued - need - new_ops) / issued)
    T = m.time_ns
    busy = {u.key: u.util * T for u in lim.uses}
    if lim.bound and lim.resource == "issue":
        freed, basis = busy["issue"] * freed_f, "issue"
    elif lim.bound and lim.resource in PIPES:
        # A pipe limits (a division's MUFU.RCP on the XU pipe): the code's share of its work goes with it.
        freed, basis = busy[lim.resource] * freed_f, lim.resource
    elif not lim.bound:
        freed, basis = T * freed_f, "cpi"
    else:
        return None  # a memory level limits: removing code does not shorten it
    keep = 1.0 - freed_f
    after = {k: (v * keep if k in PIPES or k == "issue" else v) for k, v in busy.items()}
    r_dst = m.machine.rate(mv.dst)
    clock = m.sm_clock_hz or (m.listing.clock_hz if m.listing is not None else None)
    if m.sm_count and clock and r_dst:
        dst_key = "tensor" if mv.dst.startswith("tensor") else mv.dst
        after[dst_key] = after.get(dst_key, 0.0) + 1e9 * new_ops / (r_dst * m.sm_count * clock)
    new_t = max(T - freed, max(after.values(), default=0.0), m.floor_ns or 0.0)
    facts = _move_facts(
        m,
        mv,
        lim,
        busy.get(mv.src, 0.0) / T,
        (1.0 / per_op) if per_op else None,
        after,
        lines,
        per_element(m, basis if basis in ("issue", lim.resource) else mv.src),
    )
    facts["value"] = 100.0 * freed_f  # the share of the issued instructions the move frees, %
    return max(0.0, 1.0 - new_t / T), facts


def what_if_moves(m, lim: Limiter | None) -> list[tuple[str, float, dict]]:
    """(cause, share, facts) for each legal move of a limiting pipe's work to another pipe: the best
    destination per source. Shares are of the stage's time, from T' = max(T − Δ, next limiter).
    Without counters, also the contended atomics the static mix shows (:func:`.static_mix.atomics`)."""
    if lim is None or m.machine is None or not m.time_ns:
        return []
    T = m.time_ns
    busy = {u.key: u.util * T for u in lim.uses}
    best: dict[str, tuple[float, dict]] = {}
    for src in {u.key for u in lim.uses if u.key in PIPES}:
        for mv in m.machine.moves_from(src):
            u_src = busy.get(src, 0.0) / T
            if mv.work in CODE_OPS and not (mv.work == "transcendental" and mv.src == "xu"):
                got = _code_move(m, mv, lim)
                if got is not None and got[0] > best.get(src, (-1.0, {}))[0]:
                    best[src] = got
                if (
                    got is not None
                    or lim.source == static_mix.SOURCE
                    or (m.accounting is not None and m.accounting.op_counts)
                ):
                    continue  # with the instruction mix (or the static one) the code's own what-if decides
            if not _legal(m, mv, lim, u_src):
                continue
            r_src, r_dst = m.machine.rate(mv.src), m.machine.rate(mv.dst)
            if not r_src or not r_dst:
                continue
            t_src = busy[src]
            moved = t_src * _moved_fraction(m, mv, t_src)
            added = moved * mv.per_op * r_src / r_dst
            after = dict(busy)
            after[src] = t_src - moved
            dst_key = "tensor" if mv.dst.startswith("tensor") else mv.dst
            after[dst_key] = after.get(dst_key, 0.0) + added
            if mv.dst == mv.src:
                after[src] = t_src - moved + added
            if "issue" in after:
                # The moved instructions leave the issue slots; the destination's take their own.
                after["issue"] = max(
                    0.0,
                    after["issue"]
                    - moved * r_src / ISSUE_RATE
                    + (0.0 if dst_key == "tensor" else added * r_dst / ISSUE_RATE),
                )
            new_t = max(T - (moved - added), max(after.values(), default=0.0), m.floor_ns or 0.0)
            share = max(0.0, 1.0 - new_t / T)
            speedup = r_dst / (r_src * mv.per_op) if mv.per_op else None
            lines = evidence_lines(m, mv) or None
            facts = _move_facts(m, mv, lim, u_src, speedup, after, lines, per_element(m, src))
            if share > best.get(src, (-1.0, {}))[0]:
                best[src] = (share, facts)
    out = [("move_work", share, facts) for share, facts in best.values()]
    got = static_mix.atomics(m, [u for u in lim.uses if u.source != static_mix.SOURCE])
    return out + ([("atomics", got[0], got[1])] if got else [])

"""Moves of a limiting pipe's work to another pipe, as what-ifs on the machine model (issue 36; the
limiter and the resources' uses are :mod:`.limiter`'s).

**Moves** (``machines.json``'s list, each legal under its condition): FP64 → FP32 when fp32 accuracy
is enough, FFMA dot products → the tensor cores at the dtype (TF32 for fp32, DMMA for fp64), MUFU
transcendentals → FMA polynomials, 64-bit index math → 32-bit, FMUL and FADD pairs → FFMA. A move is
offered only when its work is there (gates say "is it there at all", never how much) and the source pipe
limits the stage. Its gain is T/T' − 1 with T' = max(T − Δ, max_r t'_r, floor) (see :mod:`.limiter`).
Moves of *code* (a libdevice function, integer division, an IEEE division: work spread over several pipes)
recompute every pipe from the code's per-pipe instruction mix where the table has it (``per_call``).

Pure: numbers in, facts out.
"""

from __future__ import annotations

from . import static_mix
from .core import CODE_FP_OPS, CODE_VISIBLE
from .limiter import (
    ISSUE_RATE,
    PIPES,
    Limiter,
    _tensor_for,
    dot_work,
    per_element,
    source_of_limit,
)
from .static_mix import ir_lines


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
        tensor = lim.use("tensor")
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
    "transcendental": CODE_FP_OPS,
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
    # gate: the code is a visible part of what the SMs issue
    if not issued or src_ops < CODE_VISIBLE * issued:
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
    per_pipe = _per_pipe(m, mv, busy, max(0.0, src_ops - flops), clock)
    if per_pipe:  # the code's per-pipe mix is known: each pipe's work recomputed from it
        after.update(per_pipe)
        if lim.bound and lim.resource in per_pipe:
            freed = busy[lim.resource] - per_pipe[lim.resource]
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


def _per_pipe(m, mv, busy: dict, code_src_ops: float, clock: float | None) -> dict[str, float]:
    """Each pipe's busy time after a move of code whose per-call instruction mix the table gives
    (``per_call``: the precise code's ops per pipe and the replacement's): the code's calls are its
    source-pipe ops beyond the model's FLOPs over the precise mix's source ops per call; every pipe of
    the mix loses the code's ops and gains the replacement's, at its rate. {} without the mix, the
    counters' instruction mix, or a clock (the uniform share of :func:`_code_move` stays)."""
    if not mv.per_call or not m.sm_count or not clock or not code_src_ops or m.accounting is None:
        return {}
    if mv.work == "transcendental":
        names = [
            str(op.get("detail")).removeprefix("__nv_") for op in m.ir_ops if op.get("kind") == "libdevice"
        ]
    elif mv.work == "division":
        names = ["x/y"] * sum(int(op.get("count") or 1) for op in m.ir_ops if op.get("kind") == "fdiv")
    else:
        return {}
    precise: dict[str, float] = {}
    fast: dict[str, float] = {}
    for n in names:
        fn = mv.per_call.get(n)
        if not isinstance(fn, dict) or not isinstance(fn.get("precise"), dict):
            return {}  # a call the table does not count: no per-pipe figure
        repl = next((v for k, v in fn.items() if k.startswith("fast") and isinstance(v, dict)), {})
        for p, v in fn["precise"].items():
            precise[p] = precise.get(p, 0.0) + float(v)
        for p, v in repl.items():
            fast[p] = fast.get(p, 0.0) + float(v)
    if not precise.get(mv.src):
        return {}
    calls = code_src_ops / precise[mv.src]  # per call site, summed over the sites
    out = {}
    for p in set(precise) | set(fast):
        rate = m.machine.rate(p)
        if p not in busy or not rate:
            continue
        t = 1e9 / (rate * m.sm_count * clock)  # ns per thread-op on this pipe, all SMs
        out[p] = max(0.0, busy[p] - calls * precise.get(p, 0.0) * t) + calls * fast.get(p, 0.0) * t
    return out


def _contraction_move(m, mv, lim: Limiter) -> tuple[float, dict] | None:
    """FP32 products and sums issued one FLOP per op (FMUL, FADD) where an FFMA does a multiply and an add
    in one op at the same rate. What-if: every two of them one FFMA (``per_op`` 0.5, the most an FFMA's two
    FLOPs allow: a bound), the ops that go taken off the issue slots and the FMA pipe; T' = max(T − the time
    freed on the limiter, every resource's time after, floor), as for a move of code. Gate ("is it there"):
    the FMA pipe's work limits the stage (:func:`.limiter.source_of_limit`) and FMUL + FADD are at least a
    tenth of the issued thread instructions. None without the counters' instruction mix."""
    a = m.accounting
    if a is None or not a.op_counts or not a.inst_executed or source_of_limit(m, lim) != mv.src:
        return None
    single = a.op_counts.get("fmul", 0.0) + a.op_counts.get("fadd", 0.0)
    tpi = a.threads_per_inst or 32.0
    issued = a.inst_executed * tpi
    if single < 0.1 * issued:
        return None
    gone = single * (1.0 - mv.per_op)  # thread ops that go
    T = m.time_ns
    busy = {u.key: u.util * T for u in lim.uses}
    after = dict(busy)
    if "issue" in after:
        after["issue"] = busy["issue"] * (1.0 - gone / issued)
    fma_ops = (a.pipe_inst.get("fma") or 0.0) * tpi
    if mv.src in after:
        after[mv.src] = busy[mv.src] * max(0.0, 1.0 - gone / max(fma_ops, single))
    if lim.bound and lim.resource in (mv.src, "issue"):
        freed = busy[lim.resource] - after[lim.resource]
    elif not lim.bound:  # the time goes with the instructions, at the kernel's cycles per instruction
        freed = T * gone / issued
    else:
        return None
    new_t = max(T - freed, max(after.values(), default=0.0), m.floor_ns or 0.0)
    facts = _move_facts(
        m, mv, lim, busy.get(mv.src, 0.0) / T, 1.0 / mv.per_op, after, None, per_element(m, mv.src)
    )
    facts["value"] = 100.0 * gone / issued  # the share of the issued instructions the move frees, %
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
            if mv.work == "contraction":
                got = _contraction_move(m, mv, lim)
                if got is not None and got[0] > best.get(src, (-1.0, {}))[0]:
                    best[src] = got
                continue
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


def widened_dot(m, lim: Limiter | None) -> tuple[float, dict] | None:
    """A dot whose operands were widened past the data's dtype: the kernel's TTIR has its ``tt.dot`` at
    f32 with TF32 input precision (the tiles converted to float32 before the dot) while the stage's model
    says the data are bf16 or fp16. Fed the tiles as loaded, the MMAs run at the 16-bit rate and lose
    nothing (the products of 16-bit values are exact in both; fp32 accumulation either way), and the
    operands' staging through shared memory and the loads that carry them move half the bytes. What-if:
    the tensor pipe's use × (TF32 rate / 16-bit rate), L1's and the LSU pipe's × 1/2, the other uses stay,

        T'/T = max(1 − u_lim·(1 − k_lim), the largest use after the change)

    (k_lim: the limiter's own factor). The registers the widened tiles held are freed too, which the
    estimate does not count (the gain is a lower bound where registers limit occupancy). None when it does
    not apply; the FMA-pipe case (an ieee f32 dot) is the FFMA moves'."""
    if lim is None or m.machine is None or not m.time_ns or m.dtype not in ("bfloat16", "float16"):
        return None
    dots = [str(op.get("detail", "")) for op in m.ir_ops if op.get("kind") == "dot"]
    if not dots or not all(d.startswith("f32") and "tf32" in d for d in dots):
        return None
    dst = _tensor_for(m.dtype)
    r_src, r_dst = m.machine.rate("tensor_tf32"), m.machine.rate(dst)
    if not r_src or not r_dst:
        return None
    keep = {"tensor": r_src / r_dst, "l1": 0.5, "lsu": 0.5}
    after = {u.key: u.util * keep.get(u.key, 1.0) for u in lim.uses}
    k_lim = keep.get(lim.resource, 1.0)
    share = max(0.0, 1.0 - max(1.0 - lim.util * (1.0 - k_lim), max(after.values(), default=0.0)))
    facts = {
        "resource": "tensor",
        "util_pct": 100.0 * lim.use("tensor"),
        "target": dst,
        "move": "tf32_to_bf16" if dst == "tensor_bf16" else "tf32_to_fp16",
        "speedup": r_dst / r_src,
        "next_limiter": max(after, key=lambda k: after[k]) if after else None,
        "lines": ir_lines(m, "dot") or None,
        "advice": "feed tl.dot the 16-bit tiles as loaded (no conversion to float32 before the dot): fp32 "
        "accumulation either way",
        "condition": f"the operands are {m.dtype} data (the stage's model): the {m.dtype} MMA computes the same "
        "products exactly",
        "source": lim.source,
    }
    return share, facts

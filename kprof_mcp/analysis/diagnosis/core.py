"""CUDA-core work against the stage's model (issue 36's machine model): what each CUDA-core resource executed,
from the op-class counters, in the model's units, and what the model says the work needs there. The what-ifs
that take surplus instructions away (:mod:`.catalogue`: the excess core work, the re-read's and the over-fetch's
arithmetic) read them. Pure: numbers in, numbers out."""

from __future__ import annotations

from .metrics import OVER_FETCH_HEALTHY, Metrics

# FLOPs per thread op of each class the pipes' counters report: FFMA/DFMA two, FP16 pairs (HFMA2: two
# lanes of two FLOPs; HADD2/HMUL2: two lanes of one) four and two, the rest one.
FLOPS_PER_OP = {
    "fadd": 1,
    "fmul": 1,
    "ffma": 2,
    "dadd": 1,
    "dmul": 1,
    "dfma": 2,
    "hadd": 2,
    "hmul": 2,
    "hfma": 4,
}
# Resources that carry the instruction stream (they shrink with the instructions it issues); the memory
# levels below L1 carry bytes, which the model's bytes already bound (over-fetch is their cause).
INSTRUCTION_SIDE = ("issue", "fma", "fp64", "alu", "xu", "lsu", "l1")
CORE_LIMITERS = ("issue", "fma", "fp64", "alu", "xu")
# TTIR kinds whose code expands one modelled FLOP into many instructions: the code moves own that excess.
EXPANDING_CODE = ("libdevice", "fdiv", "fsqrt")
# A code move's gate (moves._code_move): the code's FP instructions are at least this share of the thread ops the
# SMs issued (a visible part of the work, "is it there at all").
CODE_VISIBLE = 0.1
# The FP op classes an expanding code's instructions are counted from (moves.CODE_OPS' transcendental code).
CODE_FP_OPS = ("ffma", "fadd", "fmul")


def code_owns_excess(m: Metrics) -> bool:
    """Whether the stage's CUDA-core work beyond its model is the expanding code's (:data:`EXPANDING_CODE` in the
    TTIR: a precise libdevice function, an IEEE division or square root), which the code moves take: the code is
    there and, with the op-class counters, its FP instructions pass the code moves' gate. Where they do not (set
    38's sines of large arguments: libdevice sinf's Payne-Hanek path, 3.1e9 integer thread ops against 4.4e8 FP,
    8 % of those issued), no code move applies and the work beyond the model stays the excess what-if's."""
    if not any(op.get("kind") in EXPANDING_CODE for op in m.ir_ops or ()):
        return False
    a = m.accounting
    if a is None or not a.op_counts or not a.inst_executed:
        return True
    issued = a.inst_executed * (a.threads_per_inst or 32.0)
    fp = sum(a.op_counts.get(c, 0.0) for c in CODE_FP_OPS)
    return fp >= CODE_VISIBLE * issued


def executed_flops(m: Metrics) -> float | None:
    """The CUDA-core FLOPs the stage executed (predicated-on thread ops by class, FFMA as two), or None
    without the op-class counters."""
    a = m.accounting
    if a is None or not a.op_counts:
        return None
    counts = dict(a.op_counts)
    if a.ffma_thread_inst and "ffma" not in counts:
        counts["ffma"] = a.ffma_thread_inst
    return sum(FLOPS_PER_OP[k] * v for k, v in counts.items() if k in FLOPS_PER_OP)


def integer_ops(m: Metrics) -> float | None:
    """The integer and logic thread ops the stage executed (the ALU pipe's work), or None without the
    op-class counters."""
    a = m.accounting
    if a is None or not a.op_counts:
        return None
    return float(a.op_counts.get("integer") or 0.0) or None


def core_work(m: Metrics) -> dict[str, float]:
    """Each CUDA-core resource's executed work in the model's units (the op-class counters): the issue slots
    FP and integer thread ops, the FMA, FP64 and XU pipes the FLOPs, the ALU its integer and logic ops. Empty
    for tensor-core stages (their FLOPs are the tensor pipe's), code that expands one modelled FLOP into many
    where the code moves take it (:func:`code_owns_excess`), or without a FLOP model (nor the model's integer
    operations)."""
    if m.tensor_work or not (m.flops or m.int_ops) or code_owns_excess(m):
        return {}
    fp, ints = executed_flops(m) or 0.0, integer_ops(m) or 0.0
    return {"issue": fp + ints, "fma": fp, "fp64": fp, "xu": fp, "alu": ints}


def core_model(m: Metrics) -> dict[str, float]:
    """The model's work on each resource of :func:`core_work`: its FLOPs everywhere, or, where the model
    states the integer operations the work needs (``StageModel.int_ops``), those on the ALU and both on the
    issue slots."""
    f, i = m.flops or 0.0, m.int_ops
    return (
        {k: f for k in ("issue", "fma", "fp64", "xu", "alu")}
        if i is None
        else {"issue": f + i, "fma": f, "fp64": f, "xu": f, "alu": i}
    )


def core_keeps(m: Metrics) -> dict[str, float]:
    """Each CUDA-core resource's share of its work that the stage's model counts, where the stage did
    r > 1.25 times the model's work there (:func:`core_work`; the XU pipe's work is not FLOPs, left out):
    {resource: 1/r}. The re-read what-if takes the instruction stream down to it with the bytes
    (:func:`reread_share`)."""
    model = core_model(m)
    done = {k: v for k, v in core_work(m).items() if k != "xu" and model[k]}
    return {k: model[k] / v for k, v in done.items() if v > OVER_FETCH_HEALTHY * model[k]}

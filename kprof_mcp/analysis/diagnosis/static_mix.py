"""The machine model without counters (event mode, counters blocked): each resource's work from the
kernel's static SASS mix (``parsers/sass.py``) and its TTIR (``parsers/ttir.py``), labelled
``source="static"``. docs/machine-model.md ("Without counters") gives the method and its error on the
recorded pairs.

**The code that runs.** The instructions inside the listing's loops when it has any (a loop body runs
once per trip, where a kernel with loops spends its time), else the whole listing; NOPs left out. A
listing recorded before loops were counted (``sass_loop_mix`` None) is taken whole.

**One pass of it.** One warp executing that code once takes, of one SM's clocks: N/4 issue slots (four
schedulers); n_p·32/rate_p on each pipe p (its classes' instructions, the rates of ``machines.json``:
fp32 and fp16 on the FMA pipe, fp64 on the FP64 pipe, MUFU and conversions on the XU pipe, integer and
float compare/select on the ALU, memory instructions on the LSU); its global accesses × 32 threads ×
the element's bytes at DRAM's bytes per clock per SM (one element per thread per access, the heaviest
memory can be made to look: Triton's vector accesses move 4-8), its local accesses × 32 × 4 B at L2's
bytes per clock per SM (spills live in L1 and L2), its shared accesses × 32 × 4 B at 128 B per clock.
The resource with the longest time is the pass's limiter: an instruction resource (the issue slots or a
math pipe) says the code outweighs even scalar memory traffic (the LSU pipe on top is memory's side).

**Static uses.** Where the listing (or its TTIR) names special work (fp64 math, MUFU, a dot on the FMA
pipes, code the TTIR pins to a line: precise libdevice functions, integer division, IEEE division),
carries no tensor-core instruction (their work is the FLOP/byte model's), its pass is limited by an
instruction resource and the FLOP/byte model explains less than NEAR_PEAK of the time, the pass's
limiter is taken busy over the whole measured time (the model's one assumption: an upper bound; the
issue-bound recordings measured 70-99 %) and every other instruction resource in proportion to its
pass time: u_r = t_r / t_top. DRAM keeps the FLOP/byte model's use; the tensor pipe has none (the
listing holds no tensor-core instruction). Anything else stays on the FLOP/byte model as before.

**Causes a pass shows.** Spills (the compiler spilled and the listing holds LDL/STL): their share of the
pass's memory time, as the counters' share of L1 bytes. Contended atomics (global atomics in the
listing, its pass on the memory side, the FLOP/byte model explaining under NEAR_PEAK): the time the model
leaves unexplained, at most (contention is in the data, not the code).

Pure: numbers in, numbers out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SOURCE = "static"
LABEL = "static SASS mix / TTIR, no counters"
NEAR_PEAK = 0.60  # limiter.NEAR_PEAK's value (the limiter imports this module; tested equal)
ISSUE_PER_CLOCK = 4.0  # warp instructions per clock per SM: one per scheduler
WARP = 32.0
LOCAL_ACCESS_BYTES = 4.0  # a spilled register
SHARED_ACCESS_BYTES = 4.0
# The mix's classes by the pipe that executes them (``fp_arith``: listings before the split, placed by
# the TTIR: see :func:`_pipe_classes`).
PIPE_CLASSES = {
    "fma": ("fp32", "fp16"),
    "fp64": ("fp64",),
    "xu": ("mufu", "conversion"),
    "alu": ("integer", "fp_compare"),
    "lsu": (
        "global_load",
        "global_store",
        "shared_load",
        "shared_store",
        "local_spill",
        "atomic",
        "atomic_shared",
    ),
}
GLOBAL = ("global_load", "global_store", "atomic")
INSTRUCTION_RESOURCES = ("issue", "fma", "fp64", "alu", "xu", "lsu")
# Names of dot-product kernels (cuBLAS/CUTLASS/Triton/torch): evidence that FFMAs are dot products.
# Kernel-name words of dot products: ours and Triton's, cuBLAS's (``nvjet_sm90_tst_...``, ``sm90_xmma_gemm_...``),
# CUTLASS's and cuDNN's (``..._implicit_gemm_...``, ``..._sdpa_..._fprop_...``).
DOT_NAMES = ("gemm", "matmul", "_mm_", "mm_kernel", "dot", "conv", "bmm", "linear", "nvjet", "xmma")
# The classes of a move's code (limiter.CODE_OPS' op classes, as the listing names them).
CODE_CLASSES = {"transcendental": ("fp32", "fp16"), "division": ("fp32",), "index": ("integer",)}


@dataclass(frozen=True)
class Listing:
    """What the static model reads of a stage: its listing's instruction ``classes`` and the same inside
    its loops (``loops``: None when not recorded, {} when it has none), the SM clock the stage ran at,
    the element size, DRAM's and L2's bytes per clock per SM, shared memory's (the machine's), and
    the stage's model FLOPs."""

    classes: dict[str, int] = field(hash=False)
    loops: dict[str, int] | None = field(default=None, hash=False)
    clock_hz: float | None = None
    elem_bytes: float = 4.0
    dram_per_clock: float | None = None
    l2_per_clock: float | None = None
    shared_per_clock: float = 128.0
    flops: float = 0.0  # the stage's model FLOPs (the moves' "need": Metrics.flops is the counters')
    # warps per program (the launch's num_warps): what turns a warp-level count into a per-program one
    warps: int | None = None

    def running(self) -> dict[str, int]:
        """The code that runs: the loops' instructions when there are any, else the listing's."""
        mix = self.loops if self.loops else self.classes
        return {k: v for k, v in mix.items() if k != "nop" and v}


def _count(mix: dict[str, int], classes) -> float:
    return float(sum(mix.get(c, 0) for c in classes))


def ir_lines(m, kind: str, detail=lambda d: True) -> tuple[str, ...]:
    """Source lines of the kernel's TTIR ops of ``kind`` whose detail passes ``detail``."""
    seen: dict[str, None] = {}
    for op in m.ir_ops:
        if op.get("kind") == kind and detail(str(op.get("detail", ""))) and op.get("line"):
            seen[op["line"]] = None
    return tuple(seen)


def _has_f64(m) -> bool:
    return any(op.get("kind") == "f64" for op in m.ir_ops)


def _pipe_classes(m) -> dict[str, tuple[str, ...]]:
    """PIPE_CLASSES, with a legacy ``fp_arith`` count on the FP64 pipe when the TTIR holds fp64
    arithmetic, else on the FMA pipe."""
    out = dict(PIPE_CLASSES)
    key = "fp64" if _has_f64(m) else "fma"
    out[key] = (*out[key], "fp_arith")
    return out


def pass_times(m) -> dict[str, float]:
    """Clocks of one SM that one warp's pass over the running code takes on each resource."""
    lst = m.listing
    mix = lst.running()
    t = {"issue": sum(mix.values()) / ISSUE_PER_CLOCK}
    for pipe, classes in _pipe_classes(m).items():
        rate = m.machine.rate(pipe) if m.machine is not None else None
        n = _count(mix, classes)
        if rate and n:
            t[pipe] = n * WARP / rate
    if lst.dram_per_clock:
        t["dram"] = _count(mix, GLOBAL) * WARP * lst.elem_bytes / lst.dram_per_clock
    if lst.l2_per_clock:
        t["local"] = _count(mix, ("local_spill",)) * WARP * LOCAL_ACCESS_BYTES / lst.l2_per_clock
    t["shared"] = (
        _count(mix, ("shared_load", "shared_store")) * WARP * SHARED_ACCESS_BYTES / lst.shared_per_clock
    )
    return t


def instruction_bound(m) -> bool:
    """The pass is limited by an instruction resource (the issue slots or a math pipe), not by memory
    (DRAM, local or shared memory, or the LSU pipe that issues their instructions)."""
    t = pass_times(m)
    top = max(t, key=lambda k: t[k])
    return t[top] > 0 and top not in ("dram", "local", "shared", "lsu")


def findings(m) -> tuple[str, ...]:
    """The special work the listing or its TTIR names (the gates: "is it there at all")."""
    lst = m.listing
    if lst is None:
        return ()
    mix = lst.classes
    out = []
    if mix.get("fp64") or (mix.get("fp_arith") and _has_f64(m)):
        out.append("fp64")
    if mix.get("mufu"):
        out.append("mufu")
    dot = ir_lines(m, "dot", lambda d: d.startswith(("f32 ieee", "f16", "bf16"))) or any(
        k in n.lower() for n in m.kernel_names for k in DOT_NAMES
    )
    if dot and not mix.get("tensor_core") and (mix.get("fp32") or mix.get("fp_arith")):
        out.append("fma_dot")
    if ir_lines(m, "libdevice") or ir_lines(m, "int_div") or ir_lines(m, "fdiv"):
        out.append("code")
    return tuple(out)


def active(m, model_uses) -> bool:
    """Whether the static uses replace the FLOP/byte model's pipes (see the module docstring)."""
    lst = m.listing
    if lst is None or m.machine is None or (m.accounting is not None and m.accounting.measured):
        return False
    if lst.classes.get("tensor_core") or not findings(m):
        return False
    if any(u.util >= NEAR_PEAK for u in model_uses):
        return False
    return instruction_bound(m)


def uses(m, model_uses) -> list[tuple[str, float]] | None:
    """The static model's issue slots and pipes as (resource, use) (None: it does not apply). DRAM
    stays the FLOP/byte model's; its math pipe is the static mix's now, and the tensor pipe is idle
    (the listing holds no tensor-core instruction)."""
    if not active(m, model_uses):
        return None
    t = pass_times(m)
    inst = {k: v for k, v in t.items() if k in INSTRUCTION_RESOURCES}
    top = max(inst.values())
    return [(k, v / top) for k, v in inst.items() if v > 0]


def code_counts(m, mv, lim) -> tuple[float, float] | None:
    """A move of code's (issued thread-instructions, its source classes' thread-ops) over the stage's
    time, from the static uses: the issue slots' use × 128 thread-instructions a clock per SM × SMs ×
    clock × T, the code's classes in proportion to the running code. None where the static model does
    not apply (a memory-side or unexplained-by-code stage keeps today's answer)."""
    lst = m.listing
    if lst is None or lim is None or lim.source != SOURCE or not (m.sm_count and lst.clock_hz and m.time_ns):
        return None
    u_issue = lim.use("issue")
    issued = u_issue * ISSUE_PER_CLOCK * WARP * m.sm_count * lst.clock_hz * m.time_ns * 1e-9
    mix = lst.running()
    classes = CODE_CLASSES.get(mv.work, ())
    if "fp32" in classes:
        classes = (*classes, "fp_arith")
    total = sum(mix.values())
    return (issued, issued * _count(mix, classes) / total) if total else None


def spill_share(m) -> float | None:
    """Spills' share of the pass's memory time (local over local + DRAM + shared), where the compiler
    spilled and the listing holds LDL/STL; None otherwise (no counters' word either way)."""
    lst = m.listing
    if lst is None or not m.local_spill_bytes or not lst.classes.get("local_spill"):
        return None
    if m.accounting is not None and m.accounting.measured:
        return None
    t = pass_times(m)
    mem = sum(t.get(k, 0.0) for k in ("local", "dram", "shared"))
    return t.get("local", 0.0) / mem if mem else None


def atomics(m, model_uses) -> tuple[float, dict] | None:
    """Contended atomics, static: global atomics in the listing, its pass on the memory side, the
    FLOP/byte model explaining under NEAR_PEAK of the time. Share: the time that model leaves
    unexplained (1 − the attainable speed of light / T), at most; facts: the atomics' share of the
    listing's global accesses."""
    lst = m.listing
    if lst is None or (m.accounting is not None and m.accounting.measured) or not lst.classes.get("atomic"):
        return None
    if any(u.util >= NEAR_PEAK for u in model_uses) or instruction_bound(m):
        return None
    share = m.attainable_headroom
    if not share:
        return None
    glob = _count(lst.classes, GLOBAL)
    return share, {"atomic_share": lst.classes["atomic"] / glob if glob else None, "source": SOURCE}

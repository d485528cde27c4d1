"""The Triton microbenchmarks of ``kprof device --calibrate`` (:mod:`kprof_mcp.child.calibrate`):
each keeps one execution pipe or one memory level busy and nothing else, so that the work it did
(counted by the ``*_ops``/``*_bytes`` functions of :mod:`kprof_mcp.child.calibrate`, by hand from
this source) divided by its time is that resource's peak.

* Pipes: every thread carries ``CHAINS`` tensors of ``BLOCK / threads`` values each, all
  independent, through ``ITERS × UNROLL`` dependent steps: enough instructions in flight to cover
  the pipe's latency. One step of one value is one thread-op of the pipe (FFMA, DFMA, HFMA2 on a
  packed pair, MUFU.EX2, or a funnel shift and a LOP3 for the integer ALU). The values are kept
  bounded (or do not matter: MUFU's time does not depend on them) and stored at the end so that
  nothing is dead code.
* The packed fp16, MUFU and ALU steps are written as PTX (``tl.inline_asm_elementwise``): the
  compiler would otherwise choose the instruction (an fp16 multiply-add may be unpacked, an integer
  add may be issued as ``IMAD.IADD`` on the FMA pipe). They run on a GPU only, not under
  ``TRITON_INTERPRET=1``.
* Memory: programs sum fp32 blocks read with 16-byte loads. ``.cg`` loads cache in L2 only (the
  L2 benchmark re-reads a buffer a quarter of L2's size); ``.ca`` loads cache in L1 (the L1
  benchmark re-reads a few KiB per program, at an index that moves with the loop so that no load
  is loop-invariant). The sums are stored, one per program.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def fma_kernel(out_ptr, a, b, ITERS, BLOCK: tl.constexpr, UNROLL: tl.constexpr, FP64: tl.constexpr):
    """x = x·a + b on 4 independent tensors: one FFMA (DFMA when FP64) per value per step."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if FP64:
        x0 = offs.to(tl.float64) * 1e-9
    else:
        x0 = offs.to(tl.float32) * 1e-9
    x1 = x0 + 1.0
    x2 = x0 + 2.0
    x3 = x0 + 3.0
    for _ in range(ITERS):
        for _u in tl.static_range(UNROLL):
            x0 = x0 * a + b
            x1 = x1 * a + b
            x2 = x2 * a + b
            x3 = x3 * a + b
    tl.store(out_ptr + offs, (x0 + x1 + x2 + x3).to(out_ptr.dtype.element_ty))


@triton.jit
def _hfma2(x, a, b):
    return tl.inline_asm_elementwise(
        "fma.rn.f16x2 $0, $1, $2, $3;", "=r,r,r,r", [x, a, b], dtype=tl.int32, is_pure=True, pack=1
    )


@triton.jit
def hfma2_kernel(out_ptr, a, b, ITERS, BLOCK: tl.constexpr, UNROLL: tl.constexpr):
    """Packed half2 x = x·a + b (``a``, ``b``: two fp16 each in an int32) on 4 tensors: one HFMA2,
    two fp16 thread-ops, per value per step."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x0 = offs & 0x3C003C00  # half2 (1.0, 1.0) where the offset's bits allow: any finite pair
    x1 = x0 ^ 0x00010001
    x2 = x0 ^ 0x00020002
    x3 = x0 ^ 0x00030003
    av = tl.full([BLOCK], a, tl.int32)
    bv = tl.full([BLOCK], b, tl.int32)
    for _ in range(ITERS):
        for _u in tl.static_range(UNROLL):
            x0 = _hfma2(x0, av, bv)
            x1 = _hfma2(x1, av, bv)
            x2 = _hfma2(x2, av, bv)
            x3 = _hfma2(x3, av, bv)
    tl.store(out_ptr + offs, x0 ^ x1 ^ x2 ^ x3)


@triton.jit
def _ex2(x):
    return tl.inline_asm_elementwise(
        "ex2.approx.ftz.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1
    )


@triton.jit
def mufu_kernel(out_ptr, ITERS, BLOCK: tl.constexpr, UNROLL: tl.constexpr):
    """x = 2^x (MUFU.EX2) on 4 tensors: one MUFU thread-op per value per step (the values run to
    +inf and stay there; the unit's time does not depend on them)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x0 = offs.to(tl.float32) * -1e-6
    x1 = x0 - 1.0
    x2 = x0 - 2.0
    x3 = x0 - 3.0
    for _ in range(ITERS):
        for _u in tl.static_range(UNROLL):
            x0 = _ex2(x0)
            x1 = _ex2(x1)
            x2 = _ex2(x2)
            x3 = _ex2(x3)
    tl.store(out_ptr + offs, x0 + x1 + x2 + x3)


@triton.jit
def _rotl_xor(x, y):
    return tl.inline_asm_elementwise(
        "{ shf.l.wrap.b32 $0, $1, $1, 1; xor.b32 $0, $0, $2; }",
        "=r,r,r",
        [x, y],
        dtype=tl.int32,
        is_pure=True,
        pack=1,
    )


@triton.jit
def alu_kernel(out_ptr, ITERS, BLOCK: tl.constexpr, UNROLL: tl.constexpr):
    """x = rotl(x, 1) ^ y, y = rotl(y, 1) ^ x on two pairs of tensors: a funnel shift (SHF) and a
    LOP3 per value per step, two integer-ALU thread-ops; neither can be issued to the FMA pipe
    (IMAD shifts left, never rotates), and the rotation moves bits across lanes of the word so no
    chain of them folds into one LOP3."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x0 = offs * 0x9E3779B
    y0 = offs ^ 0x5BD1E995
    x1 = x0 + 1
    y1 = y0 + 1
    for _ in range(ITERS):
        for _u in tl.static_range(UNROLL):
            x0 = _rotl_xor(x0, y0)
            y0 = _rotl_xor(y0, x0)
            x1 = _rotl_xor(x1, y1)
            y1 = _rotl_xor(y1, x1)
    tl.store(out_ptr + offs, x0 ^ y0 ^ x1 ^ y1)


@triton.jit
def reread_kernel(
    src_ptr, out_ptr, ITERS, N_CHUNKS, STRIDE, BLOCK: tl.constexpr, CACHE: tl.constexpr, LOCAL: tl.constexpr
):
    """Read ``ITERS`` blocks of ``BLOCK`` fp32 and store their sum. LOCAL: each program re-reads its
    own ``N_CHUNKS`` blocks (at ``pid·N_CHUNKS``), in the order ``i·STRIDE mod N_CHUNKS``; else the
    programs walk the whole buffer of ``N_CHUNKS`` blocks together, program p at block
    ``(p + i·STRIDE) mod N_CHUNKS``."""
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    ar = tl.arange(0, BLOCK)
    for i in range(ITERS):
        if LOCAL:
            chunk = pid * N_CHUNKS + (i * STRIDE) % N_CHUNKS
        else:
            chunk = (pid + i * STRIDE) % N_CHUNKS
        acc += tl.load(src_ptr + chunk.to(tl.int64) * BLOCK + ar, cache_modifier=CACHE)
    tl.store(out_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def gather_rows_kernel(src_ptr, idx_ptr, out_ptr, n, ROW: tl.constexpr, BLOCK: tl.constexpr):
    """out[i, :] = src[idx[i], :] for ``ROW``-element fp32 rows: each row one random ``4·ROW``-byte
    DRAM access (two 32-byte sectors for ROW = 16), as an uncoalesced or gathering kernel makes."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    rows = tl.load(idx_ptr + offs, mask=mask, other=0)
    cols = tl.arange(0, ROW)
    vals = tl.load(src_ptr + rows[:, None] * ROW + cols[None, :], mask=mask[:, None])
    tl.store(out_ptr + offs[:, None] * ROW + cols[None, :], vals, mask=mask[:, None])


@triton.jit
def empty_kernel(out_ptr, flag):
    """A block that does nothing (the branch is never taken): what the block scheduler alone costs."""
    pid = tl.program_id(0)
    if pid == flag:
        tl.store(out_ptr, pid)

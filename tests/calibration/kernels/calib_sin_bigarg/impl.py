"""Triton code of calib_sin_bigarg (imported only by the profiling worker).

Both kernels: one program a block of BLOCK = 512 timestamps (4 warps), a loop over the K terms (w_k and a_k
scalar loads), y = sum a_k sin(t w_k) accumulated in fp32 and stored.
payne_hanek_kernel (v0): libdevice.sin(x) on the raw argument (|x| >= 1.5e5: libdevice's slow path every call).
cody_waite_kernel (v1): x reduced by 2 pi first (q = rint(x / 2 pi); r = x - q C1 - q C2 by two fmas, C1 =
fl32(2 pi) = 6.2831855, C2 = fl32(2 pi - C1) = -1.7484555e-07), then libdevice.sin(r) (|r| <= pi: its fast path).
"""

import os

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 512, 4

if os.environ.get("TRITON_INTERPRET") == "1":  # the CPU check: the interpreter has no libdevice

    @triton.jit
    def _sin(x):
        return tl.sin(x)

    @triton.jit
    def _rint(x):
        return tl.floor(x + 0.5)

else:
    from triton.language.extra.cuda import libdevice

    @triton.jit
    def _sin(x):
        return libdevice.sin(x)  # sinf: the slow path for |x| > 105615

    @triton.jit
    def _rint(x):
        return libdevice.rint(x)


@triton.jit
def payne_hanek_kernel(t_ptr, w_ptr, a_ptr, o_ptr, N, K, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    t = tl.load(t_ptr + offs, mask=mask, other=0.0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(K):
        x = t * tl.load(w_ptr + k)
        acc += tl.load(a_ptr + k) * _sin(x)
    tl.store(o_ptr + offs, acc, mask=mask)


@triton.jit
def cody_waite_kernel(t_ptr, w_ptr, a_ptr, o_ptr, N, K, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    t = tl.load(t_ptr + offs, mask=mask, other=0.0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(K):
        x = t * tl.load(w_ptr + k)
        q = _rint(x * 0.15915494309189535)
        r = tl.fma(q, -6.2831854820251465, x)  # C1 = fl32(2 pi): q C1 exact inside the fma
        r = tl.fma(q, 1.7484555314695172e-07, r)  # -C2, C2 = fl32(2 pi - C1)
        acc += tl.load(a_ptr + k) * _sin(r)
    tl.store(o_ptr + offs, acc, mask=mask)


def _build(inputs, params, name, kernel):
    t, w, a, out = inputs["t"], inputs["w"], inputs["a"], inputs["out"]
    n, k = params["N"], params["K"]
    grid = triton.cdiv(n, BLOCK)

    def run():
        return kernel[(grid,)](t, w, a, out, n, k, BLOCK=BLOCK, num_warps=WARPS)

    st = Stage(name, run, kernel=kernel, tiling={"BLOCK": BLOCK, "K": k, "grid": [grid]}, grid_blocks=grid)
    return Plan([st], output=lambda: out)


def build_v0(inputs, params):
    return _build(inputs, params, "sin_payne_hanek", payne_hanek_kernel)


def build_v1(inputs, params):
    return _build(inputs, params, "sin_cody_waite", cody_waite_kernel)

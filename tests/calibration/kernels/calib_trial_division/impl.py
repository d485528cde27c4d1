"""Triton code of calib_trial_division (imported only by the profiling worker).

One element a lane, BLOCK elements a program.
trial_kernel: composite = any d in [2, DMAX) with d < n, d * d <= n (v1) and n % d == 0; flag = 1 - composite.
v0 runs it with DMAX = NMAX (every d < n tried, the d * d <= n test left out), v1 with DMAX = sqrt(NMAX) + 1.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS = 128, 4


@triton.jit
def trial_kernel(n_ptr, o_ptr, L, DMAX: tl.constexpr, SQRT_TEST: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < L
    n = tl.load(n_ptr + offs, mask=mask, other=2)
    comp = tl.zeros([BLOCK], dtype=tl.int32)
    for d in range(2, DMAX):
        hit = (n % d == 0) & (d < n)
        if SQRT_TEST:
            hit = hit & (d * d <= n)
        comp = comp | hit.to(tl.int32)
    tl.store(o_ptr + offs, 1 - comp, mask=mask)


def _build(inputs, params, name, dmax, sqrt_test):
    n, out = inputs["n"], inputs["out"]
    length = params["L"]
    grid = triton.cdiv(length, BLOCK)

    def run():
        return trial_kernel[(grid,)](
            n, out, length, DMAX=dmax, SQRT_TEST=sqrt_test, BLOCK=BLOCK, num_warps=WARPS
        )

    st = Stage(
        name,
        run,
        kernel=trial_kernel,
        tiling={"BLOCK": BLOCK, "DMAX": dmax, "grid": [grid]},
        grid_blocks=grid,
    )
    return Plan([st], output=lambda: out)


def build_v0(inputs, params):
    return _build(inputs, params, "trial_all", params["NMAX"], False)


def build_v1(inputs, params):
    return _build(inputs, params, "trial_sqrt", int(params["NMAX"] ** 0.5) + 1, True)

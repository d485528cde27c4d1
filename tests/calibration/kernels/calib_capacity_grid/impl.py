"""Triton code of calib_capacity_grid (imported only by the profiling worker).

One kernel for both versions, 4 warps a program, one BLOCK_R x D tile of rows per step, the grid chosen by a
constexpr:

    v0: PERSISTENT=False: grid = cdiv(CAP, BLOCK_R); program t: if t·BLOCK_R < count: the tile t;
    v1: PERSISTENT=True: grid = 4 programs per SM; program p: tiles p, p + grid, ... while tile·BLOCK_R < count.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK_R, WARPS, PER_SM = 8, 4, 4


@triton.jit
def _tile(x_ptr, src_ptr, gate_ptr, out_ptr, t, n, D: tl.constexpr, BLOCK_R: tl.constexpr):
    rows = t * BLOCK_R + tl.arange(0, BLOCK_R)
    ok = rows < n
    cols = tl.arange(0, D)
    s = tl.load(src_ptr + rows, mask=ok, other=0)
    gw = tl.load(gate_ptr + rows, mask=ok, other=0.0)
    v = tl.load(x_ptr + s.to(tl.int64)[:, None] * D + cols[None, :], mask=ok[:, None], other=0.0)
    y = v.to(tl.float32) * gw[:, None]
    tl.store(
        out_ptr + rows.to(tl.int64)[:, None] * D + cols[None, :],
        y.to(out_ptr.dtype.element_ty),
        mask=ok[:, None],
    )


@triton.jit
def dispatch_kernel(
    x_ptr,
    src_ptr,
    gate_ptr,
    count_ptr,
    out_ptr,
    D: tl.constexpr,
    BLOCK_R: tl.constexpr,
    PERSISTENT: tl.constexpr,
):
    pid = tl.program_id(0)
    n = tl.load(count_ptr)
    if PERSISTENT:
        nprog = tl.num_programs(0)
        tiles = tl.cdiv(n, BLOCK_R)
        for t in range(pid, tiles, nprog):
            _tile(x_ptr, src_ptr, gate_ptr, out_ptr, t, n, D, BLOCK_R)
    else:
        if pid * BLOCK_R < n:
            _tile(x_ptr, src_ptr, gate_ptr, out_ptr, pid, n, D, BLOCK_R)


def _build(inputs, p, persistent):
    import torch

    x, src, gate, count, out = (inputs[k] for k in ("x", "src", "gate", "count", "out"))
    cap, d = out.shape
    if persistent:
        sms = torch.cuda.get_device_properties(out.device).multi_processor_count if out.is_cuda else 4
        grid = PER_SM * sms
    else:
        grid = triton.cdiv(cap, BLOCK_R)
    tiling = {"BLOCK_R": BLOCK_R, "D": d, "PERSISTENT": persistent, "num_warps": WARPS, "grid": [grid]}

    def run():
        return dispatch_kernel[(grid,)](
            x, src, gate, count, out, D=d, BLOCK_R=BLOCK_R, PERSISTENT=persistent, num_warps=WARPS
        )

    live = p["LIVE"]
    return Plan(
        [
            Stage(
                "dispatch",
                run,
                kernel=dispatch_kernel,
                tiling=tiling,
                grid_blocks=grid,
                persistent=persistent,
            )
        ],
        output=lambda: out[:live],
    )


def build_v0(inputs, p):
    return _build(inputs, p, False)


def build_v1(inputs, p):
    return _build(inputs, p, True)

"""Triton code of calib_persistent_grid (imported only by the profiling worker).

One kernel for both versions: a persistent grid-stride loop, program pid handling tiles pid, pid + P, ...
of BLOCK elements (P = the number of programs launched):

    v0: P = SM count x 1 (PROGRAMS_PER_SM = 1);
    v1: P = SM count x 8 (PROGRAMS_PER_SM = 8).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK = 1024  # elements per tile (8 per thread at 4 warps)
WARPS = 4
CPU_SMS = 4  # the "SM count" used under the CPU interpreter


@triton.jit
def swiglu_kernel(g_ptr, u_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    tiles = tl.cdiv(n, BLOCK)
    for tile in range(pid, tiles, programs):
        offs = tl.arange(0, BLOCK).to(tl.int64) + tile * BLOCK
        mask = offs < n
        g = tl.load(g_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        u = tl.load(u_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        y = g * tl.sigmoid(g) * u
        tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def sm_count(device) -> int:
    import torch

    if device.type != "cuda":
        return CPU_SMS
    return torch.cuda.get_device_properties(device).multi_processor_count


def _build(inputs, p, per_sm):
    g, u, out = inputs["g"], inputs["u"], inputs["out"]
    n = g.numel()
    programs = max(1, min(sm_count(g.device) * per_sm, triton.cdiv(n, BLOCK)))
    tiling = {"BLOCK": BLOCK, "num_warps": WARPS, "PROGRAMS_PER_SM": per_sm, "persistent": True}

    def run():
        return swiglu_kernel[(programs,)](g, u, out, n, BLOCK=BLOCK, num_warps=WARPS)

    return Plan(
        [
            Stage(
                "swiglu",
                run,
                kernel=swiglu_kernel,
                tiling=tiling,
                grid_blocks=programs,
                persistent=True,
            )
        ],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, 1)


def build_v1(inputs, p):
    return _build(inputs, p, 8)

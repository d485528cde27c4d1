"""Triton code of calib_bank_conflicts (imported only by the profiling worker).

Batched transpose out[b] = x[b].T of B row-major matrices of R x C = 128 rows x 128 bytes (128 x 32
fp32 or 128 x 64 fp16/bf16: 16 KB each), one program per matrix, each matrix handled as ONE flat
R·C-element 1-D tensor (a 1-D tensor over 4 warps: the gather's axis spans every warp): loaded
contiguously (16-byte vector loads), permuted inside the program, stored contiguously. Each
version moves the permutation through shared memory; they differ only in how:

* v0 (GATHER=True): ``tl.gather(x, idx, axis=0)`` with idx[j] = (j % R)·C + j // R. Triton lowers
  a gather whose axis spans several warps by storing the source tensor row-major into shared
  memory, unswizzled and unpadded (GatherOpToLLVM, emitGatherInShared), and loading
  ``smem[idx]``. Output element j = q·R + p reads element p·C + q: the lanes of a warp hold
  consecutive j (consecutive p, one q), so their addresses are C elements = 128 bytes apart, all
  in the same bank: every shared load instruction is a 32-way bank conflict (32 wavefronts
  instead of 1). Measured on an H100: 94 % of v0's shared wavefronts are conflicts.
* v1 (GATHER=False): the same permutation written as reshape -> ``tl.trans`` -> reshape: the
  compiler's layout conversion through shared memory, which Triton swizzles so that each
  warp's accesses spread over the 32 banks.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

NUM_WARPS = 4


@triton.jit
def transpose_smem_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, GATHER: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * (R * C) + tl.arange(0, R * C)
    x = tl.load(x_ptr + offs)
    if GATHER:
        # v0: out[q, p] = x[p, q] by explicit index: flat j = q*R + p reads p*C + q.
        j = tl.arange(0, R * C)
        y = tl.gather(x, (j % R) * C + j // R, axis=0)
    else:
        # v1: the same permutation as a transpose of the [R, C] tile.
        y = tl.reshape(tl.trans(tl.reshape(x, [R, C])), [R * C])
    tl.store(out_ptr + offs, y)


def build(inputs, params, gather):
    x, out = inputs["x"], inputs["out"]
    B, R, C = params["B"], x.shape[1], x.shape[2]   # C·itemsize = 128 bytes: a row spans the 32 banks once
    tiling = {"R": R, "C": C, "GATHER": gather, "num_warps": NUM_WARPS, "num_stages": 1, "programs": B,
              "permutation": "tl.gather, unswizzled shared memory" if gather else "tl.trans, swizzled shared memory"}

    def run():
        return transpose_smem_kernel[(B,)](x, out, R=R, C=C, GATHER=gather, num_warps=NUM_WARPS, num_stages=1)

    return Plan(stages=[Stage("transpose", run, kernel=transpose_smem_kernel, tiling=tiling, grid_blocks=B)],
                output=lambda: out)


def build_v0(inputs, params):
    return build(inputs, params, True)


def build_v1(inputs, params):
    return build(inputs, params, False)

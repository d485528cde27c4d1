"""Triton code of calib_host_table (imported only by the profiling worker).

One kernel for both versions, a program per token id copying its table row; the versions differ only in
the table the kernel is given: v0 the pinned host copy (zero-copy), v1 the device copy.
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage


@triton.jit
def embedding_kernel(ids_ptr, table_ptr, out_ptr, D, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64)
    row = tl.load(ids_ptr + i)
    cols = tl.arange(0, BLOCK)
    vals = tl.load(table_ptr + row * D + cols, mask=cols < D)
    tl.store(out_ptr + i * D + cols, vals, mask=cols < D)


def _build(inputs, p, table_key):
    ids, out = inputs["ids"], inputs["out"]
    table = inputs[table_key]
    n, d = out.shape
    block = triton.next_power_of_2(d)
    warps = 4
    tiling = {"BLOCK": block, "TABLE": "host" if table_key == "table_host" else "device", "num_warps": warps}

    def run():
        return embedding_kernel[(n,)](ids, table, out, d, BLOCK=block, num_warps=warps)

    return Plan(
        [Stage("embedding", run, kernel=embedding_kernel, tiling=tiling, grid_blocks=n)],
        output=lambda: out,
    )


def build_v0(inputs, p):
    return _build(inputs, p, "table_host")


def build_v1(inputs, p):
    return _build(inputs, p, "table")

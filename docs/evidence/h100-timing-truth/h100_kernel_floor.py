"""The shortest a kernel launch takes on this GPU: CUPTI durations of empty and near-empty Triton
kernels at several grid sizes (run on the GPU machine; prints a table).

    python docs/evidence/h100-timing-truth/h100_kernel_floor.py
"""

import statistics
import tempfile
from pathlib import Path

import torch
import triton
import triton.language as tl
from torch.profiler import ProfilerActivity, profile, record_function

from kprof_mcp.analysis.timeline import ITER_RANGE, kernels_per_iteration
from kprof_mcp.parsers import kineto


@triton.jit
def empty(x_ptr):
    pass


@triton.jit
def touch(x_ptr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + i, tl.load(x_ptr + i) + 1.0)


x = torch.zeros(132 * 8 * 1024, device="cuda")
cases = {f"empty grid={g}": (lambda g=g: empty[(g,)](x)) for g in (1, 4, 132, 1056)}
cases.update(
    {f"load+store 1024/block grid={g}": (lambda g=g: touch[(g,)](x, BLOCK=1024)) for g in (1, 4, 132)}
)
for fn in cases.values():
    fn()
torch.cuda.synchronize()
print(f"{torch.cuda.get_device_name()} torch {torch.__version__} triton {triton.__version__}")
print("| kernel | runs | median (µs) | min (µs) |\n|---|---|---|---|")
for name, fn in cases.items():
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(300):
            with record_function(ITER_RANGE):
                fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        prof.export_chrome_trace(f"{d}/t.json")
        sums, _, _ = kernels_per_iteration(kineto.load_trace(Path(f"{d}/t.json")))
    sums = sums[5:]
    print(f"| {name} | {len(sums)} | {statistics.median(sums) / 1e3:.3f} | {min(sums) / 1e3:.3f} |")

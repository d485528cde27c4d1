"""The DRAM throughput (% of peak, as Nsight Compute counts it: gpu__dram_throughput) that scattered
traffic saturates at on this GPU: random rows of 4, 32 and 64 bytes gathered from a 4 GiB buffer by
kprof's calibration kernel. Run under ncu:

    ncu --metrics gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,gpu__time_duration.sum \
        python3 docs/evidence/h100-calibrate/dram_sector_ncu.py
"""

import torch

from kprof_mcp.child import calibrate_kernels as ck

rows_total, n, block = 1 << 26, 1 << 24, 128
for row in (1, 8, 16):
    src = torch.ones(rows_total * 16 // row, row, device="cuda")
    idx = torch.randint(0, src.shape[0], (n,), device="cuda")
    out = torch.empty(n, row, device="cuda")
    for _ in range(2):
        ck.gather_rows_kernel[(-(-n // block),)](src, idx, out, n, ROW=row, BLOCK=block, num_warps=4)
    torch.cuda.synchronize()
    print(f"row={row * 4} bytes: done", flush=True)
    del src, idx, out

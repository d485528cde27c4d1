"""How fast the GPU turns over thread blocks: an empty Triton kernel launched with grids of 2^14..2^22
programs at num_warps 1..32, timed with CUDA events (best of 5 after warm-up), and the SM clock read
through NVML around the runs. Prints, per (warps, grid), the time per block for the chip and the
blocks per SM clock: the block dispatch rate the machine model's `blocks` level uses. No counters.

    python docs/evidence/machine-model/block_rate.py > block_rate.txt
"""

import json
import subprocess

import torch
import triton
import triton.language as tl


@triton.jit
def empty(out, flag):
    pid = tl.program_id(0)
    if pid == flag:  # never true: the block exists, does nothing
        tl.store(out, pid)


@triton.jit
def row(x, out, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs).to(tl.float32)
    tl.store(out + offs, (v * 2.0).to(out.dtype.element_ty))


def clock_mhz():
    q = subprocess.run(
        ["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader,nounits"],
        capture_output=True,
        text=True,
    )
    return float(q.stdout.split()[0])


def best(fn, reps=5):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e6)
    return min(times)


def main():
    out = torch.zeros(1, device="cuda", dtype=torch.int32)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows = []
    for warps in (1, 2, 4, 8, 16, 32):
        for lg in (14, 16, 18, 20, 22):
            g = 1 << lg
            mhz = clock_mhz()
            ns = best(lambda: empty[(g,)](out, -1, num_warps=warps))
            mhz = (mhz + clock_mhz()) / 2
            cycles = ns * mhz / 1e3
            rows.append(
                {
                    "kernel": "empty",
                    "warps": warps,
                    "grid": g,
                    "ns": ns,
                    "mhz": mhz,
                    "ns_per_block_chip": ns / g,
                    "blocks_per_clk_chip": g / cycles,
                    "blocks_per_clk_sm": g / cycles / sms,
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    # A row-sized program (128 B read + 128 B written per one-warp block) against bigger ones, same bytes.
    n = 1 << 27
    x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    for block, warps in ((64, 1), (256, 1), (1024, 4), (2048, 4), (4096, 8)):
        g = n // block
        mhz = clock_mhz()
        ns = best(lambda: row[(g,)](x, y, BLOCK=block, num_warps=warps))
        rows.append(
            {
                "kernel": "row",
                "block_elems": block,
                "warps": warps,
                "grid": g,
                "ns": ns,
                "mhz": mhz,
                "gbps": 4 * n / ns,
                "blocks_per_clk_chip": g / (ns * mhz / 1e3),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    print("sms", sms, torch.cuda.get_device_name(0), torch.__version__, triton.__version__)


if __name__ == "__main__":
    main()

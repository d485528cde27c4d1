"""An integer command stage with and without its model's integer operations (issue 36, 2026-11-29): the rank of
every element within its row, counted by comparing every element with every other (N^2 integer compares a row,
on the ALU), where sorting the row once serves (torch.argsort of the row, then the positions scattered back).

    python docs/evidence/machine-model/int_ops_command.py --variant bad|good [--steps 20] [--time]

Under kprof (``kprof run --mode annotation --model ranks:flops=0,bytes=B[,int_ops=I] -- python ...``) each step
is one ``kprof.range("ranks")``. With ``--time`` the script times its own steps (CUDA events, no profiler) and
prints one JSON line: the measured gain of the fix is bad ÷ good. The model (the needed work, both variants):
no FLOPs; bytes: x read and the ranks written (8 M N); integer operations: a bitonic sort's compare-exchanges,
M N log2(N)^2 / 2 (Batcher, 1968), each a compare and a select.
"""

from __future__ import annotations

import argparse
import json
import math

import torch
import triton
import triton.language as tl

import kprof

M, N = 512, 2048


@triton.jit
def rank_count(x_ptr, out_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    xs = tl.load(x_ptr + row * N + offs)
    cnt = tl.zeros([N], dtype=tl.int32)
    for j in range(N):
        xj = tl.load(x_ptr + row * N + j)
        cnt += (xj < xs).to(tl.int32)
    tl.store(out_ptr + row * N + offs, cnt)


def bad(x: torch.Tensor, out: torch.Tensor) -> None:
    rank_count[(x.shape[0],)](x, out, N=N, num_warps=8)


def good(x: torch.Tensor, out: torch.Tensor) -> None:
    order = torch.argsort(x, dim=1)
    out.scatter_(1, order, torch.arange(N, device=x.device, dtype=torch.int32).expand(x.shape[0], N))


def model() -> dict:
    return {"flops": 0.0, "bytes": 8.0 * M * N, "int_ops": 2.0 * M * N * math.log2(N) ** 2 / 2.0}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", choices=("bad", "good"), default="bad")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--model", action="store_true", help="print the stage model's JSON and exit")
    ap.add_argument("--rows", type=int, default=M, help="rows (a CPU check: TRITON_INTERPRET=1 --rows 2)")
    a = ap.parse_args()
    if a.model:
        print(json.dumps(model()))
        return
    g = torch.Generator(device="cpu").manual_seed(0)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.stack([torch.randperm(1 << 20, generator=g)[:N] for _ in range(a.rows)]).to(torch.int32).to(dev)
    out = torch.empty(a.rows, N, dtype=torch.int32, device=dev)
    fn = bad if a.variant == "bad" else good
    fn(x, out)
    ref = torch.argsort(torch.argsort(x, dim=1), dim=1).to(torch.int32)
    assert torch.equal(out, ref), "ranks differ from the reference"
    times = []
    for _ in range(a.steps):
        if dev == "cpu":
            with kprof.range("ranks"):
                fn(x, out)
            continue
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with kprof.range("ranks"):
            s.record()
            fn(x, out)
            e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e6)
    if a.time and times:
        times.sort()
        print(json.dumps({"variant": a.variant, "step_ns_median": times[len(times) // 2], "steps": a.steps}))


if __name__ == "__main__":
    main()

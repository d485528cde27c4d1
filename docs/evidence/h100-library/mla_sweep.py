"""Sweep the grouped MLA attend kernel's launch configurations on a GPU (informs mla_decode's versions).

For each shape: BLOCK_H (query rows per program) × BLOCK_N (tokens per tile) × warps × stages,
with the split count the package's heuristic gives for that BLOCK_H (optionally ×2 / ÷2);
attend + combine timed with do_bench, checked against the reference once per config.

    python docs/evidence/h100-library/mla_sweep.py [--shape defaults|mem] [--top 12]
"""

import argparse
import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="defaults,mem")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--budget", type=float, default=200, help="seconds per shape")
    args = ap.parse_args()
    import torch
    import triton
    from triton.testing import do_bench

    from kernels.mla_decode import impl, num_splits, split_len
    from kprof_mcp.packages import available, load

    pkg = load(available()["mla_decode"])
    shapes = {"defaults": {}, "mem": {"s": 1, "h": 16}}
    for sname in args.shape.split(","):
        p = pkg.validate_params(shapes[sname])
        inputs = pkg.make_inputs(p, "cuda")
        ref = pkg.reference(inputs, p).float()
        res = []
        t_start = time.time()
        for bh, bn, w, st, sf in itertools.product(
            (16, 32, 64), (16, 32, 64), (4, 8), (1, 2, 3), (0.5, 1, 2)
        ):
            if bh > p["s"] * p["h"] and bh > 16:
                continue
            if sname == "defaults" and sf != 1:
                continue
            if time.time() - t_start > args.budget:
                print(f"time budget of {args.budget} s spent: {len(res)} configs measured", flush=True)
                break
            splits = max(1, int(num_splits(p, bh) * sf))
            if sf != 1 and splits == num_splits(p, bh):
                continue
            buf = impl._Buffers(inputs, p, 1)
            ln = split_len(p, splits)
            splits = -(-p["t"] // ln)
            buf.mid_o = torch.empty(p["b"], buf.rows, splits, p["d"], device="cuda", dtype=torch.float32)
            buf.mid_lse = torch.empty(p["b"], buf.rows, splits, device="cuda", dtype=torch.float32)
            buf.splits, buf.split_len = splits, ln
            grid = (p["b"], triton.cdiv(buf.rows, bh), splits)
            comb = impl._combine_stage(buf, p)

            def run():
                impl.attend_grouped_kernel[grid](
                    buf.q,
                    buf.kv,
                    buf.mid_o,
                    buf.mid_lse,
                    buf.qk_scale,
                    buf.rows,
                    p["t"],
                    buf.split_len,
                    *buf.attend_args(),
                    D=p["d"],
                    P=p["p"],
                    BLOCK_D=512,
                    BLOCK_P=64,
                    BLOCK_H=bh,
                    BLOCK_N=bn,
                    num_warps=w,
                    num_stages=st,
                )
                comb.fn()

            try:
                inputs["o"].fill_(float("nan"))
                run()
                torch.cuda.synchronize()
                rel = float((inputs["o"].float() - ref).norm() / ref.norm())
                ms = do_bench(run, warmup=10, rep=50)
            except Exception as e:  # out of shared memory / registers: skip the config
                print(f"skip H{bh} N{bn} w{w} s{st}: {type(e).__name__}: {str(e)[:80]}", flush=True)
                continue
            res.append((ms * 1e3, bh, bn, w, st, splits, rel))
        res.sort()
        flops = pkg.version("v1").stages[0].flops(p)
        nbytes = (p["b"] * p["s"] * p["h"] * (2 * p["d"] + p["p"]) + p["b"] * p["t"] * (p["d"] + p["p"])) * 2
        print(f"== {sname} {p.as_dict()}: best of {len(res)} configs")
        for us, bh, bn, w, st, splits, rel in res[: args.top]:
            print(
                f"  {us:9.1f} us  {flops / us / 1e6:6.1f} TFLOP/s  {nbytes / us / 1e3:6.0f} GB/s  "
                f"BLOCK_H={bh} BLOCK_N={bn} warps={w} stages={st} splits={splits} rel={rel:.1e}",
                flush=True,
            )
        del inputs, ref
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()

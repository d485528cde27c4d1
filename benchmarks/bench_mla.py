"""MLA decode: every version of kernels/mla_decode vs the PyTorch baselines, side by side in one run.

For each shape (the defaults, compute-bound, and a memory-bound ``s=1, h=16``) it checks
every version against the package's reference, then times, in alternating rounds (median
of the round medians, L2 flushed by ``triton.testing.do_bench`` before every call):

- each version's whole plan (attend + combine),
- ``torch ref fp32``: the package's PyTorch reference (float32 math, as FlashMLA's tests),
- ``torch bf16``: the same PyTorch code with the matmuls in the input dtype (cuBLAS) and a
  float32 softmax: the fast PyTorch baseline,
- a device-to-device copy of the KV cache (read + write bytes count as bandwidth).

Prints TFLOP/s, effective bandwidth (model bytes of q + kv + o ÷ time), ratios to both
PyTorch baselines and to copy bandwidth, and the issue's targets:
defaults ≥ 3× the PyTorch reference; ``s=1, h=16`` ≥ 70 % of copy bandwidth.

    python benchmarks/bench_mla.py [--rounds 5] [--versions v1,v2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SHAPES = {"defaults": {}, "memory-bound s=1 h=16": {"s": 1, "h": 16}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--versions", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--shapes", default="", help="comma-separated subset of: " + ", ".join(SHAPES))
    ap.add_argument("--json", default="")
    args = ap.parse_args()

    import torch

    if not torch.cuda.is_available():
        print("bench_mla needs a CUDA GPU (this machine has none): run it on the GPU machine.")
        return 2
    import triton
    from triton.testing import do_bench

    from kernels.mla_decode import torch_mla
    from kprof_mcp.packages import available, load

    pkg = load(available()["mla_decode"])
    names = [v.name for v in pkg.versions]
    if args.versions:
        names = [n for n in names if n in args.versions.split(",")]
    shapes = {k: v for k, v in SHAPES.items() if not args.shapes or k in args.shapes.split(",")}
    dev = torch.cuda.get_device_properties(0)
    print(
        f"device: {dev.name} ({dev.multi_processor_count} SMs); torch {torch.__version__}; "
        f"triton {triton.__version__}; python {platform.python_version()}"
    )
    results = {"device": dev.name, "torch": torch.__version__, "triton": triton.__version__, "shapes": {}}

    for label, overrides in shapes.items():
        p = pkg.validate_params(overrides)
        inputs = pkg.make_inputs(p, "cuda")
        ref = pkg.reference(inputs, p).float()
        flops = sum(st.flops(p) for st in pkg.version(names[-1]).stages[:1])
        model_bytes = float(
            (p["b"] * p["s"] * p["h"] * (2 * p["d"] + p["p"]) + p["b"] * p["t"] * (p["d"] + p["p"]))
            * p.itemsize
        )
        print(f"\n== {label}: {p.as_dict()}  ({flops / 1e9:.1f} GFLOP, q+kv+o {model_bytes / 1e6:.1f} MB)")
        cands = {}
        for name in names:
            plan = pkg.version(name).build(inputs, p)
            inputs["o"].fill_(float("nan"))
            for st in plan.stages:
                st.fn()
            torch.cuda.synchronize()
            out = plan.output().float()
            rel = float((out - ref).norm() / ref.norm())
            ok = bool(torch.isfinite(out).all()) and rel <= pkg.tolerance(p["dtype"])
            print(
                f"  {name}: rel err {rel:.2e} {'ok' if ok else 'WRONG'}; "
                + "; ".join(f"{st.name} {st.tiling or ''}" for st in plan.stages)
            )
            if not ok:
                return 1

            def run(stages=plan.stages):
                for st in stages:
                    st.fn()

            cands[name] = run
        q, kv = inputs["q"], inputs["kv"]
        cands["torch ref fp32"] = lambda: torch_mla(q, kv, p["d"], compute_dtype=torch.float32)
        cands["torch bf16"] = lambda: torch_mla(q, kv, p["d"])
        dst = torch.empty_like(kv)
        cands["d2d copy (kv)"] = lambda: dst.copy_(kv)
        times = {k: [] for k in cands}
        for _ in range(args.rounds):
            for k, fn in cands.items():
                times[k].append(do_bench(fn, warmup=25, rep=100))
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}  # µs
        copy_bw = 2 * kv.numel() * kv.element_size() / (med["d2d copy (kv)"] * 1e-6)
        ref_us, bf16_us = med["torch ref fp32"], med["torch bf16"]
        rows = []
        print(
            f"  {'candidate':16} {'µs':>10} {'TFLOP/s':>8} {'GB/s':>8} {'%copyBW':>8} {'×ref fp32':>9} {'×torch bf16':>11}"
        )
        for k, us in med.items():
            bw = (2 * kv.numel() * kv.element_size() if k.startswith("d2d") else model_bytes) / (us * 1e-6)
            tf = 0.0 if k.startswith("d2d") else flops / (us * 1e-6) / 1e12
            row = {
                "candidate": k,
                "us": us,
                "tflops": tf,
                "gbps": bw / 1e9,
                "pct_copy_bw": 100 * bw / copy_bw,
                "x_ref_fp32": ref_us / us,
                "x_torch_bf16": bf16_us / us,
                "rounds_us": [t * 1e3 for t in times[k]],
            }
            rows.append(row)
            print(
                f"  {k:16} {us:10.1f} {tf:8.1f} {bw / 1e9:8.0f} {row['pct_copy_bw']:7.1f}% "
                f"{row['x_ref_fp32']:9.2f} {row['x_torch_bf16']:11.2f}"
            )
        best = min((r for r in rows if r["candidate"] in names), key=lambda r: r["us"])
        if label == "defaults":
            verdict = "PASS" if best["x_ref_fp32"] >= 3 else "FALL SHORT"
            print(
                f"  target: best version {best['candidate']} is {best['x_ref_fp32']:.2f}x the PyTorch reference "
                f"(>= 3x) -> {verdict}; {best['x_torch_bf16']:.2f}x the bf16 PyTorch baseline"
            )
        else:
            verdict = "PASS" if best["pct_copy_bw"] >= 70 else "FALL SHORT"
            print(
                f"  target: best version {best['candidate']} reaches {best['pct_copy_bw']:.1f}% of copy bandwidth "
                f"(>= 70%) -> {verdict}"
            )
        results["shapes"][label] = {
            "params": p.as_dict(),
            "rows": rows,
            "best": best["candidate"],
            "verdict": verdict,
        }
        inputs = ref = cands = dst = None
        torch.cuda.empty_cache()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

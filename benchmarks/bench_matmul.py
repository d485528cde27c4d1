"""Every version of the matmul package against torch.matmul (cuBLAS), in one run, on a GPU.

For one shape (default M = N = K = 4096, bfloat16):
  1. each version is built, run once (JIT compile and autotuning happen here, outside any
     timing) and checked against the package's reference (C is NaN-poisoned before each
     version, so an unwritten tile shows up);
  2. every correct version and torch.matmul(a, b, out=...) are timed with
     triton.testing.do_bench (L2 flushed before each run) in alternating rounds: each round
     times every candidate once, in an order rotated from round to round, so clock drift and
     position favour none; a candidate's figure is the median of its round medians;
  3. a table: median µs, TFLOP/s (2·M·N·K / time), % of torch.matmul's TFLOP/s, spread of the
     round medians; the autotuned config of each autotuned version; and the target line
     "best version: X% of torch.matmul TFLOP/s (target >= 90%)" with PASS or FALL SHORT.

    python benchmarks/bench_matmul.py [--M 4096 --N 4096 --K 4096] [--dtype bfloat16]
        [--rounds 5] [--versions v2,v3] [--json PATH]

The exit status is 0 whether or not the target is met (2 when no version ran correctly).
"""

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kprof_mcp.packages import available, load  # noqa: E402
from kprof_mcp.parsers.triton import config_dict as _config  # noqa: E402


def config_dict(cfg) -> dict | None:
    return None if cfg is None else _config(cfg)


TARGET_PCT = 90.0


def environment(torch, triton) -> dict:
    props = torch.cuda.get_device_properties(0)
    cap = ".".join(map(str, torch.cuda.get_device_capability(0)))
    return {
        "device": torch.cuda.get_device_name(0),
        "capability": cap,
        "sm_count": props.multi_processor_count,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "triton": triton.__version__,
        "python": platform.python_version(),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--M", type=int, default=4096)
    ap.add_argument("--N", type=int, default=4096)
    ap.add_argument("--K", type=int, default=4096)
    ap.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16", "float32"))
    ap.add_argument("--rounds", type=int, default=5, help="alternating timing rounds (default 5)")
    ap.add_argument("--versions", default=None, help="comma-separated subset (default: every version)")
    ap.add_argument("--json", default=None, help="also write the results to this JSON file")
    a = ap.parse_args()

    import torch

    if not torch.cuda.is_available():
        sys.exit(
            "bench_matmul.py needs an NVIDIA GPU: torch.cuda.is_available() is False here "
            "(the Triton interpreter on the CPU times nothing meaningful)."
        )
    import triton
    import triton.testing

    env = environment(torch, triton)
    print(
        f"environment: {env['device']} (sm_{env['capability'].replace('.', '')}, {env['sm_count']} SMs), "
        f"torch {env['torch']} (CUDA {env['cuda']}), triton {env['triton']}, python {env['python']}",
        flush=True,
    )

    pkg = load(available()["matmul"])
    p = pkg.validate_params({"M": a.M, "N": a.N, "K": a.K, "dtype": a.dtype})
    M, N, K = p["M"], p["N"], p["K"]
    flops = 2.0 * M * N * K
    tol = pkg.tolerance(p["dtype"])
    names = [v.name for v in pkg.versions]
    if a.versions:
        wanted = [s.strip() for s in a.versions.split(",") if s.strip()]
        unknown = sorted(set(wanted) - set(names))
        if unknown:
            sys.exit(f"unknown version(s) {unknown}; valid: {names}")
        names = [n for n in names if n in wanted]
    print(
        f"shape: M={M} N={N} K={K} {p['dtype']}; {flops / 1e9:.1f} GFLOP per matmul; tolerance {tol:g}",
        flush=True,
    )

    inputs = pkg.make_inputs(p, "cuda")
    ref = pkg.reference(inputs, p).double()
    ref_norm = ref.norm()

    def rel_err(out) -> float:
        return float((out.double() - ref).norm() / ref_norm)

    rows: dict[str, dict] = {}
    fns: dict[str, object] = {}

    # 1. Build, first run (compile + autotune), correctness.
    for name in names:
        version = pkg.version(name)
        row = rows[name] = {"name": name, "doc": version.doc}
        inputs["c"].fill_(float("nan"))
        t0 = time.perf_counter()
        try:
            plan = version.build(inputs, p)
            stage_fns = [s.fn for s in plan.stages]
            for f in stage_fns:
                f()
            torch.cuda.synchronize()
            out = plan.output()
            err = rel_err(out)
            finite = bool(torch.isfinite(out).all())
        except Exception as e:  # noqa: BLE001 - one version failing must not stop the others
            row.update(
                status="error", error=f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
            )
            print(f"{name}: ERROR {row['error']}", flush=True)
            continue
        row["first_run_s"] = round(time.perf_counter() - t0, 2)
        row["rel_err"] = err
        row["status"] = "ok" if finite and err <= tol else "incorrect"
        configs = []
        for st in plan.stages:
            kern = st.kernel
            best = getattr(kern, "best_config", None)
            timings = getattr(kern, "configs_timings", None) or {}
            configs.append(
                {
                    "stage": st.name,
                    "best": config_dict(best),
                    "tiling": st.tiling,
                    "configs_tried": len(timings),
                    "configs_failed": sum(
                        1
                        for t in timings.values()
                        if (t[0] if isinstance(t, (list, tuple)) else t) == float("inf")
                    ),
                }
            )
        row["configs"] = configs
        print(
            f"{name}: {row['status']} (relative error {err:.2e}, first run with compile/autotune "
            f"{row['first_run_s']} s)",
            flush=True,
        )
        if row["status"] == "ok":
            fns[name] = lambda fs=stage_fns: [f() for f in fs]

    try:
        from kernels.matmul import impl

        ws_failures = list(getattr(impl, "WS_COMPILE_FAILURES", []))
    except Exception:  # noqa: BLE001 - informational only
        ws_failures = []

    # torch.matmul (cuBLAS) into a preallocated output, so both sides skip allocation.
    a_t, b_t = inputs["a"], inputs["b"]
    c_t = torch.empty(M, N, device="cuda", dtype=a_t.dtype)
    torch.matmul(a_t, b_t, out=c_t)
    torch.cuda.synchronize()
    rows["torch.matmul"] = {
        "name": "torch.matmul",
        "doc": "cuBLAS via torch.matmul(a, b, out=c)",
        "rel_err": rel_err(c_t),
        "status": "ok",
    }
    fns["torch.matmul"] = lambda: torch.matmul(a_t, b_t, out=c_t)

    # 2. Alternating rounds.
    cands = list(fns)
    samples: dict[str, list[float]] = {c: [] for c in cands}
    for r in range(a.rounds):
        order = cands[r % len(cands) :] + cands[: r % len(cands)]
        for c in order:
            samples[c].append(triton.testing.do_bench(fns[c], return_mode="median") * 1e3)  # ms -> µs
        print(f"round {r + 1}/{a.rounds} done", flush=True)

    for c in cands:
        s = samples[c]
        med = statistics.median(s)
        rows[c].update(
            median_us=med,
            round_medians_us=s,
            spread_pct=100.0 * (max(s) - min(s)) / med,
            tflops=flops / (med * 1e-6) / 1e12,
        )
    base = rows["torch.matmul"]["tflops"]
    for c in cands:
        rows[c]["pct_of_torch"] = 100.0 * rows[c]["tflops"] / base

    # 3. Report.
    print()
    print(
        f"matmul M={M} N={N} K={K} {p['dtype']} on {env['device']}; median of {a.rounds} alternating "
        "do_bench rounds (L2 flushed)"
    )
    print("| candidate | median (µs) | TFLOP/s | % of torch.matmul | round spread % | rel. error | status |")
    print("|---|---|---|---|---|---|---|")
    for name in [*names, "torch.matmul"]:
        r = rows[name]
        if "median_us" in r:
            print(
                f"| {name} | {r['median_us']:.1f} | {r['tflops']:.1f} | {r['pct_of_torch']:.1f} | "
                f"{r['spread_pct']:.1f} | {r['rel_err']:.1e} | {r['status']} |"
            )
        else:
            err = f"{r['rel_err']:.1e}" if "rel_err" in r else "-"
            print(
                f"| {name} | - | - | - | - | {err} | {r['status']}{': ' + r['error'] if 'error' in r else ''} |"
            )

    print()
    print("autotuned / fixed configuration per version:")
    for name in names:
        for st in rows[name].get("configs", []):
            if st["best"] is not None:
                best = {k: v for k, v in st["best"].items() if k != "fallback"}
                tried = (
                    f" ({st['configs_tried']} configs timed, {st['configs_failed']} failed or out of resources)"
                    if st["configs_tried"]
                    else " (from Triton's autotune cache)"
                )
                print(f"  {name}: {json.dumps(best)}{tried}")
            elif st["tiling"]:
                print(f"  {name}: fixed {json.dumps(st['tiling'])}")
            if st["tiling"] and "fallback" in st["tiling"]:
                print(f"  {name}: FALLBACK: {st['tiling']['fallback']}")
    if ws_failures:
        print(f"  warp-specialised configs that failed to compile ({len(ws_failures)}): {ws_failures[0]}")

    timed = [n for n in names if "tflops" in rows[n]]
    target = None
    print()
    if timed:
        best = max(timed, key=lambda n: rows[n]["tflops"])
        pct = rows[best]["pct_of_torch"]
        verdict = "PASS" if pct >= TARGET_PCT else "FALL SHORT"
        target = {"best_version": best, "pct_of_torch": pct, "target_pct": TARGET_PCT, "verdict": verdict}
        print(
            f"best version: {best} at {rows[best]['tflops']:.1f} TFLOP/s = {pct:.1f}% of torch.matmul TFLOP/s "
            f"({base:.1f}) (target >= {TARGET_PCT:.0f}%): {verdict}"
        )
    else:
        print("best version: none ran correctly: FALL SHORT")

    if a.json:
        out = {
            "environment": env,
            "shape": {"M": M, "N": N, "K": K, "dtype": p["dtype"]},
            "rounds": a.rounds,
            "rows": [rows[n] for n in [*names, "torch.matmul"]],
            "target": target,
            "ws_compile_failures": ws_failures,
        }
        Path(a.json).write_text(json.dumps(out, indent=2, default=str))
        print(f"wrote {a.json}")
    return 0 if timed else 2


if __name__ == "__main__":
    sys.exit(main())

"""Our event mode vs triton.testing.do_bench, side by side in one run.

For every shipped kernel version (default parameters on a GPU; small ones with --small):
  * our median (profile_kernel in event mode, through the engine: child process,
    correctness check, artifacts) and its wall time;
  * do_bench's median (in-process, same stage callable, kernel already compiled) and its
    wall time;
and the ratios. Prints a table last.

    python benchmarks/bench_event_vs_do_bench.py [--small] [--workspace DIR]
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kprof_mcp.engine import Config, Engine  # noqa: E402
from kprof_mcp.packages import available, load  # noqa: E402

SMALL = {"vector_add": {"n": 1 << 16}, "matmul": {"M": 128, "N": 128, "K": 128, "dtype": "float16"}}


def do_bench_median(kernel: str, version: str, params: dict) -> tuple[float, float]:
    """(median ns, wall s) of triton.testing.do_bench on the same stage, compiled beforehand."""
    import torch

    cuda = torch.cuda.is_available()
    pkg = load(available()[kernel])
    p = pkg.validate_params(params)
    inputs = pkg.make_inputs(p, "cuda" if cuda else "cpu")
    plan = pkg.version(version).build(inputs, p)
    fn = plan.stages[0].fn
    fn()  # JIT + autotune outside the timed wall, as a user of do_bench would
    if cuda:
        import triton.testing

        torch.cuda.synchronize()
        t0 = time.perf_counter()
        ms = triton.testing.do_bench(fn, return_mode="median")
        return ms * 1e6, time.perf_counter() - t0
    # CPU: do_bench needs a GPU driver; the wall-clock median of 5 runs stands in.
    t0 = time.perf_counter()
    s = []
    for _ in range(5):
        a = time.perf_counter_ns()
        fn()
        s.append(time.perf_counter_ns() - a)
    return statistics.median(s), time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--workspace", default=None)
    a = ap.parse_args()
    ws = Path(a.workspace or tempfile.mkdtemp(prefix="kprof-bench-"))
    engine = Engine(Config(workspace=ws))
    rows = []
    for kernel in ("vector_add", "matmul"):
        params = SMALL[kernel] if a.small else {}
        for version in ("v0", "v1"):
            t0 = time.perf_counter()
            o = engine.profile(kernel, version, params, "event")
            ours_wall = time.perf_counter() - t0
            ours = o.result.stages[0].timing
            if o.result.device.kind != "cuda":
                import os

                os.environ["TRITON_INTERPRET"] = "1"
            db_ns, db_wall = do_bench_median(kernel, version, o.result.params)
            rows.append(
                (
                    kernel,
                    version,
                    ours.median_ns / 1e3,
                    ours.rel_iqr * 100,
                    ours.runs,
                    db_ns / 1e3,
                    ours.median_ns / db_ns,
                    ours_wall,
                    db_wall,
                    ours_wall / db_wall,
                    o.result.device.name,
                )
            )
            print(f"done {kernel} {version}", flush=True)
    print()
    print(f"device: {rows[0][-1]}")
    print(
        "| kernel | version | ours median (us) | ours IQR % | ours runs | do_bench median (us) | "
        "median ratio ours/do_bench | ours wall (s) | do_bench wall (s) | wall ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r[0]} | {r[1]} | {r[2]:.2f} | {r[3]:.2f} | {r[4]} | {r[5]:.2f} | {r[6]:.3f} | "
            f"{r[7]:.2f} | {r[8]:.2f} | {r[9]:.2f} |"
        )


if __name__ == "__main__":
    main()

"""Annotation mode vs a bare ``ncu`` command collecting the same metrics on the same kernel,
side by side in one run (goal: ours ÷ bare ≤ 1.3).

* ours: ``Engine.profile(kernel, version, params, "annotation")`` — worker process under ncu
  (NVTX-filtered), correctness check against the reference, IR/tiling artifacts, then a second
  process that parses the report, and the rendering.
* bare: ``ncu --section SpeedOfLight --section LaunchStats --section Occupancy --metrics <the
  same resolved list> -k regex:<kernel> -c 1 -o <tmp> python bare_launch.py ...`` — a script
  that builds the inputs and launches the stage once; ncu profiles the first matching launch.

Ours runs twice per round: with warm workers (the server's default: the compile/autotune step
and the report reading run in a long-lived worker; the profiled process is always a fresh one
under ncu) and without (a fresh process for every step). Both run with ncu's default clock
control (base) and cache control (all), against a warm Triton cache (one untimed round first).
Rounds alternate warm/fresh/bare; medians are printed (goal for warm: ≤ 1.15).

    python benchmarks/bench_annotation_vs_ncu.py [--rounds 3] [--workspace DIR] [--cases vector_add:v1,...]
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kprof_mcp import runner  # noqa: E402
from kprof_mcp.engine import Config, Engine  # noqa: E402
from kprof_mcp.tools import ncu as ncu_lib  # noqa: E402

BARE = """
import sys, json, torch
from pathlib import Path
from kprof_mcp.packages import available, load
kernel, version, params = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
pkg = load(available()[kernel])
p = pkg.validate_params(params)
inputs = pkg.make_inputs(p, "cuda")
plan = pkg.version(version).build(inputs, p)
for s in plan.stages:
    s.fn()
torch.cuda.synchronize()
"""

CASES = [("vector_add", "v0", {}), ("vector_add", "v1", {}), ("matmul", "v0", {}), ("matmul", "v1", {})]


def bare_ncu(
    ncu: Path, metrics: list[str], kernel_regex: str, kernel: str, version: str, params: dict, tmp: Path
) -> float:
    script = tmp / "bare_launch.py"
    script.write_text(BARE)
    cmd = [str(ncu)]
    for sec in ncu_lib.ANNOTATION_SECTIONS:
        cmd += ["--section", sec]
    cmd += [
        "--metrics",
        ",".join(sorted(set(metrics))),
        "-k",
        f"regex:{kernel_regex}",
        "-c",
        "1",
        "-f",
        "-o",
        str(tmp / "bare"),
        sys.executable,
        str(script),
        kernel,
        version,
        json.dumps(params),
    ]
    t0 = time.perf_counter()
    cp = subprocess.run(cmd, capture_output=True, text=True, env=runner._env())
    wall = time.perf_counter() - t0
    if cp.returncode != 0 or "==PROF== Profiling" not in cp.stdout:
        raise SystemExit(f"bare ncu failed: {cp.stdout[-2000:]} {cp.stderr[-2000:]}")
    return wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workspace", default=None)
    ap.add_argument(
        "--cases", default=None, help="kernel:version,... (default: vector_add v0/v1, matmul v0/v1)"
    )
    a = ap.parse_args()
    cases = [(c.split(":")[0], c.split(":")[1], {}) for c in a.cases.split(",")] if a.cases else CASES
    ws = Path(a.workspace or tempfile.mkdtemp(prefix="kprof-bench-"))
    engine = Engine(Config(workspace=ws, warm=True))
    cold = Engine(Config(workspace=ws, warm=False))
    ncu = ncu_lib.find_ncu()
    if ncu is None:
        raise SystemExit(ncu_lib.not_found_message())
    setup = ncu_lib.setup(ncu)
    metrics = list(setup.chosen.values())
    rows = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        for kernel, version, params in cases:
            # Warm the Triton and autotune caches (and learn the compiled kernel's name).
            o = engine.profile(kernel, version, params, "annotation")
            name = o.result.stages[0].ncu_kernels[0]
            full = o.result.params
            bare_ncu(ncu, metrics, name, kernel, version, full, tmp)
            ours, fresh, bare = [], [], []
            for _ in range(a.rounds):
                t0 = time.perf_counter()
                o = engine.profile(kernel, version, params, "annotation")
                ours.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                cold.profile(kernel, version, params, "annotation")
                fresh.append(time.perf_counter() - t0)
                bare.append(bare_ncu(ncu, metrics, name, kernel, version, full, tmp))
            mo, mf, mb = statistics.median(ours), statistics.median(fresh), statistics.median(bare)
            rows.append(
                (
                    kernel,
                    version,
                    mo,
                    mf,
                    mb,
                    o.result.stages[0].timing.median_ns / 1e3,
                    o.result.profiler.get("passes_per_launch"),
                    o.result.phases_s,
                    ours,
                    fresh,
                    bare,
                )
            )
            print(
                f"{kernel} {version}: warm {mo:.2f} s, fresh {mf:.2f} s, bare ncu {mb:.2f} s, "
                f"ratios {mo / mb:.3f} / {mf / mb:.3f}",
                flush=True,
            )
    engine.close()
    print()
    print(f"ncu {setup.version} at {ncu}; rounds={a.rounds}; wall seconds, medians")
    print(
        "| kernel | version | annotation, warm (s) | annotation, fresh (s) | bare ncu (s) | warm ÷ bare | "
        "fresh ÷ bare | duration (us) | passes |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for k, v, mo, mf, mb, d, passes, *_ in rows:
        print(
            f"| {k} | {v} | {mo:.2f} | {mf:.2f} | {mb:.2f} | {mo / mb:.3f} | {mf / mb:.3f} | {d:.2f} | {passes} |"
        )
    print()
    for k, v, *_, ours, fresh, bare in rows:
        print(
            f"{k} {v} samples (s): warm {[round(x, 2) for x in ours]}, fresh {[round(x, 2) for x in fresh]}, "
            f"bare {[round(x, 2) for x in bare]}"
        )
    print()
    for k, v, *rest in rows:
        print(f"{k} {v} worker phases (s): {rest[5]}")


if __name__ == "__main__":
    main()

"""Where a re-profile's CUPTI and clock-read overheads go (issue 40), in one process per setting:
event mode's own timers (``kprof_mcp.capture.timer.Timer``) on a 16M-element float32 add (torch's,
or with ``--package`` the Triton stage of kernels/vector_add v1, autotuned, as the server profiles it),
as a warm worker runs them after its first CUPTI session, with ``TEARDOWN_CUPTI`` as this process's
environment has it (printed), forced to 1 (``KPROF_CUPTI_TEARDOWN=1``: torn down after every
session) and forced to 0 (kept attached).

Per repetition: the CUDA-event timer (launch included; does CUPTI left attached slow it?), the CUPTI
timer (its ``spent_s``: session start, runs, stop, trace, SM clock reads), then the 11 clock fields
read once by ``nvidia-smi`` and once through NVML (:mod:`kprof_mcp.capture.gpu_state`: the same keys?),
and one energy window.

    python benchmarks/bench_cupti_session.py [--reps 2] [--package] [--json F]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, statistics, sys, time
t0 = time.perf_counter()
import torch
from kprof_mcp.capture import gpu_state
from kprof_mcp.capture.timer import Timer, keep_cupti_attached
from kprof_mcp.models import ProfileRequest
from kprof_mcp.tools import nvidia_smi
from kprof_mcp.tools.nvml import energy_reader

out = {"attached": keep_cupti_attached(), "TEARDOWN_CUPTI": __import__("os").environ.get("TEARDOWN_CUPTI")}
out["cpus"] = len(__import__("os").sched_getaffinity(0))
if sys.argv[2]:  # the package's Triton stage, as the server's event mode times it
    import importlib.util
    pkg_dir = sys.argv[2]
    spec = importlib.util.spec_from_file_location("loop_pkg", pkg_dir + "/__init__.py", submodule_search_locations=[pkg_dir])
    mod = importlib.util.module_from_spec(spec); sys.modules["loop_pkg"] = mod; spec.loader.exec_module(mod)
    pkg = mod.KERNEL
    p = pkg.validate_params({})
    plan = pkg.version("v1").build(pkg.make_inputs(p, "cuda"), p)
    fn = plan.stages[0].fn
    fn(); torch.cuda.synchronize()  # JIT and autotune outside the sessions
else:
    n = 1 << 24
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    z = torch.empty_like(x)
    fn = lambda: torch.add(x, y, out=z)
req = ProfileRequest(kernel="k", kernel_source="/x", version="v", params={}, mode="event", out_root="/tmp", min_runs=30)
t = time.perf_counter()
first = Timer(torch, True, req.model_copy(update={"budget_ms": 1.0, "min_runs": 1}), "cupti")
first.time(fn)  # the worker's first session (CUPTI loaded)
out["first_session_s"] = round(time.perf_counter() - t, 3)
t = time.perf_counter(); smi0 = nvidia_smi.clocks(0); out["smi_before_s"] = round(time.perf_counter() - t, 3)
reader = gpu_state.sm_clock_reader(0)
out["clock_source"] = getattr(reader, "source", None)
reps = []
for _ in range(int(sys.argv[1])):
    r = {}
    t = time.perf_counter()
    ev = Timer(torch, True, req.model_copy(update={"budget_ms": 500.0}), "events").time(fn)
    r["events_s"], r["events_median_us"] = round(time.perf_counter() - t, 3), ev.median_ns / 1e3
    t = time.perf_counter()
    ct = Timer(torch, True, req.model_copy(update={"warmup_ms": 0.0}), "cupti", clock_reader=reader)
    tm = ct.time(fn)
    r["cupti_s"] = round(time.perf_counter() - t, 3)
    r["cupti_median_us"], r["cupti_runs"], r["cupti_stop"] = tm.median_ns / 1e3, tm.runs, tm.stop_reason
    r["spent_s"] = {k: round(v, 4) for k, v in ct.spent_s.items()}
    r["batches"], r["sm_mhz"] = len(ct.kernels), tm.sm_clock_mhz[:3]
    t = time.perf_counter(); smi = nvidia_smi.clocks(0); r["smi_after_s"] = round(time.perf_counter() - t, 4)
    t = time.perf_counter(); nv = gpu_state.state(0); r["nvml_state_s"] = round(time.perf_counter() - t, 4)
    r["same_keys"] = sorted(smi) == sorted(nv)
    r["differ"] = {k: [smi.get(k), nv.get(k)] for k in smi if smi.get(k) != nv.get(k)}
    t = time.perf_counter()
    e = Timer(torch, True, req).energy(fn, energy_reader(nvidia_smi.smi_id(0)), windows=1)
    r["energy_s"], r["energy"] = round(time.perf_counter() - t, 3), e
    reps.append(r)
out["reps"] = reps
out["total_s"] = round(time.perf_counter() - t0, 3)
print("RESULT " + json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--package", action="store_true", help="kernels/vector_add v1's Triton stage")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    inherited = os.environ.get("TEARDOWN_CUPTI")
    print(f"this environment: TEARDOWN_CUPTI={inherited!r}")
    settings = {
        f"as inherited (TEARDOWN_CUPTI={inherited})": {},
        "torn down (KPROF_CUPTI_TEARDOWN=1)": {"KPROF_CUPTI_TEARDOWN": "1"},
        "attached (KPROF_CUPTI_TEARDOWN=0)": {"KPROF_CUPTI_TEARDOWN": "0"},
    }
    pkg = str(ROOT / "kernels" / "vector_add") if a.package else ""
    results = {}
    for name, extra in settings.items():
        env = {k: v for k, v in os.environ.items() if k != "KPROF_CUPTI_TEARDOWN"}
        env.update(extra, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p))
        cp = subprocess.run(
            [sys.executable, "-c", CHILD, str(a.reps), pkg],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        line = [ln for ln in cp.stdout.splitlines() if ln.startswith("RESULT ")]
        if not line:
            print(f"{name}: failed\n{cp.stderr[-3000:]}")
            continue
        r = results[name] = json.loads(line[-1][7:])
        print(
            f"\n## {name}: first session {r['first_session_s']} s, nvidia-smi before {r['smi_before_s']} s, "
            f"clock reads by {r['clock_source']}, TEARDOWN_CUPTI={r['TEARDOWN_CUPTI']}, cpus {r['cpus']}"
        )
        for i, x in enumerate(r["reps"]):
            print(
                f"rep {i}: events {x['events_s']} s ({x['events_median_us']:.2f} us); cupti {x['cupti_s']} s "
                f"({x['cupti_median_us']:.2f} us, {x['cupti_runs']} runs in {x['batches']} batches, "
                f"{x['cupti_stop']}) spent {x['spent_s']}; nvidia-smi after {x['smi_after_s']} s, "
                f"NVML state {x['nvml_state_s']} s (same keys {x['same_keys']}, differ {x['differ']}); "
                f"energy {x['energy_s']} s {x['energy']}"
            )
    med = lambda r, k: statistics.median(x[k] for x in r["reps"])  # noqa: E731
    for name, r in results.items():
        print(
            f"{name}: cupti timer {med(r, 'cupti_s'):.3f} s, event median {med(r, 'events_median_us'):.2f} us, "
            f"cupti median {med(r, 'cupti_median_us'):.2f} us"
        )
    if a.json:
        a.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

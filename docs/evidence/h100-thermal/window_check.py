"""Does timing over a longer window steady matmul v3's between-call median? SM clock locked at 1305 MHz.

kprof's event Timer stops as soon as the IQR is under 1 % (after 10 runs): for a 220 us GEMM that
is ~2 ms of GPU time, one state of a clock that moves 2-3 % between launches (ncu_lock_sweep.sh).
8 rounds, alternating, each timing matmul v3 and softmax v2 with:
  default    the Timer as event mode runs it (converged after >= 10 runs)
  300 ms     no early stop: runs until 300 ms of timed batches
  1000 ms    no early stop, 1000 ms
"""
import statistics, subprocess, sys
sys.path.insert(0, ".")
import torch
from kprof_mcp.models import ProfileRequest
from kprof_mcp.modes.event import Timer
from kprof_mcp.packages import available, load

base = ProfileRequest(kernel="matmul", kernel_source="x", version="v3", params={}, mode="event", out_root="/tmp")
cfg = {"default": base,
       "300 ms": base.model_copy(update={"budget_ms": 300, "target_rel_iqr": 0.0, "target_rel_ci": 0.0,
                                         "max_runs": 100000}),
       "1000 ms": base.model_copy(update={"budget_ms": 1000, "target_rel_iqr": 0.0, "target_rel_ci": 0.0,
                                          "max_runs": 100000})}
fns = {}
for k, v in [("matmul", "v3"), ("softmax", "v2")]:
    pkg = load(available([])[k]); p = pkg.validate_params({})
    fns[f"{k} {v}"] = pkg.version(v).build(pkg.make_inputs(p, "cuda"), p).stages[0].fn
subprocess.run(["nvidia-smi", "-lgc", "1305,1305"], capture_output=True)
res = {}
try:
    for r in range(8):
        for name, fn in fns.items():
            for c, req in cfg.items():
                t = Timer(torch, True, req, "cupti").time(fn)
                res.setdefault((name, c), []).append((t.median_ns / 1e3, t.runs))
            print(r, name, {c: f"{res[(name, c)][-1][0]:.2f} ({res[(name, c)][-1][1]} runs)" for c in cfg}, flush=True)
finally:
    subprocess.run(["nvidia-smi", "-rgc"], capture_output=True)
print("| kernel | timing | runs per call (median) | median (µs) | (max − min) ÷ median over 8 calls |")
print("|---|---|---|---|---|")
for (name, c), xs in res.items():
    m = [x for x, _ in xs]
    med = statistics.median(m)
    print(f"| {name} | {c} | {statistics.median(n for _, n in xs):.0f} | {med:.2f} | {100 * (max(m) - min(m)) / med:.2f} % |")

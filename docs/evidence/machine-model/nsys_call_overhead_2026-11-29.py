"""What Nsight Systems adds to the host per CUDA call (2026-11-29): loops of one kind of call each, timed by the
process itself (perf_counter), run once without a profiler and once under nsys with kprof's default nsys-mode
flags (CUDA and NVTX tracing, the host's Python sampled at 2 kHz), and the trace's own durations of those calls.
Loops: a tiny elementwise op (one launch), torch.cuda.synchronize() with nothing pending, an op then a synchronize
(a read after a launch), and a pure-Python loop of the same length (no CUDA call). Run on the GPU machine:

    python3 docs/evidence/machine-model/nsys_call_overhead_2026-11-29.py           # both runs, and the trace read
"""

import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time

N = 3000


def loops():
    import torch

    x = torch.zeros(1, device="cuda")
    d = {}

    def py():
        for i in range(N):
            d[i & 63] = i

    def launch():
        for _ in range(N):
            x.add_(1)

    def sync():
        for _ in range(N):
            torch.cuda.synchronize()

    def launch_sync():
        for _ in range(N):
            x.add_(1)
            torch.cuda.synchronize()

    out = {}
    for name, f in (("python", py), ("launch", launch), ("sync", sync), ("launch_sync", launch_sync)):
        f()
        torch.cuda.synchronize()
        runs = []
        for _ in range(5):
            torch.cuda.nvtx.range_push(name)
            t0 = time.perf_counter()
            f()
            torch.cuda.synchronize()
            runs.append((time.perf_counter() - t0) / N * 1e6)
            torch.cuda.nvtx.range_pop()
        out[name] = round(statistics.median(runs), 3)
    print(json.dumps(out), flush=True)


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "child":
    loops()
    sys.exit(0)

nsys = next(
    (
        p
        for p in (
            os.environ.get("KPROF_NSYS"),
            *sorted(__import__("glob").glob("/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys")),
        )
        if p
    ),
    None,
)
plain = subprocess.run([sys.executable, __file__, "child"], capture_output=True, text=True, timeout=300)
print(
    "no profiler, us a call:",
    plain.stdout.strip().splitlines()[-1] if plain.stdout.strip() else plain.stderr[-500:],
)
flags = [
    "-t",
    "cuda,nvtx",
    "--cuda-graph-trace=node",
    "--sample=none",
    "--python-sampling=true",
    "--python-sampling-frequency=2000",
    "--cpuctxsw=none",
    "--force-overwrite",
    "true",
    "-o",
    "/tmp/ovh",
]
prof = subprocess.run(
    [nsys, "profile", *flags, sys.executable, __file__, "child"], capture_output=True, text=True, timeout=300
)
line = [ln for ln in prof.stdout.splitlines() if ln.startswith("{")]
print("under nsys, us a call:", line[-1] if line else prof.stdout[-500:] + prof.stderr[-500:])
subprocess.run(
    [
        nsys,
        "export",
        "--type",
        "sqlite",
        "--force-overwrite",
        "true",
        "-o",
        "/tmp/ovh.sqlite",
        "/tmp/ovh.nsys-rep",
    ],
    capture_output=True,
    timeout=300,
)
c = sqlite3.connect("/tmp/ovh.sqlite")
rows = c.execute(
    "select s.value, r.end - r.start from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on r.nameId = s.id"
).fetchall()
by = {}
for name, d in rows:
    by.setdefault(name, []).append(d)
print(
    "traced call durations (median ns, count):",
    {k: (statistics.median(v), len(v)) for k, v in by.items() if len(v) > 100},
)

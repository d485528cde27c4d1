"""Does a profile taken after the GPU sat idle read slower? One warm engine profiles matmul v3
(event mode) back to back, then after idle gaps, while nvidia-smi samples the SM and memory
clocks, power and P-state every 100 ms. Prints each profile's median and the clocks during it.

    python docs/evidence/h100-cluster/exp_idle_gpu.py --out $OUT/idle   # on the GPU machine
"""

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

from kprof_mcp.engine import Config, Engine

ap = argparse.ArgumentParser()
ap.add_argument("--out", required=True)
ap.add_argument("--gaps", default="0,0,0,20,0,20,0,40,0")
a = ap.parse_args()
out = Path(a.out)
out.mkdir(parents=True, exist_ok=True)
smi = subprocess.Popen(
    [
        "nvidia-smi",
        "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,pstate",
        "--format=csv,noheader,nounits",
        "-lms",
        "100",
    ],
    stdout=open(out / "smi.csv", "w"),
)
engine = Engine(Config.from_options(tempfile.mkdtemp()))
engine.start_workers(["0"])
rows = []
try:
    engine.profile("matmul", "v3", mode="event")  # warm-up: JIT, autotune cache, workers
    for gap in [float(g) for g in a.gaps.split(",")]:
        time.sleep(gap)
        t0 = time.time()
        o = engine.profile("matmul", "v3", mode="event")
        s = o.result.stages[0]
        rows.append(
            {
                "idle_before_s": gap,
                "start": t0,
                "end": time.time(),
                "median_us": s.timing.median_ns / 1e3,
                "iqr_us": s.timing.iqr_ns / 1e3,
                "runs": s.timing.runs,
                "sm_clock_mhz": list(s.timing.sm_clock_mhz),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
finally:
    engine.close()
    smi.terminate()
(out / "rows.json").write_text(json.dumps(rows, indent=2))

"""Time held-back command pairs' bad and good variants without a profiler on this machine, as record.py does
(each variant's own `--time`: steps from a synchronised start to a synchronised end, the median of its rounds),
so a bad variant re-recorded here (tests/calibration/recorded-opfloor/) is judged against a fix measured on the
same GPU and CPU. Variants alternate, bad first; writes one JSON line per pair to OUTDIR/retimed.jsonl.
python3 retime_heldout_2026-11-29.py OUTDIR END_S ROUNDS STEPS SCRIPT...   (on the GPU machine, repository root)"""

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path.cwd()
sys.path.insert(0, str(ROOT / "tests/calibration"))
import pairs  # noqa: E402

out, end = Path(sys.argv[1]), time.time() + float(sys.argv[2])
rounds, steps = int(sys.argv[3]), int(sys.argv[4])
by_script = {}
for n in dir(pairs):
    v = getattr(pairs, n)
    if n.startswith("HELDOUT") and isinstance(v, list):
        for p in v:
            if p.command:
                by_script.setdefault(p.kernel.removesuffix(".py"), (n, p))
out.mkdir(parents=True, exist_ok=True)
try:
    name = subprocess.run(
        ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True
    ).stdout.splitlines()[0]
except (OSError, IndexError):
    name = "cpu"
for s in sys.argv[5:]:
    setname, p = by_script[s]
    t0 = time.time()
    steps_ns: dict[str, list[float]] = {"bad": [], "good": []}
    for _ in range(rounds):
        for role, variant in (("bad", p.bad), ("good", p.good)):
            if time.time() > end - 20:
                break
            cp = subprocess.run(
                [
                    sys.executable,
                    p.kernel,
                    "--variant",
                    variant,
                    "--time",
                    "--steps",
                    str(steps),
                    "--rounds",
                    "3",
                ],
                cwd=ROOT / "tests/calibration/commands",
                capture_output=True,
                text=True,
                timeout=max(10, end - time.time()),
            )
            if cp.returncode != 0:
                print(f"== {s} {variant} failed: {cp.stderr[-600:]}", flush=True)
                break
            steps_ns[role].append(json.loads(cp.stdout.strip().splitlines()[-1])["step_ns_median"])
    n = min(len(steps_ns["bad"]), len(steps_ns["good"]))
    if n == 0:
        print(f"== {s} not timed (time or failure)", flush=True)
        continue
    tb, tg = statistics.median(steps_ns["bad"][:n]), statistics.median(steps_ns["good"][:n])
    rec = {
        "set": setname,
        "pair": p.name,
        "device": name,
        "step_ns": steps_ns,
        "measured_gain_pct": 100.0 * (tb / tg - 1.0),
        "measured_how": f"wall time per step, {steps} steps timed from a synchronised start to a synchronised end, "
        f"median of 3 such runs per process, {n} processes per variant alternating",
    }
    with open(out / "retimed.jsonl", "a") as f:
        f.write(json.dumps(rec) + "\n")
    print(
        f"== {s} ({setname}) bad {tb / 1e6:.3f} ms good {tg / 1e6:.3f} ms gain {rec['measured_gain_pct']:.1f}% "
        f"({time.time() - t0:.0f} s)",
        flush=True,
    )

"""Quick check of the third multi-rank set on 2 GPUs before recording (run from the repository root):
each script's variants timed as record.py times them (rank 0, after a barrier a round; here 10 steps x 2
rounds), their kept outputs compared; the barrier pair's host batch (crops and flips) timed alone on this
CPU. Prints "RATIOS {json}" (script -> bad / good) last.

    NCCL_NVLS_ENABLE=0 python tests/calibration/recorded-heldout-ranks3/quick_check.py <outdir> [script ...]
"""

import importlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

COMMANDS = Path(__file__).resolve().parents[1] / "commands"
sys.path.insert(0, str(COMMANDS))


def crop_time() -> None:
    m = importlib.import_module("ranks3_barrier_every_step")
    g = torch.Generator().manual_seed(1)
    images = torch.randint(0, 256, (m.IMAGES, 3, m.SIZE, m.SIZE), generator=g, dtype=torch.uint8)
    labels = torch.randint(0, m.CLASSES, (m.IMAGES,), generator=g)
    ts = []
    for _ in range(30):
        t0 = time.perf_counter()
        x, y = m.crop_batch(images, labels, g, m.BATCH, m.CROP)
        if torch.cuda.is_available():
            x.pin_memory(), y.pin_memory()
        ts.append((time.perf_counter() - t0) * 1e3)
    print(f"== host batch of {m.BATCH} crops: median {statistics.median(ts):.2f} ms, min {min(ts):.2f} ms")


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    crop_time()
    names = sys.argv[2:] or ["ranks3_gloo_grad_reduce", "ranks3_barrier_every_step", "ranks3_param_broadcast"]
    ratios = {}
    for name in names:
        t = {}
        for variant in ("bad", "good"):
            t0 = time.time()
            cp = subprocess.run(
                [
                    sys.executable,
                    f"{name}.py",
                    "--variant",
                    variant,
                    "--time",
                    "--steps",
                    "10",
                    "--rounds",
                    "2",
                ]
                + ["--save", str(out.resolve() / f"{name}.{variant}")],
                cwd=COMMANDS,
                capture_output=True,
                text=True,
                timeout=120,
            )
            if cp.returncode != 0:  # one script's failure leaves the others' checks
                print(f"== {name} {variant} FAILED:\n{cp.stderr[-3000:]}", flush=True)
                break
            rec = json.loads(cp.stdout.strip().splitlines()[-1])
            t[variant] = rec["step_ns_median"] / 1e6
            rounds = ", ".join(f"{x / 1e6:.2f}" for x in rec["step_ns"])
            print(
                f"== {name} {variant}: {t[variant]:.2f} ms ({rounds}) [{time.time() - t0:.1f} s]", flush=True
            )
        if len(t) < 2:
            continue
        b = [torch.load(out / f"{name}.bad.rank{r}.pt") for r in (0, 1)]
        g = [torch.load(out / f"{name}.good.rank{r}.pt") for r in (0, 1)]
        same = [torch.equal(b[r], g[r]) for r in (0, 1)]
        print(f"   outputs identical per rank {same}; n={b[0].numel()}", flush=True)
        ratios[name] = t["bad"] / t["good"] if all(same) else 0.0
        print(f"   bad / good {t['bad'] / t['good']:.2f}x", flush=True)
    print("RATIOS " + json.dumps(ratios), flush=True)


if __name__ == "__main__":  # the spawned ranks import this file
    main()

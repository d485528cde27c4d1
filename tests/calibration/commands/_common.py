"""What the command pairs share: the argument parser and the timing run (no profiler: the measured
gain of a fix is the wall time per step, the whole loop timed with one synchronisation at its end,
which is what a user's loop costs)."""

from __future__ import annotations

import argparse
import json
import statistics
import time


def parser(doc: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--variant", choices=("bad", "good"), required=True)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--time", action="store_true", help="print the wall time per step (JSON), no profiling")
    ap.add_argument("--rounds", type=int, default=5)
    return ap


def run(torch, loop, steps: int, timing: bool, rounds: int, warmup: int = 3) -> None:
    """``loop(n)`` runs n steps. Profiled: warm-up steps then ``steps`` steps. Timed: ``rounds``
    rounds of ``steps`` steps, each from a synchronised start to a synchronised end."""
    cuda = torch.cuda.is_available()
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    loop(warmup)
    sync()
    if not timing:
        loop(steps)
        sync()
        print("done")
        return
    per_step = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        loop(steps)
        sync()
        per_step.append((time.perf_counter() - t0) / steps * 1e9)
    print(json.dumps({"step_ns_median": statistics.median(per_step), "step_ns": per_step, "steps": steps}))

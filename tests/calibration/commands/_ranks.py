"""What the multi-rank command pairs share: two ranks started with ``torch.multiprocessing.spawn`` (NCCL
on GPUs, one GPU a rank; gloo on the CPU), each rank's step run by the script's ``make``, and the timing
(no profiler): every round starts after a barrier, and rank 0 prints the wall time per step, median of the
rounds, as JSON (the last line of stdout, what record.py reads). ``--save PREFIX`` writes each rank's kept
outputs to ``PREFIX.rank<r>.pt`` after the run (the tests compare the variants with them).

``make(variant, rank, world, cuda, **sizes)`` returns ``(loop, output)``: ``loop(n)`` runs n steps (each in
``kprof.range("step")``), ``output()`` the kept outputs as a CPU tensor."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

WORLD = 2
WARMUP = 3


def parser(doc: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--variant", choices=("bad", "good"), required=True)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--time", action="store_true", help="print the wall time per step (JSON), no profiling")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--save", default=None, help="write each rank's kept outputs to SAVE.rank<r>.pt")
    return ap


def _worker(rank, world, init, make, variant, steps, timing, rounds, save, sizes):
    import torch
    import torch.distributed as dist

    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.set_device(rank)
    else:
        torch.set_num_threads(1)
    dist.init_process_group("nccl" if cuda else "gloo", init_method=init, rank=rank, world_size=world)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    try:
        loop, output = make(variant, rank, world, cuda, **sizes)
        loop(WARMUP)
        sync()
        if not timing:
            dist.barrier()
            loop(steps)
            sync()
            if rank == 0:
                print("done", flush=True)
        else:
            per_step = []
            for _ in range(rounds):
                dist.barrier()
                sync()
                t0 = time.perf_counter()
                loop(steps)
                sync()
                per_step.append((time.perf_counter() - t0) / steps * 1e9)
            if rank == 0:
                med = statistics.median(per_step)
                print(json.dumps({"step_ns_median": med, "step_ns": per_step, "steps": steps}), flush=True)
        if save:
            torch.save(output(), f"{save}.rank{rank}.pt")
        dist.barrier()
    finally:
        dist.destroy_process_group()


def launch(make, variant, steps=20, timing=False, rounds=5, save=None, sizes=None) -> None:
    """Both ranks of ``make``'s job, started with torch.multiprocessing.spawn (a file rendezvous)."""
    import torch.multiprocessing as mp

    init = "file://" + os.path.join(tempfile.mkdtemp(prefix="kprof-ranks-"), "rendezvous")
    args = (WORLD, init, make, variant, steps, timing, rounds, save, dict(sizes or {}))
    mp.spawn(_worker, args=args, nprocs=WORLD)


def main(doc: str, make) -> None:
    a = parser(doc).parse_args()
    launch(make, a.variant, a.steps, a.time, a.rounds, a.save)

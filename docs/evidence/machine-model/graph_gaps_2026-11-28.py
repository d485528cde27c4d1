"""What a CUDA graph leaves between its kernels on this GPU (issue 36: the launch what-if's replay, which ran
a captured step's kernels back to back with no gap). Chains of small kernels, each run eagerly (a launch a
kernel from Python) and captured once as a torch.cuda.CUDAGraph and replayed; the replay timed with CUDA
events over 30 replays after a warm-up; the kernels' own durations from torch.profiler (CUPTI) over one
replay. The gap a node costs = (replay time - the sum of its kernels' durations) / kernels. Chains:
add_1elem (x.add_(1) on one element), stats_64x512 (mean, std, abs, amax, stack of a [64, 512] fp32 tensor:
the small reductions a debugging hook issues), linear_64x512 (nn.Linear 512 -> 512 on [64, 512] fp32),
ln_gelu_64x512 (layer norm then GELU on [64, 512]). Also, as a check of the what-if and not to set anything,
a held-back pair's bad and good steps (tests/calibration/commands/stat_hooks.py) eager and captured.
Clocks free (as commands run). Prints one JSON line per chain; run from the repository root:
python3 docs/evidence/machine-model/graph_gaps_2026-11-28.py > graph_gaps_2026-11-28_h100.jsonl"""

import json
import statistics
import sys

import torch
from torch import nn

sys.path.insert(0, "tests/calibration/commands")
dev = "cuda"


def chains():
    x1 = torch.zeros(1, device=dev)
    h = torch.randn(64, 512, device=dev)
    lin = nn.Linear(512, 512).to(dev)
    ln = nn.LayerNorm(512).to(dev)
    keep: list = []

    def add_1elem():
        for _ in range(400):
            x1.add_(1)

    def stats():
        keep.clear()
        for _ in range(80):
            keep.append(torch.stack([h.mean(), h.std(), h.abs().amax()]))

    def linear():
        y = h
        for _ in range(100):
            y = lin(y)
        keep.append(y)

    def ln_gelu():
        y = h
        for _ in range(150):
            y = torch.nn.functional.gelu(ln(y))
        keep.append(y)

    return {"add_1elem": add_1elem, "stats_64x512": stats, "linear_64x512": linear, "ln_gelu_64x512": ln_gelu}


def timed(fn, reps: int = 30) -> float:
    """Median milliseconds of one call over ``reps`` calls each timed by events."""
    out = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e))
    return statistics.median(out)


def kernels(fn) -> tuple[int, float]:
    """Kernels one call runs and the sum of their durations (µs), by CUPTI."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    ks = [e for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA and e.device_time > 0]
    ks = [e for e in ks if "memcpy" not in e.name.lower() and "memset" not in e.name.lower()]
    return len(ks), sum(e.device_time for e in ks)


def graph_of(fn) -> torch.cuda.CUDAGraph:
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g


def measure(name: str, fn) -> dict:
    with torch.inference_mode():
        for _ in range(3):
            fn()
        eager_ms = timed(fn)
        g = graph_of(fn)
        for _ in range(3):
            g.replay()
        graph_ms = timed(g.replay)
        n, dur_us = kernels(g.replay)
        n_e, dur_e_us = kernels(fn)
    row = {
        "chain": name,
        "kernels": n,
        "kernels_eager": n_e,
        "eager_us": 1e3 * eager_ms,
        "graph_us": 1e3 * graph_ms,
        "kernel_sum_graph_us": dur_us,
        "kernel_sum_eager_us": dur_e_us,
        "gap_per_node_us": (1e3 * graph_ms - dur_us) / max(n, 1),
        "eager_per_kernel_us": 1e3 * eager_ms / max(n_e, 1),
    }
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__}), flush=True)
    for name, fn in chains().items():
        measure(name, fn)
    import stat_hooks  # the held-back pair's steps: a check of the what-if, nothing is set from it

    for variant in ("bad", "good"):
        loop, _ = stat_hooks.make(variant, True)
        measure(f"stat_hooks_{variant}_step", lambda loop=loop: loop(1))


if __name__ == "__main__":
    main()

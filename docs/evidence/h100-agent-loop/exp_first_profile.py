"""Where a warm worker's start-up and a CUPTI timing batch spend their time (H100 experiment).

``python docs/evidence/h100-agent-loop/exp_first_profile.py`` runs each variant in a fresh process and prints one JSON
line per variant: ``seq`` (the worker's warm-up as it is, CUPTI split into import / first session
enter / exit), ``thread`` (the first CUPTI session on a thread while the main thread does
Triton's driver and the first launches), and ``batch`` (one 200-run CUPTI batch of a small kernel:
the session, the chrome-trace export, its parse and the per-run matching, with CPU+CUDA and with
CUDA-only activities).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time


def _clock():
    t0 = time.perf_counter()
    mark = [t0]
    steps = {}

    def step(name):
        now = time.perf_counter()
        steps[name] = round(now - mark[0], 3)
        mark[0] = now

    return t0, steps, step


def seq():
    t0, steps, step = _clock()
    import torch

    step("import_torch")
    import triton  # noqa: F401

    step("import_triton")
    torch.cuda.init()
    x = torch.zeros(1024, device="cuda")
    torch.cuda.synchronize()
    step("cuda_context")
    import triton.runtime.driver as driver

    driver.active.get_current_device()
    step("triton_driver")
    from torch.profiler import ProfilerActivity, profile

    step("import_torch_profiler")
    p = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    p.__enter__()
    step("cupti_enter")
    x.add_(1)
    torch.cuda.synchronize()
    p.__exit__(None, None, None)
    step("cupti_exit")
    from kprof_mcp.child.serve import _first_launches

    _first_launches(torch, triton, x)
    step("first_launches")
    steps["total"] = round(time.perf_counter() - t0, 3)
    return steps


def thread():
    import threading

    t0, steps, step = _clock()
    import torch

    step("import_torch")
    import triton  # noqa: F401

    step("import_triton")
    torch.cuda.init()
    x = torch.zeros(1024, device="cuda")
    torch.cuda.synchronize()
    step("cuda_context")
    done = {}

    def cupti():
        a = time.perf_counter()
        from torch.profiler import ProfilerActivity, profile

        y = torch.zeros(16, device="cuda")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
            y.add_(1)
            torch.cuda.synchronize()
        done["cupti_thread_s"] = round(time.perf_counter() - a, 3)

    th = threading.Thread(target=cupti)
    th.start()
    import triton.runtime.driver as driver

    driver.active.get_current_device()
    from kprof_mcp.child.serve import _first_launches

    _first_launches(torch, triton, x)
    step("driver_first_launches_main")
    th.join()
    step("join_cupti")
    steps.update(done)
    steps["total"] = round(time.perf_counter() - t0, 3)
    return steps


def batch():
    import tempfile
    from pathlib import Path

    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    from kprof_mcp.analysis.timeline import ITER_RANGE, kernels_per_iteration
    from kprof_mcp.parsers import kineto

    a = torch.randn(1 << 24, device="cuda")
    b = torch.empty_like(a)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    with profile(activities=[ProfilerActivity.CUDA]):
        b.copy_(a)
    out = {}
    for label, acts in (
        ("cpu_cuda", [ProfilerActivity.CPU, ProfilerActivity.CUDA]),
        ("cuda_only", [ProfilerActivity.CUDA]),
        ("cpu_cuda_2", [ProfilerActivity.CPU, ProfilerActivity.CUDA]),
    ):
        t0, steps, step = _clock()
        torch.cuda.synchronize()
        with profile(activities=acts) as prof:
            for _ in range(200):
                flush.zero_()
                with record_function(ITER_RANGE):
                    torch.add(a, 1, out=b)
            torch.cuda.synchronize()
        step("session_200_runs")
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "t.json"
            prof.export_chrome_trace(str(path))
            step("export")
            steps["trace_mb"] = round(path.stat().st_size / 1e6, 2)
            tr = kineto.load_trace(path)
            step("load_trace")
        sums, spans, rows = kernels_per_iteration(tr)
        step("match")
        steps["runs_matched"] = len(sums)
        t1 = time.perf_counter()
        ev = prof.profiler.kineto_results.events()
        n = sum(1 for e in ev if e.device_type().name == "CUDA")
        steps["kineto_events_in_memory"] = round(time.perf_counter() - t1, 3)
        steps["cuda_events"] = n
        out[label] = steps
    # The same 200 runs timed with CUDA events (launch included), for scale.
    t0 = time.perf_counter()
    s = [torch.cuda.Event(enable_timing=True) for _ in range(200)]
    e = [torch.cuda.Event(enable_timing=True) for _ in range(200)]
    for i in range(200):
        flush.zero_()
        s[i].record()
        torch.add(a, 1, out=b)
        e[i].record()
    torch.cuda.synchronize()
    out["cuda_events_200_runs_s"] = round(time.perf_counter() - t0, 3)
    return out


if __name__ == "__main__":
    if len(sys.argv) > 1:
        print(json.dumps({sys.argv[1]: globals()[sys.argv[1]]()}))
        sys.exit(0)
    for rep in range(2):
        for v in ("seq", "thread", "batch"):
            t = time.perf_counter()
            cp = subprocess.run([sys.executable, __file__, v], capture_output=True, text=True)
            line = cp.stdout.strip().splitlines()[-1] if cp.stdout.strip() else cp.stderr[-2000:]
            print(f"rep {rep} {v} ({time.perf_counter() - t:.2f} s wall): {line}", flush=True)

"""Where a synchronise-per-module forward spends its host time, without a profiler (2026-11-29): the 26th held-back
set's layer_timing_sync.py model (32 blocks of Linear 1024 x 1024 + GELU + LayerNorm on [256, 1024] bf16, 96
modules), each module's call timed with perf_counter (its host time: Python and the launch, which does not wait),
and each synchronize's time, in four loops: (a) as the bad variant: synchronize, module, synchronize around each
module; (b) no synchronize; (c) synchronize only before each module (the queue already drained when the module
runs); (d) a 20 us busy-wait on the host in place of each synchronize (host work between modules, no GPU read).
Run on the GPU machine:  python3 docs/evidence/machine-model/cold_host_after_sync_2026-11-29.py
"""

import statistics
import time

import torch

torch.manual_seed(0)
dev, dt = "cuda", torch.bfloat16
mods = []
for _ in range(32):
    mods += [torch.nn.Linear(1024, 1024).to(dev, dt), torch.nn.GELU(), torch.nn.LayerNorm(1024).to(dev, dt)]
x = torch.randn(256, 1024, device=dev, dtype=dt)
sync = torch.cuda.synchronize


def spin(us):
    t = time.perf_counter() + us / 1e6
    while time.perf_counter() < t:
        pass


def step(mode, mod_t, sync_t):
    y = x
    for m in mods:
        if mode in ("a", "c"):
            s0 = time.perf_counter()
            sync()
            sync_t.append(time.perf_counter() - s0)
        elif mode == "d":
            spin(20)
        t0 = time.perf_counter()
        y = m(y)
        mod_t.append(time.perf_counter() - t0)
        if mode == "a":
            s0 = time.perf_counter()
            sync()
            sync_t.append(time.perf_counter() - s0)
    return y


with torch.inference_mode():
    for mode in "abcd" * 2:
        for _ in range(5):
            step(mode, [], [])
        sync()
        mod_t, sync_t, steps = [], [], []
        for _ in range(30):
            t0 = time.perf_counter()
            step(mode, mod_t, sync_t)
            sync()
            steps.append(time.perf_counter() - t0)
        print(
            f"mode {mode}: step median {statistics.median(steps) * 1e3:.3f} ms; module call median "
            f"{statistics.median(mod_t) * 1e6:.2f} us (p90 {sorted(mod_t)[int(0.9 * len(mod_t))] * 1e6:.2f}); "
            f"synchronize median {statistics.median(sync_t) * 1e6 if sync_t else 0:.2f} us, "
            f"total a step {sum(sync_t) / 30 * 1e3:.3f} ms",
            flush=True,
        )

"""Issue 38 on the GPU machine (root, Landlock ABI 7): kernel children and commands still run CUDA when
confined — Landlock, a PID and mount namespace of their own (fresh /proc, private /dev/shm), every
capability dropped (CAP_SYS_ADMIN kept under ncu where the driver lets only admins read counters).
Behind ncu and nsys the profiler is confined with its target (write beneath the job's own /proc, every
entry but the processes' read-only; no TCP). Run by gpu.sh; prints one line per check."""

import os
import sys
import time
from pathlib import Path

from kprof_mcp.engine import Config, Engine
from kprof_mcp.sandbox import policy

if os.environ.get("KPROF_NSYS_INSIDE"):  # nsys confined with its target before CONFINED_PROFILERS says so
    policy.CONFINED_PROFILERS = ("ncu", "nsys")
print("confined profilers:", policy.CONFINED_PROFILERS, flush=True)

ws = Path("/tmp/gws")
(ws / "sub").mkdir(parents=True, exist_ok=True)
(ws / "sub" / "cmd.py").write_text(
    "import os, torch, torch.multiprocessing as mp\n"
    "x = torch.ones(1 << 20, device='cuda')\n"
    "for _ in range(3):\n    y = (x * 2).sum()\n"
    "torch.cuda.synchronize()\n"
    "q = mp.get_context('spawn').SimpleQueue()\n"  # a semaphore in /dev/shm (private here)
    "print('CMD ok', float(y), 'pid', os.getpid(), 'procs', sorted(p for p in os.listdir('/proc') if p.isdigit()))\n"
)
cfg = Config(workspace=ws, timeout_s=120)
e = Engine(cfg)
t0 = time.time()


def step(name, f):
    t = time.time()
    try:
        r = f()
        print(f"== {name}: OK {time.time() - t:.1f}s {getattr(r, 'profile_dir', '')}", flush=True)
    except Exception as ex:  # noqa: BLE001
        print(f"== {name}: FAILED {time.time() - t:.1f}s {type(ex).__name__}: {str(ex)[:1500]}", flush=True)


step("event vector_add (warm worker, confined)", lambda: e.profile("vector_add", params={"n": 1 << 20}, mode="event"))
print("pool:", e.pool.status() if e.pool else None, flush=True)
step("annotation vector_add (ncu, fresh confined child)", lambda: e.profile("vector_add", params={"n": 1 << 20}, mode="annotation"))
step("nsys vector_add (fresh confined child)", lambda: e.profile("vector_add", params={"n": 1 << 20}, mode="nsys"))
step("command event (cwd sub)", lambda: e.profile_command(["python", "cmd.py"], cwd="sub", mode="event"))
step("command nsys (cwd sub)", lambda: e.profile_command(["python", "cmd.py"], cwd="sub", mode="nsys"))
e.close()
print(f"total {time.time() - t0:.1f}s", flush=True)
sys.stdout.flush()
os._exit(0)

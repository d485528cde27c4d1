"""Issue 38 on the GPU machine (root, Landlock ABI 7): kernel children and commands still run CUDA when
confined — Landlock, a PID/mount/IPC namespace of their own (fresh /proc, private /dev/shm), the seccomp
filter, every capability dropped (CAP_SYS_ADMIN kept under ncu where the driver lets only admins read
counters). Behind ncu and nsys the profiler is confined with its target (write beneath the job's own /proc,
every entry but the processes' read-only; nsys: TCP in the job's own network namespace, a tmpfs of the
job's own over /tmp with the policy's paths beneath it bound back, the filter letting the chmod family through). Run by
gpu.sh; prints one line per step, then what each confined process
saw of its confinement (selfcheck.py: a write outside, Seccomp, a chmod, its IPC namespace, its ancestors)
and each nsys profile's figures, unconfined (nsys outside: CONFINED_PROFILERS = ("ncu",)) beside confined.

A workspace kernel package ``probe_add`` (vector_add's copy whose import runs the self-check) and a command
``sub/cmd.py`` (the same, then torch work and a spawn queue's semaphore in /dev/shm) are profiled in event
mode (the warm worker compiles the Triton kernel: ptxas under the filter), annotation and ncu (ncu confined),
and nsys twice (outside, then confined). KPROF_NSYS_INSIDE=0: the confined nsys steps are left out."""

import os
import shutil
import statistics
import sys
import time
from pathlib import Path

from selfcheck import CODE as SELFCHECK

from kprof_mcp.engine import Config, Engine
from kprof_mcp.sandbox import policy

INSIDE = os.environ.get("KPROF_NSYS_INSIDE", "1") != "0"
ROOT = Path(__file__).resolve().parents[3]
HOST_IPC = os.readlink("/proc/self/ns/ipc")
ws = Path("/tmp/gws")
outside = Path.home() / "gws-outside"  # not the workspace, not a granted path, not beneath /tmp
shutil.rmtree(ws, ignore_errors=True)
shutil.rmtree(outside, ignore_errors=True)
(ws / "sub").mkdir(parents=True)
(ws / "out" / "profiles").mkdir(parents=True)
outside.mkdir()
KREC, CREC = ws / "out" / "profiles" / "selfcheck.txt", ws / "sub" / "selfcheck.txt"

pkg = ws / "probe_add"
shutil.copytree(ROOT / "kernels" / "vector_add", pkg, ignore=shutil.ignore_patterns("__pycache__"))
init = (pkg / "__init__.py").read_text().replace('name="vector_add"', 'name="probe_add"')
init += (
    SELFCHECK
    + f"selfcheck({str(outside)!r} + '/kernel-' + str(__import__('os').getpid()), {HOST_IPC!r}, {str(KREC)!r})\n"
)
(pkg / "__init__.py").write_text(init)
(ws / "sub" / "cmd.py").write_text(
    SELFCHECK
    + f"selfcheck({str(outside)!r} + '/cmd-' + str(__import__('os').getpid()), {HOST_IPC!r}, {str(CREC)!r})\n"
    + "import os, torch, torch.multiprocessing as mp\n"
    "x = torch.ones(1 << 20, device='cuda')\n"
    "for _ in range(3):\n    y = (x * 2).sum()\n"
    "torch.cuda.synchronize()\n"
    "q = mp.get_context('spawn').SimpleQueue()\n"  # a semaphore in /dev/shm (private here)
    "print('CMD ok', float(y), 'pid', os.getpid(), 'procs', sorted(p for p in os.listdir('/proc') if p.isdigit()))\n"
)
e = Engine(Config(workspace=ws, timeout_s=120))
t0 = time.time()
outcomes = {}


def step(name, f, nsys_inside=False):
    policy.CONFINED_PROFILERS = ("ncu", "nsys") if nsys_inside else ("ncu",)
    t = time.time()
    try:
        r = f()
        outcomes[name] = r
        print(f"== {name}: OK {time.time() - t:.1f}s {getattr(r, 'profile_dir', '')}", flush=True)
    except Exception as ex:  # noqa: BLE001
        print(f"== {name}: FAILED {time.time() - t:.1f}s {type(ex).__name__}: {str(ex)[:1500]}", flush=True)
    for rec in (KREC, CREC):  # what each confined process of the step saw
        if rec.exists():
            for ln in rec.read_text().splitlines():
                print("     ", ln[:400], flush=True)
            rec.unlink()


def kernel(mode, inside=False):
    return step(
        f"{mode} probe_add{' (nsys confined)' if inside else ''}",
        lambda: e.profile(str(pkg), version="v0", params={"n": 1 << 20}, mode=mode),
        inside,
    )


def command(mode, inside=False):
    return step(
        f"command {mode}{' (nsys confined)' if inside else ''}",
        lambda: e.profile_command(["python", "cmd.py"], cwd="sub", mode=mode),
        inside,
    )


kernel("event")
cubins = list(Path.home().glob(".cache/kprof-mcp/confined/*/triton/**/*.cubin"))
print("triton cubins compiled in the confined cache (ptxas under the filter):", len(cubins), flush=True)
print("pool:", e.pool.status() if e.pool else None, flush=True)
kernel("annotation")
kernel("ncu")
kernel("nsys")
if INSIDE:
    kernel("nsys", inside=True)
command("event")
command("ncu")
command("nsys")
if INSIDE:
    command("nsys", inside=True)
e.close()


def figures(o):
    r = o.result
    stages = [
        (
            s.name,
            len(s.timing.samples_ns),
            round(statistics.median(s.timing.samples_ns)) if s.timing.samples_ns else None,
        )
        for s in r.stages
    ]
    tl = r.timeline or {}
    kern = [
        {k: v for k, v in d.items() if isinstance(v, (int, float, str))}
        for d in (tl.get("kernel_summary") or [])[:3]
    ]
    return (
        f"stages(name, n, median ns)={stages} warnings={[w.kind for w in r.warnings]} "
        f"iterations={tl.get('iterations')} busy%={tl.get('gpu_busy_pct') and round(tl['gpu_busy_pct'], 1)} "
        f"kernels={str(kern)[:600]}"
    )


print("# figures", flush=True)
for name, o in outcomes.items():
    print(f"{name}: {figures(o)}", flush=True)
print("outside written:", sorted(os.listdir(outside)), flush=True)
print(f"total {time.time() - t0:.1f}s", flush=True)
sys.stdout.flush()
os._exit(0)

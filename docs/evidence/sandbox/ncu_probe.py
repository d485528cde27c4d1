"""Why a Landlock-confined kernel child behind Nsight Compute hung (issue 38, gpu-2026-11-26.log): ncu
profiles a tiny CUDA program under kprof's own kernel policy (``sandbox.policy.kernel_policy`` with
ncu's prefix), then under the same policy with one more place writable each time, then unconfined.
Each variant has 90 s; one line per variant: rc, seconds, the end of its output.

    python docs/evidence/sandbox/ncu_probe.py     # on the GPU machine, from the repository root
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kprof_mcp.sandbox import abi, available
from kprof_mcp.sandbox.policy import KernelScope, confined_env, jobs_dir, kernel_policy, write_policy

NCU = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
ws = Path(tempfile.mkdtemp(prefix="ncuprobe-ws-"))
out = ws / "out"
out.mkdir()
prog = ws / "p.py"
prog.write_text(
    "import torch\nx = torch.ones(1 << 10, device='cuda')\nprint('RAN', float((x * 2).sum()), flush=True)\n"
)
prefix = [NCU, "--metrics", "sm__cycles_elapsed.avg", "--target-processes", "all", "-f", "-o"]
scope = KernelScope(ws, out)
jobs = jobs_dir(scope)
private = jobs / "private"
private.mkdir(parents=True, exist_ok=True)
scope.cache_dir.mkdir(parents=True, exist_ok=True)
print("landlock abi", abi(), "available", available(), "ncu", NCU, flush=True)


def run(
    label: str,
    extra_write: list[str] | None,
    confined: bool = True,
    extra_read: list[str] | None = None,
    **change,
) -> None:
    rep = out / f"{label}.ncu-rep"
    argv = [*prefix, str(rep), sys.executable, str(prog)]
    env = confined_env(dict(os.environ), private, scope.cache_dir)
    if confined:
        pol = kernel_policy(scope, jobs, prefix)
        pol.write += extra_write or []
        pol.read += extra_read or []
        for k, v in change.items():
            setattr(pol, k, v)
        argv = [sys.executable, "-m", "kprof_mcp.sandbox", str(write_policy(pol)), "--", *argv]
    t = time.time()
    try:
        cp = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=90)
        rc, said = cp.returncode, (cp.stdout + cp.stderr)[:700]
    except subprocess.TimeoutExpired as e:
        rc, said = "timeout", ((e.stdout or b"") + (e.stderr or b""))[-400:]
    print(f"== {label}: rc={rc} {time.time() - t:.1f}s report={rep.exists()} :: {said!r}", flush=True)


def tree() -> set[str]:
    """Every path under the top-level directories a profiler might write (one level down), and /."""
    seen = set()
    for d in ["/", "/tmp", "/var/tmp", "/dev/shm", str(Path.home()), "/run", "/var/run"]:
        try:
            seen |= {os.path.join(d, n) for n in os.listdir(d)}
        except OSError:
            pass
    return seen


before = tree()
run("unconfined", None, confined=False)
print("made by the unconfined run:", sorted(tree() - before), flush=True)
run("kprof_policy", [])
# With its own /proc (private_proc) the child's /proc is a new mount: rules made on the old one do not
# reach it, the one on / does. Without it, which places must be writable?
run("no_private_proc_write_proc", ["/proc"], private_proc=False)
run("no_private_proc_write_dev", ["/dev"], private_proc=False)
run("no_private_proc_write_proc_dev_tmp_sys", ["/proc", "/dev", "/tmp", "/sys"], private_proc=False)
run("private_proc_write_proc_dev_tmp_sys", ["/proc", "/dev", "/tmp", "/sys"])
run("write_everything", ["/"])
print("made by then:", sorted(tree() - before), flush=True)

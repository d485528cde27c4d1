"""A Landlock-confined kernel child or command behind Nsight Compute / Nsight Systems (issue 38).

The first probe (ncu-probe-h200-2026-11-26*.log) found that the profiled target — the profiler's child,
another pid than the confined process — fails CUDA init (error 304) unless it may write beneath /proc,
and that no rule made on the machine's /proc reaches a /proc the child mounts itself. kprof now runs the
profiler inside the confinement with its target and grants write beneath /proc only on the job's own
/proc whose every entry but the processes' directories is bound read-only (root, in a network
namespace of its own), or to another user than root (``kprof_mcp.sandbox.__main__.proc_rights``).

This probe runs a tiny CUDA program behind ncu and nsys under kprof's own policies (``kernel_policy``
and ``command_policy`` with the profiler's prefix), once without the /proc grant, and unconfined. The
program reports what it may write of /proc (its own comm, a sysctl written back unchanged, every file
at /proc's top opened for writing and never written) and whether TCP connects. One line per variant.

    python docs/evidence/sandbox/ncu_probe.py            # on the GPU machine, from the repository root
    python docs/evidence/sandbox/ncu_probe.py --nonroot  # the same as another user (kernel policy only)
    python docs/evidence/sandbox/ncu_probe.py nsys       # one profiler only
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
from kprof_mcp.sandbox.policy import (
    KernelScope,
    command_policy,
    confined_env,
    jobs_dir,
    kernel_policy,
    write_policy,
)
from kprof_mcp.tools import nsys as nsys_tool

NCU = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
NSYS = nsys_tool.check_nsys().path
nonroot = "--nonroot" in sys.argv
only = [a for a in sys.argv[1:] if a in ("ncu", "nsys")]  # e.g. `... ncu_probe.py nsys`: that tool only
ws = Path(tempfile.mkdtemp(prefix="ncuprobe-ws-"))
out = ws / "out"
out.mkdir()
prog = ws / "p.py"
prog.write_text(
    """import errno, os, socket, threading
def report(name, f):
    try:
        f()
        return name + "=done"
    except OSError as e:
        return name + "=" + errno.errorcode.get(e.errno, str(e.errno))
import torch
x = torch.ones(1 << 10, device='cuda')
said = ["RAN", str(float((x * 2).sum()))]
tid = threading.get_native_id()
said.append(report("own_comm", lambda: open(f"/proc/self/task/{tid}/comm", "w").write("probe")))
r = open("/proc/sys/vm/overcommit_ratio").read()
said.append(report("sysctl", lambda: open("/proc/sys/vm/overcommit_ratio", "w").write(r)))
top = set()
for n in os.listdir("/proc"):
    p = "/proc/" + n
    if n.isdigit() or os.path.islink(p) or not os.path.isfile(p) or not os.stat(p).st_mode & 0o200:
        continue
    top.add(report(n, lambda: os.close(os.open(p, os.O_WRONLY))).split("=")[1])
said.append("top_files=" + ",".join(sorted(top)))
said.append(report("tcp", lambda: socket.create_connection(("127.0.0.1", 9), timeout=2)))
said.append("pids=%d" % sum(n.isdigit() for n in os.listdir("/proc")))
print(" ".join(said), flush=True)
"""
)
scope = KernelScope(ws, out)
jobs = jobs_dir(scope)
private = jobs / "private"
private.mkdir(parents=True, exist_ok=True)
scope.cache_dir.mkdir(parents=True, exist_ok=True)
print(
    "uid", os.geteuid(), "landlock abi", abi(), "available", available(), "ncu", NCU, "nsys", NSYS, flush=True
)


def prefix_of(tool: str, scratch: Path) -> list[str]:
    if tool == "ncu":
        return [NCU, "--metrics", "sm__cycles_elapsed.avg", "--target-processes", "all"]
    return nsys_tool.profile_prefix(NSYS, scratch / "timeline")


def run(label: str, tool: str, who: str | None = "kernel", **change) -> None:
    """``who``: the policy (kernel child, command) or None (unconfined)."""
    scratch = Path(tempfile.mkdtemp(prefix="kprof-run-"))  # the engine's scratch, where the report goes
    prefix = prefix_of(tool, scratch)
    if tool == "ncu":
        prefix += ["--clock-control", "base", "--force-overwrite", "--export", str(scratch / "profile")]
    argv = [*prefix, sys.executable, str(prog)]
    env = confined_env(dict(os.environ), private, scope.cache_dir)
    if who is not None:
        if who == "kernel":
            pol = kernel_policy(scope, jobs, prefix)  # (kprof itself runs nsys outside for now)
        else:
            pol = command_policy(ws, ws, out / "event" / "command", jobs, prefix, out_root=out, inside=True)
        for k, v in change.items():
            setattr(pol, k, v)
        argv = [sys.executable, "-m", "kprof_mcp.sandbox", str(write_policy(pol)), "--", *argv]
    t = time.time()
    try:
        cp = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=90, cwd=ws)
        rc, text = cp.returncode, cp.stdout + cp.stderr
    except subprocess.TimeoutExpired as e:
        rc, text = "timeout", str((e.stdout or b"") + (e.stderr or b""))
    ran = [ln for ln in text.splitlines() if ln.startswith("RAN")]
    errs = [ln for ln in text.splitlines() if "Error" in ln or "error" in ln or "kprof sandbox" in ln]
    reports = sorted(p.name for p in scratch.iterdir())
    print(f"== {label}: rc={rc} {time.time() - t:.1f}s reports={reports} :: {ran or errs[-3:]}", flush=True)


def tree() -> set[str]:
    """Every path under the top-level directories a profiler might write (one level down)."""
    seen = set()
    for d in ["/", "/tmp", "/var/tmp", "/dev/shm", str(Path.home()), "/run", "/var/run"]:
        try:
            seen |= {os.path.join(d, n) for n in os.listdir(d)}
        except OSError:
            pass
    return seen


before = tree()
for tool in ("ncu", "nsys"):
    if tool == "nsys" and NSYS is None:
        print("== nsys: not usable here", flush=True)
        continue
    if only and tool not in only:
        continue
    if not nonroot:
        run(f"{tool}_unconfined", tool, None)
    run(f"{tool}_kernel_policy", tool)
    if not nonroot:
        run(f"{tool}_kernel_policy_without_proc_write", tool, proc_write=False)
        run(f"{tool}_command_policy", tool, "command")
print(
    "made outside kprof-run-*/ncuprobe-*/kprof-* by then:",
    sorted(p for p in tree() - before if not Path(p).name.startswith(("kprof-", "ncuprobe-"))),
    flush=True,
)

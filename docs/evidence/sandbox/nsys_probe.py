"""Nsight Systems confined with its target under kprof's final policies (issue 38): nsys and a tiny CUDA
program under the kernel policy and a command's policy (nsys inside, TCP in the job's own network
namespace, the report's directory, /proc, and the job's own directory bound over /tmp/nvidia: the policy's
``tmp_mounts``), a control without that mount (expected: "Cannot create CUDA config file"), and an
unconfined run that shows what nsys writes beneath the machine's /tmp. One line per variant: rc, seconds,
reports, then the end of its output and what the job's own /tmp/nvidia holds afterwards.

    python docs/evidence/sandbox/nsys_probe.py     # on the GPU machine (root), .nsyslibs on LD_LIBRARY_PATH

Verdict line at the end: nsys may join CONFINED_PROFILERS when both final variants recorded a timeline.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kprof_mcp.sandbox.policy import (
    KernelScope,
    command_policy,
    confined_env,
    jobs_dir,
    kernel_policy,
    write_policy,
)
from kprof_mcp.tools import nsys as nsys_tool

NSYS = nsys_tool.check_nsys().path
ws = Path(tempfile.mkdtemp(prefix="nsysprobe-ws-"))
out = ws / "out"
out.mkdir()
prog = ws / "p.py"
prog.write_text("import torch\nx = torch.ones(1 << 10, device='cuda')\nprint('RAN', float((x * 2).sum()))\n")
scope = KernelScope(ws, out)
jobs = jobs_dir(scope)
private = jobs / "private"
private.mkdir(parents=True, exist_ok=True)
scope.cache_dir.mkdir(parents=True, exist_ok=True)
print("nsys", NSYS, "uid", os.geteuid(), "HOME", os.environ.get("HOME"), flush=True)


def tree(root: str, depth: int = 3) -> set[str]:
    found = set()
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath.count(os.sep) - root.count(os.sep) >= depth:
            dirnames[:] = []
        found.update(os.path.join(dirpath, n) for n in dirnames + filenames)
    return found


def run(label: str, who: str | None, mounts: bool = True) -> bool:
    scratch = Path(tempfile.mkdtemp(prefix="kprof-run-"))
    prefix = nsys_tool.profile_prefix(NSYS, scratch / "timeline")
    argv = [*prefix, sys.executable, str(prog)]
    env = confined_env(dict(os.environ), private, scope.cache_dir)
    pol = None
    if who == "kernel":
        pol = kernel_policy(scope, jobs, prefix)
    elif who == "command":
        req = Path(tempfile.mkdtemp(prefix="kprof-cmd-"))
        pol = command_policy(ws, ws, out / "nsys" / "command", req, prefix, out_root=out, inside=True)
        (out / "nsys" / "command").mkdir(parents=True, exist_ok=True)
        env = confined_env(dict(os.environ), req / "private")
    if pol is not None:
        pol.outputs = [str(scratch)]  # the report's directory (as the runner grants it)
        if not mounts:
            pol.tmp_mounts = {}
        argv = [sys.executable, "-m", "kprof_mcp.sandbox", str(write_policy(pol)), "--", *argv]
    before = tree("/tmp")
    t = time.time()
    try:
        cp = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=90, cwd=ws)
        rc, text = cp.returncode, cp.stdout + cp.stderr
    except subprocess.TimeoutExpired as e:
        rc, text = "timeout", str((e.stdout or b"") + (e.stderr or b""))
    reports = sorted(p.name for p in scratch.iterdir())
    print(f"== {label}: rc={rc} {time.time() - t:.1f}s reports={reports}", flush=True)
    for ln in [ln for ln in text.splitlines() if ln.strip()][-6:]:
        print("     ", ln[:200], flush=True)
    if pol is None:
        new = sorted(p for p in tree("/tmp") - before if "kprof-run-" not in p and "nsysprobe" not in p)
        print("      new beneath /tmp:", new[:20], flush=True)
    for target, own in (pol.tmp_mounts if pol else {}).items():
        print(f"      {target} (the job's own {own}):", sorted(tree(own))[:20], flush=True)
    return rc == 0 and any(r.endswith(".nsys-rep") for r in reports)


run("unconfined", None)
ok = [run("kernel_policy (final)", "kernel"), run("command_policy inside (final)", "command")]
run("kernel_policy without tmp_mounts (control)", "kernel", mounts=False)
print("VERDICT:", "nsys may join CONFINED_PROFILERS" if all(ok) else "nsys stays outside", ok, flush=True)

"""Why Nsight Systems stops inside kprof's confinement ("Cannot create CUDA config file", issue 38): nsys
and a tiny CUDA program under the kernel policy with nsys inside (as ncu runs now), then with one more place
writable each time, then unconfined. One line per variant: rc, seconds, reports, the end of its output.

    python docs/evidence/sandbox/nsys_probe.py     # on the GPU machine, .nsyslibs on LD_LIBRARY_PATH
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kprof_mcp.sandbox.policy import KernelScope, confined_env, jobs_dir, kernel_policy, write_policy
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


def run(
    label: str, extra_write: list[str] | None, confined: bool = True, env_change: dict | None = None
) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="kprof-run-"))
    prefix = nsys_tool.profile_prefix(NSYS, scratch / "timeline")
    argv = [*prefix, sys.executable, str(prog)]
    env = confined_env(dict(os.environ), private, scope.cache_dir)
    env.update(env_change or {})
    if confined:
        pol = kernel_policy(scope, jobs, prefix)
        pol.write += list(extra_write or [])
        pol.outputs = [str(scratch)]  # the report's directory (as the runner grants it)
        argv = [sys.executable, "-m", "kprof_mcp.sandbox", str(write_policy(pol)), "--", *argv]
    t = time.time()
    try:
        cp = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=90, cwd=ws)
        rc, text = cp.returncode, cp.stdout + cp.stderr
    except subprocess.TimeoutExpired as e:
        rc, text = "timeout", str((e.stdout or b"") + (e.stderr or b""))
    lines = [ln for ln in text.splitlines() if ln.strip()]
    print(
        f"== {label}: rc={rc} {time.time() - t:.1f}s reports={sorted(p.name for p in scratch.iterdir())}",
        flush=True,
    )
    for ln in lines[-6:]:
        print("     ", ln[:200], flush=True)


run("unconfined", None, confined=False)
run("kernel_policy", [])
run("plus_tmp", ["/tmp"])
run("plus_tmp_tmpdir_unset", ["/tmp"], env_change={"TMPDIR": "/tmp"})
run("plus_home_var", [os.environ.get("HOME", "/root"), "/var"])
run("plus_dev_shm_run", ["/dev/shm", "/run"])
run("write_everything", ["/"])

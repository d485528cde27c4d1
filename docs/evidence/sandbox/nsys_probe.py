"""Nsight Systems confined with its target under kprof's final policies (issue 38): nsys and a tiny CUDA
program (a kernel or two in an NVTX range) under the kernel policy and a command's policy (nsys inside, TCP
in the job's own network namespace, the report's directory, /proc, a tmpfs of the job's own over /tmp with
the policy's paths beneath it bound back, ``tmp_mounts``, and the seccomp filter letting the chmod family through,
``chmod_allowed``); controls without that cover (expected: "Cannot create CUDA config file"), with the filter
refusing chmod (expected: a report that holds nothing), without the IPC namespace, without the filter; and
an unconfined run whose writes beneath the machine's /tmp and /dev/shm inotify shows. One line per variant:
rc, seconds, what the report holds (kernels, CUDA runtime calls, NVTX ranges: its SQLite export), then the
end of nsys's output, what its target saw of its confinement (selfcheck.py) and, where watched, inotify's
events beneath the machine's /tmp.

    python docs/evidence/sandbox/nsys_probe.py     # on the GPU machine (root), .nsyslibs on LD_LIBRARY_PATH
    NSYS_PROBE=filter python docs/evidence/sandbox/nsys_probe.py   # which of the filter's calls nsys needs

Verdict line at the end: nsys may join CONFINED_PROFILERS when both final variants recorded what the
unconfined run records and their target was confined (a write outside refused, the seccomp filter
installed, an IPC namespace of its own, nsys among its ancestors).
"""

from __future__ import annotations

import ctypes
import json
import os
import sqlite3
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from selfcheck import CODE as SELFCHECK

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
outside = Path(tempfile.mkdtemp(prefix="nsysprobe-outside-", dir=Path.home()))  # not beneath /tmp
HOST_IPC = os.readlink("/proc/self/ns/ipc")
prog.write_text(
    SELFCHECK
    + "import torch\ntorch.cuda.nvtx.range_push('probe')\nx = torch.ones(1 << 10, device='cuda')\n"
    + "print('RAN', float((x * 2).sum()))\ntorch.cuda.nvtx.range_pop()\n"
    + f"selfcheck({str(outside / 'target')!r} + str(__import__('os').getpid()), {HOST_IPC!r})\n"
)
# The supervisor with a part of it left out (controls): ``patch`` (Python run in it before main) replaces
# a piece of kprof_mcp.sandbox.__main__ (m) or .seccomp (s).
SUPERVISOR = (
    "import sys, kprof_mcp.sandbox.__main__ as m, kprof_mcp.sandbox.seccomp as s\n"
    "exec(sys.argv.pop(1))\n"
    "sys.exit(m.main(sys.argv[1:]))\n"
)
NO_IPC = "m._own_ipc = lambda p: False"
NO_FILTER = "s.install = lambda **k: None"
scope = KernelScope(ws, out)
jobs = jobs_dir(scope)
private = jobs / "private"
private.mkdir(parents=True, exist_ok=True)
scope.cache_dir.mkdir(parents=True, exist_ok=True)
print("nsys", NSYS, "uid", os.geteuid(), "HOME", os.environ.get("HOME"), flush=True)


class Watch:
    """inotify on /tmp, every directory beneath /tmp/nvidia and /dev/shm (the probe's side, unconfined):
    what is made, written, renamed, deleted or has its attributes changed (chmod, chown, utime, xattr)."""

    MASKS = {0x2: "modify", 0x4: "ATTRIB", 0x8: "close_write", 0x40: "moved_from", 0x80: "moved_to",
             0x100: "create", 0x200: "delete"}  # fmt: skip

    def __init__(self):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        self.dirs: dict[int, str] = {}
        self.events: list[str] = []
        self.stop = threading.Event()
        for root in ("/tmp", "/dev/shm"):
            self.add(root)
        for d, _, _ in os.walk("/tmp/nvidia"):
            self.add(d)
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def add(self, d: str) -> None:
        wd = self.libc.inotify_add_watch(self.fd, d.encode(), sum(self.MASKS))
        if wd >= 0:
            self.dirs[wd] = d

    def loop(self) -> None:
        import select

        while not self.stop.is_set():
            if not select.select([self.fd], [], [], 0.05)[0]:
                continue
            try:
                buf = os.read(self.fd, 65536)
            except BlockingIOError:
                continue
            i = 0
            while i + 16 <= len(buf):
                wd, mask, _, n = struct.unpack_from("iIII", buf, i)
                name = buf[i + 16 : i + 16 + n].rstrip(b"\0").decode(errors="replace")
                i += 16 + n
                path = os.path.join(self.dirs.get(wd, "?"), name)
                if "kprof-" in path or "nsysprobe" in path:
                    continue
                if mask & 0x40000100 == 0x40000100 and path.startswith("/tmp/nvidia"):
                    for d, _, files in os.walk(path):  # a directory made beneath /tmp/nvidia: watched too
                        self.add(d)
                        self.events += [f"found {d}/{f}" for f in files if d != path or f != name]
                what = "+".join(v for k, v in self.MASKS.items() if mask & k)
                ev = f"{what} {path}{'/' if mask & 0x40000000 else ''}"
                if not self.events or self.events[-1] != ev:
                    self.events.append(ev)

    def close(self) -> list[str]:
        self.stop.set()
        self.thread.join()
        os.close(self.fd)
        return self.events


def recorded(rep: Path) -> str:
    """What the report holds: its kernels, CUDA runtime calls and NVTX ranges (SQLite export)."""
    try:
        db = nsys_tool.export_sqlite(NSYS, rep, rep.with_suffix(".sqlite"), timeout_s=60)
    except nsys_tool.NsysError as e:
        return f"export failed: {str(e)[-200:]}"
    con = sqlite3.connect(db)
    n = {}
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"):
        try:
            n[table] = con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        except sqlite3.Error:
            n[table] = 0
    con.close()
    return f"kernels={n['CUPTI_ACTIVITY_KIND_KERNEL']} runtime_calls={n['CUPTI_ACTIVITY_KIND_RUNTIME']} nvtx={n['NVTX_EVENTS']}"


def run(
    label: str,
    who: str | None,
    mounts: bool = True,
    patch: str = "",
    write: tuple = (),
    network: bool = False,
    watch: bool = False,
    allow_chmod: bool | None = None,
) -> bool:
    """One nsys run: unconfined (``who`` None) or under the kernel's or a command's policy; ``mounts``:
    the policy's tmp_mounts kept; ``patch``: the supervisor with a part left out; ``write``: more paths
    granted; ``network``: the machine's network namespace; ``watch``: inotify's events printed."""
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
            pol.tmp_mounts = []
        pol.write += list(write)
        pol.network = pol.network or network
        if allow_chmod is not None:
            pol.chmod_allowed = allow_chmod  # False: the filter refuses nsys's chmod (EPERM)
        sup = ["-c", SUPERVISOR, patch] if patch else ["-m", "kprof_mcp.sandbox"]
        argv = [sys.executable, *sup, str(write_policy(pol)), "--", *argv]
    w = Watch() if watch else None
    t = time.time()
    try:
        cp = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=90, cwd=ws)
        rc, text = cp.returncode, cp.stdout + cp.stderr
    except subprocess.TimeoutExpired as e:
        rc, text = "timeout", str((e.stdout or b"") + (e.stderr or b""))
    events = w.close() if w else []
    rep = scratch / "timeline.nsys-rep"
    data = recorded(rep) if rep.is_file() else "no report"
    print(f"== {label}: rc={rc} {time.time() - t:.1f}s {data}", flush=True)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    skip = ("SELFCHECK", "Generated:", "Collecting data", "Processing events", "Saving temporary")
    for ln in [ln for ln in lines if not ln.startswith(skip) and "%]" not in ln and "nsys-rep" not in ln][
        -12:
    ]:
        print("     ", ln[:220], flush=True)
    checks = [ln for ln in lines if ln.startswith("SELFCHECK")]
    for ln in checks:
        print("     ", ln[:300], flush=True)
    for ev in events[:80]:
        print("      inotify:", ev, flush=True)
    got = [json.loads(c.split(" ", 1)[1]) for c in checks]
    confined = bool(got) and all(
        g["outside"] == "EACCES"
        and g["seccomp"] == "2"
        and g["own_ipc"]
        and any("nsys" in a for a in g["ancestors"])
        for g in got
    )
    if pol is not None:
        print(
            f"      target confined (outside EACCES, seccomp 2, own IPC, behind nsys): {confined}", flush=True
        )
    return rc == 0 and "kernels=0" not in data and "kernels=" in data and (pol is None or confined)


FAMILIES = {
    "chmod": "chmod,fchmod,fchmodat,fchmodat2",
    "chown": "chown,fchown,lchown,fchownat",
    "utime": "utime,utimes,futimesat,utimensat",
    "xattr": "setxattr,lsetxattr,fsetxattr,removexattr,lremovexattr,fremovexattr,setxattrat,removexattrat",
}
if os.environ.get("NSYS_PROBE") == "filter":  # which of the filter's calls nsys needs, and on which side
    run("unconfined", None)
    for fam, calls in FAMILIES.items():
        drop = f"for k in {calls!r}.split(','):\n    s._ARCHES['x86_64'][1].pop(k, None)"
        run(f"kernel_policy, the filter without the {fam} family (control)", "kernel", patch=drop, allow_chmod=False)
    filtered = ws / "p_filtered.py"  # the target installs the filter itself: nsys unfiltered
    filtered.write_text("from kprof_mcp.sandbox import seccomp\nseccomp.install()\n" + prog.read_text())
    prog = filtered
    run(
        "kernel_policy, the filter in the target only (nsys unfiltered)",
        "kernel",
        patch=NO_FILTER,
        allow_chmod=False,
    )
    sys.exit(0)
run("unconfined", None)
ok = [
    run("kernel_policy (final; the machine's /tmp watched)", "kernel", watch=True),
    run("command_policy inside (final)", "command"),
]
run("kernel_policy without tmp_mounts (control)", "kernel", mounts=False)
for label, kw in (
    ("the filter refusing chmod (control)", {"allow_chmod": False}),
    ("no IPC namespace", {"patch": NO_IPC}),
    ("no seccomp filter", {"patch": NO_FILTER}),
):
    run(f"kernel_policy, {label} (control)", "kernel", **kw)
print("outside written:", sorted(os.listdir(outside)), flush=True)
print("VERDICT:", "nsys may join CONFINED_PROFILERS" if all(ok) else "nsys stays outside", ok, flush=True)

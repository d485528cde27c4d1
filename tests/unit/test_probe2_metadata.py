"""Issue 38, the independent probe (row 5): Landlock has no right for chmod, chown or utime, and a
child of a root server owns root's files: a confined command set the setuid bit on an outside
root-owned binary, chmod 000'ed an outside file, changed its times. The supervisor now installs a
seccomp filter (kprof_mcp/sandbox/seccomp.py) that refuses them with EPERM. Through the real
supervisor (python -m kprof_mcp.sandbox) on the CPU; what the job still does inside (create, write,
rename, mkdir with a mode) keeps working."""

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kprof_mcp import sandbox
from kprof_mcp.sandbox import seccomp

ROOT = Path(__file__).resolve().parents[2]
needs_landlock = pytest.mark.skipif(not sandbox.available(), reason="no Landlock (ABI 3+) on this kernel")

PROBE = """
import ctypes, os, sys
victim, tool, inside = sys.argv[1:4]
libc = ctypes.CDLL(None, use_errno=True)
out = {}
def attempt(name, f):
    try:
        f()
        out[name] = "done"
    except OSError as e:
        out[name] = e.errno
attempt("chmod_000", lambda: os.chmod(victim, 0))
attempt("chmod_setuid", lambda: os.chmod(tool, 0o104755))
attempt("utime", lambda: os.utime(victim, (1, 1)))
attempt("chown", lambda: os.chown(victim, 1, 1))
attempt("lchown", lambda: os.lchown(victim, 1, 1))
attempt("setxattr_user", lambda: os.setxattr(victim, "user.kprobe", b"x"))
attempt("setxattr_acl", lambda: os.setxattr(victim, "system.posix_acl_access", bytes.fromhex("02000000010006000000000004000400000000002000040000000000")))
attempt("removexattr", lambda: os.removexattr(victim, "user.kprobe"))
def fchmod():  # a readable system file (the interpreter), to its own mode: a no-op if let through
    fd = os.open(os.path.realpath(sys.executable), os.O_RDONLY)
    try:
        os.fchmod(fd, os.fstat(fd).st_mode & 0o7777)
    finally:
        os.close(fd)
attempt("fchmod_readonly_fd", fchmod)
# fchmodat2 (Linux 6.6) by number, as a libc without a wrapper would
attempt("fchmodat2", lambda: (libc.syscall(452, -100, victim.encode(), 0, 0) == 0) or (_ for _ in ()).throw(OSError(ctypes.get_errno(), "")))
# inside: what a job does still works
os.makedirs(os.path.join(inside, "d"), mode=0o755)
with open(os.path.join(inside, "d", "f.tmp"), "w") as f:
    f.write("x")
os.replace(os.path.join(inside, "d", "f.tmp"), os.path.join(inside, "d", "f"))
attempt("chmod_inside", lambda: os.chmod(os.path.join(inside, "d", "f"), 0o600))
print(out)
sys.exit(0)
"""


@needs_landlock
def test_metadata_outside_is_refused(tmp_path):
    allowed, victim_dir = tmp_path / "allowed", tmp_path / "victim"
    (allowed / "tmp").mkdir(parents=True)
    victim_dir.mkdir()
    victim, tool = victim_dir / "secret.txt", victim_dir / "tool"
    victim.write_text("s")
    victim.chmod(0o644)
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    before = {p: os.stat(p) for p in (victim, tool)}
    policy = sandbox.command_policy(allowed, allowed, allowed / "out" / "event" / "command", allowed / "tmp")
    pf = tmp_path / "policy.json"
    pf.write_text(policy.to_json())
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cp = subprocess.run(
        sandbox.wrap(
            pf, [sys.executable, "-c", textwrap.dedent(PROBE), str(victim), str(tool), str(allowed / "tmp")]
        ),
        env=env,
        cwd=allowed,
        timeout=60,
        capture_output=True,
        text=True,
    )
    assert cp.returncode == 0, cp.stderr
    out = eval(cp.stdout.strip().splitlines()[-1])  # noqa: S307 — our own probe's dict
    for name in (
        "chmod_000",
        "chmod_setuid",
        "utime",
        "chown",
        "lchown",
        "fchmod_readonly_fd",
        "fchmodat2",
        "setxattr_user",
        "setxattr_acl",
        "removexattr",
    ):
        assert out[name] == 1, (name, out)  # EPERM
    assert out["chmod_inside"] == 1  # every path alike: seccomp sees no paths
    for p, st in before.items():
        now = os.stat(p)
        assert (now.st_mode, now.st_uid, now.st_mtime_ns) == (st.st_mode, st.st_uid, st.st_mtime_ns)
        assert os.listxattr(p) == []
    assert not stat.S_ISUID & os.stat(tool).st_mode
    assert (allowed / "tmp" / "d" / "f").read_text() == "x"


def test_the_filter_program_jumps_to_its_deny():
    for machine in ("x86_64", "aarch64"):
        prog = seccomp.program(machine)
        deny = len(prog) - 1
        assert prog[deny] == (0x06, 0, 0, 0x00050000 | 1) and prog[deny - 1] == (0x06, 0, 0, 0x7FFF0000)
        col = 0 if machine == "x86_64" else 1
        bound = {v[col] for v in seccomp.BOUND.values()}
        # the checks by call number (before ioctl's): each refused call jumps to the deny when true;
        # clone3 to its ENOSYS, the bound calls to their argument checks
        # (tests/unit/test_probe5_seccomp.py), ioctl on to its request (tests/unit/test_seccomp_uring.py)
        ioctl = next(i for i, x in enumerate(prog) if i > 3 and x[0] == 0x15 and x[1] == 0)
        assert ioctl + 1 + prog[ioctl][2] == deny - 1
        by_nr = [(i, x) for i, x in enumerate(prog[:ioctl]) if x[0] in (0x15, 0x35) and i > 1]
        refused = [(i, x) for i, x in by_nr if x[3] not in bound and x[3] != 435]
        assert refused and all(i + 1 + x[1] == deny for i, x in refused)
        clone3 = next(i for i, x in by_nr if x[3] == 435)
        assert prog[clone3 + 1 + prog[clone3][1]] == (0x06, 0, 0, 0x00050000 | 38)
    assert "fchmodat2" in seccomp.refused() or not seccomp.refused()

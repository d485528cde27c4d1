"""Issue 38, the fourth probe, P4-3 and P4-4 (docs/evidence/sandbox/probe-2026-11-26-fourth.md): the
seccomp filter refused setxattr(2), but io_uring's IORING_OP_SETXATTR set an ACL and a user.* attribute
on files outside by path (no filter sees an io_uring op), and ioctl(FS_IOC_SETFLAGS) on a read-only fd
set inode flags (sync, nodump, noatime) on a file the job may only read. The filter now refuses
io_uring_setup/enter/register, file_setattr and the flag-setting ioctl requests (by the request's low
32 bits), and lets every other ioctl through. Each case runs the probe's own attack file (copied into the
job's workspace, as the probe did) through the real supervisor, ``python -m kprof_mcp.sandbox``."""

import array
import ctypes
import dataclasses
import errno
import fcntl
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kprof_mcp import sandbox
from kprof_mcp.sandbox import seccomp

ROOT = Path(__file__).resolve().parents[2]
WS = ROOT / "docs" / "evidence" / "sandbox" / "probe4" / "ws"
needs_landlock = pytest.mark.skipif(not sandbox.available(), reason="no Landlock (ABI 3+) on this kernel")
FS_IOC_GETFLAGS, FS_IOC_SETFLAGS = 0x80086601, 0x40086602
IOCTL_NR = {"x86_64": 16, "aarch64": 29}.get(os.uname().machine, 16)


def _flags(path: Path) -> int:
    fd = os.open(path, os.O_RDONLY)
    try:
        buf = array.array("l", [0])
        fcntl.ioctl(fd, FS_IOC_GETFLAGS, buf, True)
        return buf[0]
    finally:
        os.close(fd)


def _confined(tmp_path: Path, argv: list[str], reads: list[Path] = ()) -> subprocess.CompletedProcess:
    """Run ``argv`` (python arguments) confined as a command is: the workspace ``ws`` (the probe's attack
    files copied in), its runs' directory and private tmp writable, ``reads`` added as read rules (an
    operator's PYTHONPATH directory in the probe)."""
    ws = tmp_path / "ws"
    (ws / "tmp").mkdir(parents=True, exist_ok=True)
    for name in ("attack_xattr.py", "uring_xattr.py", "ioctl_flags.py"):
        shutil.copy(WS / name, ws / name)
    policy = sandbox.command_policy(ws, ws, ws / "out" / "event" / "command", ws / "tmp")
    policy = dataclasses.replace(policy, read=[*policy.read, *map(str, reads)])
    pf = tmp_path / "policy.json"
    pf.write_text(policy.to_json())
    cp = subprocess.run(
        sandbox.wrap(pf, [sys.executable, *argv]),
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        cwd=ws,
        timeout=60,
        capture_output=True,
        text=True,
    )
    assert cp.returncode == 0, (cp.stdout, cp.stderr)
    return cp


@needs_landlock
def test_io_uring_xattr_on_an_outside_file_is_refused(tmp_path):
    """P4-3: ``attack_xattr.py FILE``: setxattr(2) EPERM, then the same through io_uring (a user.*
    attribute and an ACL granting uid 65534 rw). Before: ``io_uring ... =0`` and both attributes set."""
    victim_dir = tmp_path / "outside"
    victim_dir.mkdir()
    secret = victim_dir / "secret.txt"
    secret.write_text("s")
    secret.chmod(0o600)
    cp = _confined(tmp_path, ["attack_xattr.py", str(secret), str(victim_dir)])
    lines = [x for x in cp.stdout.splitlines() if x.startswith("KPROBE4")]
    assert len(lines) == 2, cp.stdout
    for line in lines:  # io_uring_setup refused: uring_xattr returns -errno
        assert "setxattr(2)=EPERM" in line and line.endswith(
            "user.kprobe4=-1 io_uring ACL(uid 65534 rw)=-1"
        ), line
    for path in (secret, victim_dir):
        assert os.listxattr(path) == [], path
    assert secret.stat().st_mode & 0o777 == 0o600


@needs_landlock
def test_io_uring_calls_and_file_setattr_answer_eperm(tmp_path):
    victim = tmp_path / "outside" / "f.txt"
    victim.parent.mkdir()
    victim.write_text("x")
    before = _flags(victim)
    code = f"""
    import ctypes, struct
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    def call(*a):
        r = libc.syscall(*a)
        return r if r >= 0 else -ctypes.get_errno()
    params = ctypes.create_string_buffer(120)
    attr = ctypes.create_string_buffer(struct.pack("Q4I", 0xE0, 0, 0, 0, 0), 24)  # sync|noatime|nodump
    print({{
        "setup": call(425, 4, params),
        "enter": call(426, 0, 0, 0, 0, None, 0),
        "register": call(427, 0, 0, None, 0),
        "file_setattr": call(469, -100, {str(victim)!r}.encode(), attr, 24, 0),
    }})
    """
    cp = _confined(tmp_path, ["-c", textwrap.dedent(code)], reads=[victim.parent])
    out = eval(cp.stdout.strip().splitlines()[-1])  # noqa: S307 — our own probe's dict
    assert out == dict.fromkeys(("setup", "enter", "register", "file_setattr"), -errno.EPERM), out
    assert _flags(victim) == before


@needs_landlock
def test_setflags_on_a_read_only_file_is_refused(tmp_path):
    """P4-4: ``ioctl_flags.py FILE`` on a file under a read rule: GETFLAGS works, SETFLAGS (sync, nodump,
    noatime) answers EPERM and the flags stay; the content write was refused already (Landlock)."""
    victim = tmp_path / "pp" / "flagfile.txt"
    victim.parent.mkdir()
    victim.write_text("flags\n")
    before = _flags(victim)
    cp = _confined(tmp_path, ["ioctl_flags.py", str(victim)], reads=[victim.parent])
    assert f"flags {before:#x} -> {before:#x} (errno {errno.EPERM})" in cp.stdout, cp.stdout
    assert f"content write refused as expected: errno {errno.EACCES}" in cp.stdout, cp.stdout
    assert _flags(victim) == before
    assert victim.read_text() == "flags\n"


def _settable(path: Path) -> bool:
    """This filesystem takes FS_IOC_SETFLAGS (nodump) from its owner: the check in the job means something."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, array.array("l", [_flags(path) | 0x40]), False)
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, array.array("l", [_flags(path) & ~0x40]), False)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


@needs_landlock
def test_every_form_of_the_flag_ioctls_is_refused_and_other_ioctls_pass(tmp_path):
    """The request with its high 32 bits set (the kernel drops them: ``unsigned int cmd``), the 32-bit
    compat number and FS_IOC_FSSETXATTR all answer EPERM; GETFLAGS, FIONREAD and FIOCLEX on a pipe work,
    TCGETS on it gets the kernel's own answer (ENOTTY): the job's other ioctls pass."""
    victim = tmp_path / "pp" / "f.txt"
    victim.parent.mkdir()
    victim.write_text("x")
    if not _settable(victim):
        pytest.skip("this filesystem has no FS_IOC_SETFLAGS")
    before = _flags(victim)
    # unconfined, the kernel runs a request whose high half is set as its low half: why the filter
    # compares the low 32 bits only
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    fd, buf = os.open(victim, os.O_RDONLY), ctypes.c_long(0)  # the kernel writes an int
    try:
        assert (
            libc.syscall(
                IOCTL_NR,
                fd,
                ctypes.c_ulong((0xFFFFFFFF << 32) | FS_IOC_GETFLAGS),
                ctypes.byref(buf),
            )
            == 0
        )
        assert buf.value == before
    finally:
        os.close(fd)
    code = f"""
    import array, ctypes, fcntl, os, struct, termios
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    fd = os.open({str(victim)!r}, os.O_RDONLY)
    flags = array.array("l", [0])
    fcntl.ioctl(fd, {FS_IOC_GETFLAGS}, flags, True)
    new = ctypes.c_long(flags[0] | 0xC8)  # sync, nodump, noatime: owner-settable
    fsx = ctypes.create_string_buffer(struct.pack("5I8x", 0xE0, 0, 0, 0, 0), 28)
    def call(req, arg, fd=fd):
        r = libc.syscall({IOCTL_NR}, fd, ctypes.c_ulong(req), arg)
        return r if r >= 0 else -ctypes.get_errno()
    r, w = os.pipe()
    os.write(w, b"abc")
    n = array.array("i", [0])
    fcntl.ioctl(r, termios.FIONREAD, n, True)
    print({{
        "getflags": flags[0],
        "setflags": call(0x40086602, ctypes.byref(new)),
        "setflags_high": call((0xFFFFFFFF << 32) | 0x40086602, ctypes.byref(new)),
        "setflags_high1": call((1 << 32) | 0x40086602, ctypes.byref(new)),
        "setflags32": call(0x40046602, ctypes.byref(new)),
        "fssetxattr": call(0x401C5820, fsx),
        "setversion": call(0x40087602, ctypes.byref(ctypes.c_long(12345))),
        "fionread": n[0],
        "fioclex": call(termios.FIOCLEX, None, w),
        "tcgets_pipe": call(termios.TCGETS, ctypes.create_string_buffer(64), r),  # the kernel's answer
    }})
    """
    cp = _confined(tmp_path, ["-c", textwrap.dedent(code)], reads=[victim.parent])
    out = eval(cp.stdout.strip().splitlines()[-1])  # noqa: S307 — our own probe's dict
    assert out == {
        "getflags": before,
        "setflags": -errno.EPERM,
        "setflags_high": -errno.EPERM,
        "setflags_high1": -errno.EPERM,
        "setflags32": -errno.EPERM,
        "fssetxattr": -errno.EPERM,
        "setversion": -errno.EPERM,
        "fionread": 3,
        "fioclex": 0,
        "tcgets_pipe": -errno.ENOTTY,
    }, out
    assert _flags(victim) == before


def test_the_program_checks_the_ioctl_request_low_half_only():
    for machine, nr in (("x86_64", 16), ("aarch64", 29)):
        prog = seccomp.program(machine)
        allow, deny = len(prog) - 2, len(prog) - 1
        at = next(i for i, x in enumerate(prog) if i > 1 and x[0] == 0x15 and x[1] == 0 and x[3] == nr)
        assert at + 1 + prog[at][2] == allow  # another call: allowed
        assert prog[at + 1] == (0x20, 0, 0, 24)  # seccomp_data.args[1], its low 32 bits
        cmds = prog[at + 2 : at + 2 + len(seccomp.IOCTLS)]
        assert {x[3] for x in cmds} == set(seccomp.IOCTLS.values())
        assert all(x[0] == 0x15 and at + 2 + i + 1 + x[1] == deny for i, x in enumerate(cmds))
        after = at + 2 + len(cmds)  # then to the allow (the bound calls' checks follow)
        assert prog[after][0] == 0x05 and after + 1 + prog[after][3] == allow
        assert not [x for x in prog[4:] if x[0] == 0x20 and x[3] % 8 == 4]  # no check of a high half
        assert {425, 426, 427, 469} <= {x[3] for x in prog[2:at] if x[0] == 0x15}

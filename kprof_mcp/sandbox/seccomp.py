"""A seccomp filter for the confined process: file metadata calls refused with EPERM.

Landlock has no right for ``chmod``, ``chown`` or ``utime``: a confined process may change the mode,
owner and times of any file it owns, wherever it lies, and a child of a root server owns root's files
(issue 38, the independent probe: ``chmod 000`` of an outside file, the setuid bit set on an outside
root-owned binary, ``utime``, ``chmod`` of another workspace and of kprof's cache). The filter refuses
them all, every path alike (seccomp cannot see paths): ``chmod``, ``fchmod``, ``fchmodat``,
``fchmodat2``, the ``chown`` family and the ``utime`` family fail with ``EPERM``, and so do
``setxattr``/``removexattr`` and their variants: an owner may set ``system.posix_acl_access`` (an ACL
is a chmod by other means) and ``user.*`` attributes (the re-run probe set one on an outside file
once chmod was refused). The fourth probe (issue 38, P4-3, P4-4) went round it twice: io_uring's
``IORING_OP_SETXATTR`` set an ACL on the server's home by path, a call no filter sees (``io_uring_setup``,
``io_uring_enter`` and ``io_uring_register`` are refused, as Docker's default profile does: torch's
bundled libuv falls back to epoll without it, Triton's libraries and tools name none of it);
``ioctl(FS_IOC_SETFLAGS)`` on a read-only fd set inode flags on a file the job may only read (the
requests of :data:`IOCTLS` are refused, every other ioctl passes: CUDA's driver lives on ioctl; and
``file_setattr``, the same by path since Linux 6.17). Inside the job that costs little: files are
created with their mode (``open``, ``mkdir``), Python, Triton and torch caches write and rename;
what needs a chmod there (``shutil.copy``'s mode copy, ``Path.touch`` of an existing file, ``chmod +x``
of a built program) fails, and tolerant callers (ld's chmod of its output, filelock's fchmod) go on.
Installed last, after Landlock (which already set ``no_new_privs``), it stays across ``execve`` and
``fork``; a process of another architecture (x32, i386 through ``int 0x80``) is refused or killed
rather than let past it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform

_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
# seccomp(2): SECCOMP_SET_MODE_FILTER with SECCOMP_FILTER_FLAG_SPEC_ALLOW (Linux 4.17). Without the flag a
# kernel whose speculative-store-bypass or spectre_v2_user mitigation is "seccomp" forces SSBD (and STIBP) on
# every filtered process: its loads wait for older stores' addresses, which can slow an interpreter's
# host-bound loop (none on the H200 machine, whose kernel mitigates "via prctl": docs/modes.md). The filter guards
# the file system, not speculation: a process's own side channels are the kernel's default to decide.
# (The "seccomp" default was dropped in Linux 5.16 for "prctl"; older kernels keep it: Phoronix, 2021-11-01.)
_SYS_SECCOMP = {"x86_64": 317, "aarch64": 277}
_SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_SPEC_ALLOW = 1, 4
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K, _JA, _AND_K = 0x20, 0x15, 0x35, 0x06, 0x05, 0x54
_ALLOW, _ERRNO, _KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
_X32_BIT = 0x40000000

# name: syscall number, per architecture (those the architecture has).
_ARCHES = {
    "x86_64": (
        0xC000003E,  # AUDIT_ARCH_X86_64
        {
            "chmod": 90,
            "fchmod": 91,
            "chown": 92,
            "fchown": 93,
            "lchown": 94,
            "utime": 132,
            "utimes": 235,
            "fchownat": 260,
            "futimesat": 261,
            "fchmodat": 268,
            "utimensat": 280,
            "fchmodat2": 452,
            "setxattr": 188,
            "lsetxattr": 189,
            "fsetxattr": 190,
            "removexattr": 197,
            "lremovexattr": 198,
            "fremovexattr": 199,
            "setxattrat": 463,
            "removexattrat": 466,
            "file_setattr": 469,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "shmget": 29,
            "semget": 64,
            "msgget": 68,
        },
    ),
    "aarch64": (
        0xC00000B7,  # AUDIT_ARCH_AARCH64
        {
            "fchmod": 52,
            "fchmodat": 53,
            "fchownat": 54,
            "fchown": 55,
            "utimensat": 88,
            "fchmodat2": 452,
            "setxattr": 5,
            "lsetxattr": 6,
            "fsetxattr": 7,
            "removexattr": 14,
            "lremovexattr": 15,
            "fremovexattr": 16,
            "setxattrat": 463,
            "removexattrat": 466,
            "file_setattr": 469,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "shmget": 194,
            "semget": 190,
            "msgget": 186,
        },
    ),
}
_IOCTL = {"x86_64": 16, "aarch64": 29}
_CLONE3 = 435  # both architectures: answered ENOSYS (glibc then uses clone, whose flags the filter sees)

# Calls that name another process (or the user's every process) by an argument: allowed only on the
# caller itself (issue 38, the fifth probe: P5-1, prlimit(2) of the server's pid set its RLIMIT_CPU
# and the kernel killed it; only the uids are checked, and Landlock has no hook there; P5-4, a raw
# clone(CLONE_PARENT) made the job's child a child of the sandbox's supervisor, out of the warm worker's
# reach). name: (x86_64 nr, aarch64 nr, [(argument, mask, value the masked low 32 bits must have)]).
# pid_t and int arguments are read by the kernel from the low 32 bits only.
_CLONE_PARENT = 0x00008000
BOUND = {
    "prlimit64": (302, 261, [(0, 0xFFFFFFFF, 0)]),  # glibc's getrlimit/setrlimit pass pid 0
    "setpriority": (141, 140, [(0, 0xFFFFFFFF, 0), (1, 0xFFFFFFFF, 0)]),  # PRIO_PROCESS, itself
    "sched_setscheduler": (144, 119, [(0, 0xFFFFFFFF, 0)]),
    "sched_setparam": (142, 118, [(0, 0xFFFFFFFF, 0)]),
    "sched_setattr": (314, 274, [(0, 0xFFFFFFFF, 0)]),
    "ioprio_set": (251, 30, [(0, 0xFFFFFFFF, 1), (1, 0xFFFFFFFF, 0)]),  # IOPRIO_WHO_PROCESS, itself
    "migrate_pages": (256, 238, [(0, 0xFFFFFFFF, 0)]),
    "sched_setaffinity": (203, 122, [(0, 0xFFFFFFFF, 0)]),  # P5-9: the server pinned to one CPU
    "clone": (56, 220, [(0, _CLONE_PARENT, 0)]),  # flags: args[0] on both
}

# ioctl requests refused (the same numbers on both architectures): inode flags set through any fd, a
# read-only one included (only the owner is checked). The kernel reads the request as an unsigned int and
# drops its high 32 bits, so the filter compares the low 32 bits of args[1] alone: a check of the high half
# would let 0xFFFFFFFF_40086602 past it, which the kernel runs as FS_IOC_SETFLAGS.
IOCTLS = {
    "FS_IOC_SETFLAGS": 0x40086602,
    "FS_IOC32_SETFLAGS": 0x40046602,
    "FS_IOC_FSSETXATTR": 0x401C5820,  # XFS_IOC_FSSETXATTR, the same number
    "FS_IOC_SETVERSION": 0x40087602,  # the inode's generation number (ext4 checks only the owner)
    "FS_IOC32_SETVERSION": 0x40047602,
}


class _Filter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    ]


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Filter))]


def refused() -> list[str]:
    """The calls (and ``ioctl`` requests) the filter refuses on this machine's architecture."""
    calls = _ARCHES.get(platform.machine(), (0, {}))[1]
    if not calls:
        return []
    bound = [f"{name} (but on itself)" for name in BOUND if name != "clone"]
    return (
        sorted(calls)
        + ["clone3 (ENOSYS)", "clone with CLONE_PARENT"]
        + bound
        + [f"ioctl {n}" for n in IOCTLS]
    )


# The chmod family: behind Nsight Systems the filter lets these through (``allow``): nsys records nothing
# (no kernel, no CUDA call, no NVTX range) once a chmod of its fails, and nothing either when the calls
# succeed without effect (a no-op: H100, 2026-11-26 10:04 UTC); with the filter without them it records as
# unconfined (docs/evidence/sandbox/nsys-confined-h100-2026-11-26.log). chown, utime and xattr stay refused.
CHMOD = ("chmod", "fchmod", "fchmodat", "fchmodat2")
# SysV IPC objects made or looked up: refused to a job with no IPC namespace of its own (another user than
# root; issue 38, the tenth probe's P10-2: a segment left by a job outlived it, memory no OOM kill frees and
# no memory cgroup charges back, 1 GiB pinned after the job). A job with its own namespace (root) keeps them:
# they die with it. POSIX shared memory (/dev/shm files, what torch, NCCL and CUDA use) is not SysV.
SYSV = ("shmget", "semget", "msgget")


def program(machine: str | None = None, allow: tuple[str, ...] = ()) -> list[tuple[int, int, int, int]]:
    """The BPF program as (code, jt, jf, k): the architecture checked, then each refused number (to
    the deny, EPERM), ``clone3`` (to ENOSYS), each call of :data:`BOUND` (to its check of its
    arguments: all hold, allowed; else the deny), then ``ioctl``'s request (args[1], its low 32 bits)
    against :data:`IOCTLS` (to the deny); the calls of ``allow`` are not in it (they pass, as every
    call and request not named). The last two instructions are the allow and the deny."""
    machine = machine or platform.machine()
    arch, calls = _ARCHES[machine]
    col = 0 if machine == "x86_64" else 1
    nrs = sorted({nr for name, nr in calls.items() if name not in allow})
    cmds = sorted(set(IOCTLS.values()))
    # (code, jt, jf, k) with jump targets by label, resolved once every label's place is known
    body: list[tuple[int, int | str, int | str, int] | str] = []
    if arch == _ARCHES["x86_64"][0]:
        # the x32 ABI's numbers (same audit arch, bit 30 set): refused whole
        body.append((_JGE_K, "deny", 0, _X32_BIT))
    body += [(_JEQ_K, "deny", 0, nr) for nr in nrs]
    body.append((_JEQ_K, "enosys", 0, _CLONE3))
    body += [(_JEQ_K, f"bound:{name}", 0, v[col]) for name, v in BOUND.items() if name not in allow]
    body.append((_JEQ_K, 0, "allow", _IOCTL[machine]))
    body.append((_LD_W_ABS, 0, 0, 16 + 8 * 1))  # seccomp_data.args[1], low half (little-endian)
    body += [(_JEQ_K, "deny", 0, cmd) for cmd in cmds]
    body.append((_JA, 0, 0, "allow"))  # type: ignore[arg-type]
    for name, v in BOUND.items():
        if name in allow:
            continue
        body.append(f"bound:{name}")
        for arg, mask, value in v[2]:
            body.append((_LD_W_ABS, 0, 0, 16 + 8 * arg))
            if mask != 0xFFFFFFFF:
                body.append((_AND_K, 0, 0, mask))
            body.append((_JEQ_K, 0, "deny", value))
        body.append((_JA, 0, 0, "allow"))  # type: ignore[arg-type]
    body += ["enosys", (_RET_K, 0, 0, _ERRNO | errno.ENOSYS)]
    head = [(_LD_W_ABS, 0, 0, 4), (_JEQ_K, 1, 0, arch), (_RET_K, 0, 0, _KILL_PROCESS), (_LD_W_ABS, 0, 0, 0)]
    at: dict[str, int] = {}
    n = len(head)
    for x in body:
        if isinstance(x, str):
            at[x] = n
        else:
            n += 1
    at["allow"], at["deny"] = n, n + 1
    prog = list(head)
    for x in body:
        if isinstance(x, str):
            continue
        code, jt, jf, k = x
        i = len(prog)
        if code == _JA:
            prog.append((code, 0, 0, at[k] - i - 1))  # type: ignore[index]
            continue
        prog.append((code, *(at[j] - i - 1 if isinstance(j, str) else j for j in (jt, jf)), k))  # type: ignore[misc]
    assert all(0 <= x[1] < 256 and 0 <= x[2] < 256 for x in prog)  # BPF's conditional jumps: 8 bits, forward
    return prog + [(_RET_K, 0, 0, _ALLOW), (_RET_K, 0, 0, _ERRNO | errno.EPERM)]


def install(allow: tuple[str, ...] = ()) -> None:
    """Install the filter on this thread (single-threaded, before ``execve``); the calls of ``allow``
    pass. Raises OSError when the kernel refuses it, or on an architecture this module does not know."""
    if platform.machine() not in _ARCHES:
        raise OSError(errno.ENOSYS, f"no seccomp filter for {platform.machine()}")
    insns = program(allow=allow)
    arr = (_Filter * len(insns))(*[_Filter(*x) for x in insns])
    prog = _Prog(len(insns), ctypes.cast(arr, ctypes.POINTER(_Filter)))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"no_new_privs: {os.strerror(e)}")
    libc.syscall.restype = ctypes.c_long
    rc = libc.syscall(
        ctypes.c_long(_SYS_SECCOMP[platform.machine()]),
        ctypes.c_uint(_SECCOMP_SET_MODE_FILTER),
        ctypes.c_uint(_SECCOMP_FILTER_FLAG_SPEC_ALLOW),
        ctypes.byref(prog),
    )
    if rc == 0:
        return
    e = ctypes.get_errno()
    if e not in (errno.EINVAL, errno.ENOSYS):  # a kernel without the flag or the call: the prctl below
        raise OSError(e, f"seccomp filter: {os.strerror(e)}")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"seccomp filter: {os.strerror(e)}")

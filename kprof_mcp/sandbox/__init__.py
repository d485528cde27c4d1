"""The kernel's boundary around code kprof did not write: Landlock, namespaces and a subreaper.

``python -m kprof_mcp.sandbox POLICY.json -- ARGV...`` (:mod:`kprof_mcp.sandbox.__main__`) supervises
one confined process: a user's command (``profile_command``), or a kernel child that imports workspace
kernel packages (the warm worker, a fresh profiling child, the package-describing worker). The runner
puts it in front of ``python -m kprof_mcp.child ...``, and in front of Nsight Compute's prefix when
there is one (``ncu`` with kprof's own arguments: the profiler is confined with its target, in the same
domain and namespaces); Nsight Systems stays outside, in front of the supervisor, until a GPU has run it
under its ready policies (:data:`~kprof_mcp.sandbox.policy.CONFINED_PROFILERS`). The supervisor

1. takes the lifeline (:mod:`kprof_mcp.lifeline`) and becomes a *child subreaper*
   (``PR_SET_CHILD_SUBREAPER``): every process the confined one starts stays its descendant, a
   grandchild that left the session (``setsid``) and whose parent died included;
2. where it may (root), gives the confined process a PID and mount namespace of its own: a fresh
   ``/proc`` that shows only the job's processes (no other process's environment, command line or
   descriptors) and a private ``/dev/shm``;
3. forks the confined process, which drops every capability from its bounding set (no ``mknod``,
   ``chown``, ``chroot`` as root) and restricts itself with Landlock (:func:`restrict`) before
   ``exec``: it writes only what its :class:`~kprof_mcp.sandbox.policy.Policy` grants (see
   :mod:`kprof_mcp.sandbox.policy`) and reads only the workspace, Python and the system; it may not
   signal or trace a process outside its domain nor reach an abstract unix socket outside it (scopes,
   ABI 6), nor bind or connect a TCP socket unless its policy has ``network`` (ABI 4; as root, with a
   namespace, it has a network namespace of its own then too) or ``tcp_inside`` (behind Nsight Systems:
   as root only in a network namespace of its own whose loopback is up), nor reach a pathname unix socket outside
   its write rules (ABI 9 only: below it, such a socket stays reachable);
4. when the process ends, is cancelled (``SIGTERM``) or the server is gone (the lifeline), kills the
   whole subtree (:func:`kprof_mcp.lifeline.kill_tree`) and exits as the process did.

The supervisor itself is not confined (it only waits, walks ``/proc`` and kills). Landlock below ABI
:data:`MIN_ABI` (no ``truncate`` control) counts as missing: the server then refuses
``--allow-commands`` unless the operator also passed ``--unconfined-commands``.
"""

from __future__ import annotations

import ctypes
import os
import stat
from pathlib import Path

from .policy import (  # noqa: F401 — the policies, re-exported
    KernelScope,
    Policy,
    command_env,
    command_policy,
    commands_network,
    confined_env,
    jobs_dir,
    kernel_policy,
    set_commands_network,
    write_policy,
)

# Syscall numbers (the same on x86-64 and arm64) and constants from <linux/landlock.h>.
_SYS_CREATE, _SYS_ADD_RULE, _SYS_RESTRICT = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36
MIN_ABI = 3  # truncate(2) is handled from ABI 3 (Linux 6.2); below it a file outside could be emptied

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
RESOLVE_UNIX = 1 << 16  # ABI 9 (Linux 7.1): connect/sendmsg to a pathname unix socket, by its path
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4: TCP bind/connect (no rule: no port at all)
SCOPE_ABSTRACT_UNIX = 1 << 0  # ABI 6: no connection to an abstract unix socket outside the domain
SCOPE_SIGNAL = 1 << 1  # ABI 6: no signal to a process outside the domain

READ = EXECUTE | READ_FILE | READ_DIR
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE  # the only rights a rule on a file may hold
NO_NODES = ~(MAKE_CHAR | MAKE_BLOCK)  # no write rule lets a device node be created
# A profiler's report directory (the engine's scratch, which the server reads and writes after the job):
# regular files and directories only, no link, FIFO, socket or file moved in from elsewhere (REFER).
OUTPUT_RIGHTS = READ | WRITE_FILE | TRUNCATE | MAKE_REG | MAKE_DIR | REMOVE_FILE | REMOVE_DIR


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _syscall(nr: int, *args) -> int:
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    rc = libc.syscall(ctypes.c_long(nr), *args)
    if rc < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return rc


_abi: int | None = None


def abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing, disabled or filtered out."""
    global _abi
    if _abi is None:
        try:
            _abi = _syscall(_SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
        except (OSError, AttributeError):
            _abi = 0
    return _abi


def available() -> bool:
    """Whether commands can be confined here (Landlock of ABI :data:`MIN_ABI` or later)."""
    return abi() >= MIN_ABI


def _handled(version: int) -> int:
    rights = READ | WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG
    rights |= MAKE_SOCK | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    if version >= 9:
        rights |= RESOLVE_UNIX  # granted with write rights: a socket in a writable directory only
    return rights


def _handled_net(version: int, policy: Policy) -> int:
    """The TCP rights the ruleset handles, with no rule granting a port: none for a policy with
    ``network`` (the operator's ``--commands-network``) or ``tcp_inside`` (the supervisor keeps it in the
    job's own network namespace, or adds :func:`no_tcp_layer`), else bind and connect (ABI 4 or later)."""
    return NET_BIND_TCP | NET_CONNECT_TCP if version >= 4 and not (policy.network or policy.tcp_inside) else 0


def no_tcp_layer() -> None:
    """Confine this thread by one more Landlock layer that refuses every TCP bind and connect (a job
    whose TCP was to stay inside a network namespace of its own that could not be made)."""
    if abi() < 4:
        return
    attr = (ctypes.c_uint64 * 2)(0, NET_BIND_TCP | NET_CONNECT_TCP)
    fd = _syscall(_SYS_CREATE, ctypes.byref(attr), ctypes.c_size_t(16), ctypes.c_uint32(0))
    try:
        restrict(fd)
    finally:
        os.close(fd)


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def build_ruleset(policy: Policy) -> int:
    """A Landlock ruleset's descriptor for ``policy`` (paths that do not exist are left out).
    Raises OSError when Landlock is unusable."""
    version = abi()
    if version < 1:
        raise OSError(95, "Landlock is not available on this kernel")
    handled = _handled(version)
    scoped = SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX if version >= 6 else 0
    attr = (ctypes.c_uint64 * 3)(handled, _handled_net(version, policy), scoped)
    size = 24 if version >= 6 else 16 if version >= 4 else 8
    fd = _syscall(_SYS_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    try:
        for p in policy.read:
            _add_rule(fd, p, READ, handled)
        for paths, rights in (
            (policy.write, handled & NO_NODES),
            (policy.outputs, OUTPUT_RIGHTS),
            (policy.devices, FILE_RIGHTS),
        ):
            for p in paths:
                _add_rule(fd, p, rights, handled, follow=False)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_no_link(path: str) -> int:
    """An ``O_PATH`` descriptor of absolute ``path`` opened component by component, none of them a link
    (nor ``..``); -1 where one is, or the path is missing. The server resolved every write rule's path
    when it wrote the policy (:func:`~kprof_mcp.sandbox.policy.write_policy`), so a link found here was
    put on the way since: by a concurrent job renaming a directory it may write (the tenth probe's
    P10-3: ``out/profiles/event`` swapped for a link between the server's check and this rule)."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not path.startswith("/") or ".." in parts:
        return -1
    fd = os.open("/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, name in enumerate(parts):
            nfd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = nfd
            mode = os.fstat(fd).st_mode
            if stat.S_ISLNK(mode) or (i < len(parts) - 1 and not stat.S_ISDIR(mode)):
                if stat.S_ISLNK(mode):
                    os.write(2, f"kprof sandbox: no write rule for {path}: a link on its path\n".encode())
                os.close(fd)
                return -1
        return fd
    except OSError:
        os.close(fd)
        return -1


def _add_rule(ruleset: int, path: str, rights: int, handled: int, follow: bool = True) -> None:
    """Allow ``rights`` beneath ``path`` (a file: its file rights only); ``follow=False``: no link on
    its way is followed (a write grant never reaches a link's target: :func:`_open_no_link`)."""
    if follow:
        try:
            pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # not there (or not reachable): nothing to allow
    else:
        pfd = _open_no_link(path)
        if pfd < 0:
            return
    try:
        st = os.fstat(pfd)
        if stat.S_ISLNK(st.st_mode):
            return  # a link (not followed): nothing to allow
        if not stat.S_ISDIR(st.st_mode):
            rights &= FILE_RIGHTS
        rule = _PathBeneath(rights & handled, pfd)
        _syscall(
            _SYS_ADD_RULE,
            ctypes.c_int(ruleset),
            ctypes.c_int(_RULE_PATH_BENEATH),
            ctypes.byref(rule),
            ctypes.c_uint32(0),
        )
    finally:
        os.close(pfd)


def restrict(ruleset: int) -> None:
    """Confine this thread (and everything it will start) by ``ruleset``; no way back."""
    _libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    _syscall(_SYS_RESTRICT, ctypes.c_int(ruleset), ctypes.c_uint32(0))


def wrap(policy_file: Path | None, argv: list[str]) -> list[str]:
    """The argument vector that runs ``argv`` under this package's supervisor (confined by the
    policy in ``policy_file``; None: supervised only, where Landlock is missing)."""
    from ..protocol import python_argv

    return [*python_argv(module="kprof_mcp.sandbox"), str(policy_file or "-"), "--", *argv]


from . import limits, memory  # noqa: E402,F401
from .confine import Confinement, command_confinement, kernel_confinement, tmp_dir  # noqa: E402,F401

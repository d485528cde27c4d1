"""``python -m kprof_mcp.sandbox POLICY.json|- -- ARGV...``: the supervisor (see :mod:`kprof_mcp.sandbox`).

Process tree, where namespaces can be had (root)::

    supervisor (subreaper, lifeline; unconfined, in the server's namespaces)
      └─ A: unshare(PID|mount|net|IPC) — waits for B (net: unless the policy allows the network)
           └─ B: pid 1 of the new PID namespace — mounts a fresh /proc and a private /dev/shm, reaps
                └─ C: drops its capabilities, Landlock, exec ARGV

A policy without ``isolate`` (a kernel child, followed by its pid) or another user than root: the
supervisor forks C directly. C then sees the machine's pids; Landlock's
ptrace scope refuses what the kernel checks by ``ptrace_may_access`` (``environ``, ``maps``, ``mem``,
``cwd``, ``root``, ``auxv``, ``stack``, ``io`` of a process outside its domain), not ``cmdline``,
``status``, ``stat`` or the list of ``fd``. With ``private_proc`` (kernel children) and root, C first
takes a mount namespace (and a network namespace, unless the policy allows the network) and mounts a
``/proc`` of its own with ``hidepid=ptraceable``: a process outside its domain, which Landlock refuses
to ptrace, is not there at all, and a private ``/dev/shm``. Without namespaces C gets no ``/dev/shm``
(POSIX shared memory and semaphores fail).

Behind Nsight Compute C execs the profiler, whose child is the profiled target: another
pid than C, which must write its own ``/proc/<pid>`` (CUDA fails to initialise otherwise). A policy
with ``proc_write`` gets write beneath ``/proc`` (:func:`proc_rights`) only where that is safe: as root
on a ``/proc`` of the job's own (B's or C's mount, made before the rules so that they reach it) whose
every entry but the processes' directories is bound read-only onto itself (:func:`lock_proc`:
``/proc/sys``, ``/proc/sysrq-trigger``, ``/proc/irq``, ``/proc/driver``... as container runtimes do),
in a network namespace of its own (``/proc/<pid>/net`` is its namespace's). Never as another user than
root: the machine's ``/proc`` holds that user's other processes, the server and the supervisor among them,
whose ``oom_score_adj`` and ``autogroup`` procfs lets their owner write (the ninth probe's P9-1); behind
Nsight Compute such a job reads ``/proc`` only, and CUDA may fail to initialise in its target.

Behind Nsight Systems the profiler must also write beneath the machine's ``/tmp`` whatever ``TMPDIR``
says (``/tmp/injection_config_*``, ``/tmp/nsys-RunShellCommand-*``: the policy's ``tmp_mounts``). As root,
B or C covers ``/tmp`` with a tmpfs of the job's own in its mount namespace and binds the policy's paths
beneath it back (:func:`cover_tmp`; read-only where the policy only reads them, so that C's rule on that
tmpfs, added after it was mounted, widens nothing beneath them): nsys writes there, other jobs' files
beneath the real ``/tmp`` stay out of reach and out of sight. Without a mount namespace nothing is granted
there (:func:`tmp_rights`); the server keeps nsys outside where jobs can have none
(:func:`~kprof_mcp.sandbox.policy.profiler_inside`).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from .. import lifeline
from . import (
    FILE_RIGHTS,
    NO_NODES,
    OUTPUT_RIGHTS,
    READ,
    TRUNCATE,
    WRITE_FILE,
    Policy,
    _add_rule,
    _handled,
    _libc,
    abi,
    build_ruleset,
    limits,
    memory,
    no_tcp_layer,
    restrict,
    seccomp,
)
from .mounts import (
    _MS_NODEV,
    _MS_NOEXEC,
    _MS_NOSUID,
    _MS_PRIVATE,
    _MS_REC,
    _mount,
    _ok,
    cover_tmp,
    lock_proc,
    tmp_rights,
)

_PR_SET_CHILD_SUBREAPER = 36
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_CLONE_NEWNS, _CLONE_NEWPID, _CLONE_NEWNET = 0x00020000, 0x20000000, 0x40000000
_CLONE_NEWIPC = 0x08000000
_CAPSET = {"x86_64": 126, "aarch64": 91}
_in_cgroup = False  # the job's first process joined its pids cgroup (limits: no RLIMIT_NPROC then)


def drop_capabilities(keep: list[int]) -> None:
    """Empty the bounding set but ``keep`` (an ``exec`` as root then gains no other capability), the
    ambient set, and this process's own sets. Without CAP_SETPCAP (not root) there is nothing to drop."""
    libc = _libc()
    try:
        last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        if cap not in keep:
            libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    nr = _CAPSET.get(os.uname().machine)
    if nr is None:
        return
    mask = sum(1 << c for c in keep)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)(mask & 0xFFFFFFFF, mask & 0xFFFFFFFF, 0, mask >> 32, mask >> 32, 0)
    libc.syscall(ctypes.c_long(nr), ctypes.byref(header), ctypes.byref(data))


@dataclass
class View:
    """What the job's namespaces gave it: a ``/proc`` of its own whose entries but the processes'
    directories are read-only (``proc_locked``), a network namespace of its own, a private /dev/shm."""

    proc_locked: bool = False
    own_net: bool = False
    private_shm: bool = False
    own_tmp: bool = False  # a tmpfs of its own over each of the policy's tmp_mounts (root, a mount namespace)
    own_ipc: bool = False  # an IPC namespace of its own: no SysV segment, queue or semaphore outside


def _own_ipc(policy: Policy) -> bool:
    """An IPC namespace of the job's own (root; issue 38, the independent probe: a confined command
    attached another root process's 0600 SysV segment and wrote it, and sent to its message queue;
    Landlock does not cover SysV IPC). A profiler confined with its target (Nsight Compute, Nsight
    Systems) shares it with its target. Best effort."""
    return _ok(_libc().unshare(_CLONE_NEWIPC))


def proc_rights(policy: Policy, view: View, uid: int) -> tuple[int, str | None]:
    """The rights beneath ``/proc`` of a confined process with ``policy`` and ``view`` run by ``uid``:
    read, and for a policy with ``proc_write`` writing files (no truncation of anything but a file it
    may write) only where safe — root on a locked /proc of its own in a network namespace of its own;
    else read only, and the note that says why. Another user than root has the machine's ``/proc``,
    where its user's other processes are: the ninth probe's P9-1 wrote the server's and its own
    supervisor's ``oom_score_adj`` (procfs checks the file's owner there, not ptrace), and the OOM
    killer then took the supervisor first, so a sleeper outlived the job."""
    if not policy.proc_write:
        return READ, None
    if uid == 0 and view.proc_locked and view.own_net:
        return READ | WRITE_FILE | TRUNCATE, None
    if uid != 0:
        why = (
            "another user than root: /proc is the machine's, with this user's other processes (the server's)"
        )
    else:
        why = (
            "no /proc of its own made read-only"
            if not view.proc_locked
            else "the machine's network namespace"
        )
    return READ, (
        f"kprof sandbox: /proc is not writable behind the profiler ({why}): CUDA may fail to "
        "initialise in the profiled process (error 304)"
        + ("; run it without --commands-network" if uid == 0 and view.proc_locked else "")
    )


def _confine_and_exec(ruleset: int, policy: Policy | None, command: list[str], view: View) -> None:
    """C: add the rules only this process can name (its /proc, its /dev/shm), drop its capabilities,
    confine it and exec the command. Never returns."""
    try:
        if ruleset >= 0 and policy is not None:
            handled = _handled(abi())
            rights, note = proc_rights(policy, view, os.geteuid())
            if note:
                os.write(2, (note + "\n").encode())
            _add_rule(ruleset, "/proc", rights, handled)
            # cuInit() names its threads in /proc/<pid>/task/<tid>/comm and fails with error 304 without
            # it: the process's own /proc/<pid> is writable, nothing else of /proc. A process it starts
            # has another pid, so CUDA does not initialise in its subprocesses (behind a profiler, whose
            # child is the profiled process: proc_rights).
            _add_rule(ruleset, f"/proc/{os.getpid()}", FILE_RIGHTS, handled)
            if view.private_shm:
                _add_rule(ruleset, "/dev/shm", handled & NO_NODES, handled, follow=False)
            tmp, note = tmp_rights(policy, view.own_tmp)
            if note:
                os.write(2, (note + "\n").encode())
            for path in tmp:  # its own tmpfs (mounted after the rules were made): the profiler's files
                _add_rule(ruleset, path, OUTPUT_RIGHTS & handled, handled, follow=False)
            limits.apply_rlimits(policy.max_tasks, policy.max_file_bytes, _in_cgroup)
            drop_capabilities(policy.keep_caps)
            restrict(ruleset)
            os.close(ruleset)
            if policy.tcp_inside and os.geteuid() == 0 and not view.own_net:
                no_tcp_layer()  # its TCP was to stay in a namespace of its own: none at all
            # chmod/chown/utime/xattr refused: Landlock has no right for them (behind nsys chmod a no-op)
            allow = (seccomp.CHMOD if policy.chmod_allowed else ()) + (seccomp.SYSV if view.own_ipc else ())
            seccomp.install(allow=allow)
        os.execvp(command[0], command)
    except BaseException as e:  # noqa: BLE001
        try:
            os.write(2, f"kprof sandbox: cannot start {command[0]}: {e}\n".encode())
        finally:
            os._exit(127)


def loopback_up() -> bool:
    """Bring the loopback interface of this (new) network namespace up: TCP between the job's own
    processes (``tcp_inside``), nothing outside it. Root, before the capabilities are dropped."""
    import fcntl
    import socket
    import struct

    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            got = fcntl.ioctl(s, siocgifflags, struct.pack("16sH14x", b"lo", 0))
            flags = struct.unpack("16sH", got[:18])[1]
            fcntl.ioctl(s, siocsifflags, struct.pack("16sH14x", b"lo", flags | iff_up))
        return True
    except OSError:
        return False


def _own_view(policy: Policy) -> View:
    """C without a PID namespace, as root (a kernel child): a mount namespace whose ``/proc`` hides
    every process C may not ptrace (those outside its Landlock domain, once it is confined), a private
    /dev/shm, and a network namespace unless the policy allows the network. Best effort: what cannot
    be made is not (and the view says so)."""
    libc = _libc()
    net = 0 if policy.network else _CLONE_NEWNET
    view = View(own_net=bool(net), own_ipc=_own_ipc(policy))
    if not _ok(libc.unshare(_CLONE_NEWNS | net)):
        view.own_net = False
        if not (net and _ok(libc.unshare(_CLONE_NEWNS))):
            return view
    if view.own_net and policy.tcp_inside:
        view.own_net = loopback_up()  # else: no TCP at all (no_tcp_layer)
    if _mount("none", "/", None, _MS_REC | _MS_PRIVATE):
        flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
        # hidepid=ptraceable (Linux 5.8): a pid is there only where ptrace_may_access(READ) allows it,
        # which Landlock refuses outside the domain (hidepid=invisible lets root's group see all)
        view.own_tmp = cover_tmp(policy)
        if _mount("proc", "/proc", "proc", flags, "hidepid=ptraceable"):
            view.proc_locked = policy.proc_write and lock_proc()
        view.private_shm = _private_shm()
    return view


def _private_shm() -> bool:
    return os.path.isdir("/dev/shm") and _mount(
        "tmpfs", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=1777"
    )


def _private_mounts(policy: Policy, own_net: bool) -> View:
    """B (pid 1 of the new PID namespace, in a mount namespace of A's): mounts that no other process
    sees — a /proc of this PID namespace (locked for a policy with ``proc_write``) and an empty
    /dev/shm. The view says what could be made."""
    view = View(own_net=own_net and (not policy.tcp_inside or loopback_up()))
    if not _mount("none", "/", None, _MS_REC | _MS_PRIVATE):
        return view
    view.own_tmp = cover_tmp(policy)
    if not _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC):
        return view
    view.proc_locked = policy.proc_write and lock_proc()
    view.private_shm = _private_shm()
    return view


def _isolated(ruleset: int, policy: Policy, command: list[str], status_w: int) -> None:
    """A: a PID and a mount namespace for B; B: the namespace's init. Never returns; B writes C's wait
    status to ``status_w`` (pid 1 of a namespace cannot die by its own signal, so it cannot mirror
    C's end itself)."""
    libc = _libc()
    net = 0 if policy.network else _CLONE_NEWNET  # no TCP, UDP or other socket out of the job
    own_ipc = _own_ipc(policy)
    own_net = bool(net) and _ok(libc.unshare(_CLONE_NEWPID | _CLONE_NEWNS | net))
    if not own_net and not _ok(libc.unshare(_CLONE_NEWPID | _CLONE_NEWNS)):
        os.write(status_w, b"nons")
        _confine_and_exec(ruleset, policy, command, View())
    b = os.fork()
    if b:  # A
        while True:
            try:
                os.waitpid(b, 0)
                break
            except InterruptedError:
                continue
            except ChildProcessError:
                break
        os._exit(0)
    view = _private_mounts(policy, own_net)
    view.own_ipc = own_ipc
    c = os.fork()
    if c == 0:
        _confine_and_exec(ruleset, policy, command, view)
    os.close(ruleset)
    status = None
    while status is None:
        try:
            got, st = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            break
        if got == c:
            status = st
    os.write(status_w, str(1 << 8 if status is None else status).encode())
    os._exit(0)  # the kernel kills whatever is left in the namespace


def _can_isolate(policy: Policy | None) -> bool:
    return policy is not None and policy.isolate and os.geteuid() == 0


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m kprof_mcp.sandbox POLICY.json|- -- ARGV...", file=sys.stderr)
        return 2
    policy_file, command = argv[0], argv[2:]
    held = lifeline.take()  # before any fork: the confined process gets nothing of the server's
    ruleset, policy = -1, None
    if policy_file != "-":
        try:
            policy = Policy.from_json(Path(policy_file).read_text())
            ruleset = build_ruleset(policy)
        except OSError as e:
            print(f"kprof sandbox: cannot confine the command: {e}", file=sys.stderr)
            return 126
    try:
        _libc().prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    status_r = status_w = -1
    isolate = _can_isolate(policy)
    if isolate:
        status_r, status_w = os.pipe()
    mem = memory.make(policy.max_memory) if policy is not None else None
    if mem is not None and memory.unified():
        cgroup = limits.limit_tasks_in(mem, policy.max_tasks)  # v2: one cgroup for both
    else:
        cgroup = limits.make_cgroup(policy.max_tasks) if policy is not None else None
    pid = os.fork()
    if pid == 0:
        global _in_cgroup
        memory.join(mem)  # first: every process of the job is counted
        _in_cgroup = limits.join_cgroup(cgroup)
        _oom_first()
        if isolate:
            os.close(status_r)
            _isolated(ruleset, policy, command, status_w)
        view = View()
        if policy is not None and policy.private_proc and os.geteuid() == 0:
            view = _own_view(policy)
        _confine_and_exec(ruleset, policy, command, view)
    if ruleset >= 0:
        os.close(ruleset)
    if status_w >= 0:
        os.close(status_w)
    return _supervise(pid, status_r, (cgroup, mem), held)


def _reported(status_r: int, st: int | None) -> int | None:
    """C's wait status as B reported it (``st``, the direct child's, when nothing was reported or no
    namespace could be made)."""
    if status_r < 0:
        return st
    try:
        text = os.read(status_r, 64).decode()
    except OSError:
        return st
    finally:
        os.close(status_r)
    if text.startswith("nons"):  # no namespace: the direct child was the process itself
        return st
    return int(text) if text.isdigit() else 1 << 8  # B died before telling: exit status 1


def _oom_first() -> None:
    """The job's processes are the OOM killer's first victims (``oom_score_adj`` 1000, inherited by all
    they start): memory spread over many processes of a job must not get the server, its warm workers or
    this supervisor killed instead (the ninth probe's P9-2: 80 processes of 70 MiB each in a 4 GiB
    cgroup, the server killed in 3 of 4 runs). A job may lower its score back to 0 without a capability,
    not below (tests/unit/test_probe9_oom.py): a deliberate one stands level with the server, where size
    decides, within the jobs' memory cgroup (:mod:`kprof_mcp.sandbox.memory`), which keeps the server out
    of the choice where one can be made. Best effort."""
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass


def _say_oom(mem: Path | None) -> None:
    """Say on the job's stderr when the OOM killer took its processes at the jobs' memory limit."""
    kills = memory.oom_kills(mem)
    if kills:
        limit = memory._read_limit(mem, memory.unified())
        os.write(
            2,
            f"kprof sandbox: the job's memory limit ({limit} bytes; all jobs together: KPROF_JOB_MAX_MEMORY) "
            f"was reached: the kernel killed {kills} of this job's processes\n".encode(),
        )


def _supervise(pid: int, status_r: int = -1, cgroups: tuple = (None, None), held: tuple | None = None) -> int:
    """Wait for the confined process (reaping every orphan handed to this subreaper meanwhile); when
    it has ended, or on SIGTERM/SIGINT, kill what is left of the subtree; exit as the process did.
    ``cgroups``: the job's pids and memory cgroups (either None), removed at the end."""
    cgroup, mem = cgroups

    def stop(signum, frame):
        lifeline.kill_tree(os.getpid())
        limits.remove_cgroup(cgroup)
        memory.remove(mem)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    lifeline.watch(held)  # the server gone: this subtree, then this group, killed
    status = None
    while status is None:
        try:
            got, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if got == pid:
            status = st
    status = _reported(status_r, status)
    lifeline.kill_tree(os.getpid())
    _say_oom(mem)
    limits.remove_cgroup(cgroup)
    memory.remove(mem)
    if status is None:
        return 1
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        sys.stdout.flush()
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass  # SIGKILL (the fifth probe's P5-3: the OOM killer, RLIMIT_CPU): not to be set, always default
        os.kill(os.getpid(), sig)  # the runner reads the process's signal as before
        return 128 + sig
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

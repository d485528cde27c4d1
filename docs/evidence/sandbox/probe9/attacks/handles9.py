# ruff: noqa: F821 — exec()d with `log` and `ws` given
"""Handles on the server, the supervisor and a same-user victim from inside a job: pidfd_open,
pidfd_send_signal, kill, pidfd_getfd, process_vm_readv, kcmp, ptrace, setns (by pidfd and by
/proc/PID/ns), /proc/PID/{fd,mem,environ}, and the calls Landlock has no hook for: prlimit (read only
here), setpriority, sched_setaffinity, sched_setscheduler (each only read or set to what it already is)."""

import ctypes
import os
import resource
import signal

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def sc(nr, *a):
    r = libc.syscall(ctypes.c_long(nr), *a)
    return r if r >= 0 else -ctypes.get_errno()


def res(name, f):
    try:
        print(f"CHECK {name}: ALLOWED {f()!r}", file=log, flush=True)
    except OSError as e:
        print(f"CHECK {name}: refused {e.errno} {e.strerror}", file=log, flush=True)
    except Exception as e:  # noqa: BLE001
        print(f"CHECK {name}: error {type(e).__name__} {e}", file=log, flush=True)


srv = min(int(x) for x in open(os.path.join(ws, "SERVER_PID")).read().split())
vic = int(open(os.path.join(ws, "VICTIM_PID")).read())
sup = os.getppid()
print(f"CHECK ids: INFO me {os.getpid()} uid {os.getuid()} parent {sup} server {srv} victim {vic}", file=log)
for who, pid in (("server", srv), ("supervisor", sup), ("victim", vic)):
    res(f"{who} kill(0)", lambda pid=pid: os.kill(pid, 0))
    res(f"{who} pidfd_open", lambda pid=pid: os.close(os.pidfd_open(pid)) or "pidfd")
    try:
        pfd = os.pidfd_open(pid)
    except OSError:
        pfd = -1
    if pfd >= 0:
        res(f"{who} pidfd_send_signal(SIGURG)", lambda pfd=pfd: signal.pidfd_send_signal(pfd, signal.SIGURG))
        for n in (0, 1, 2, 3, 4, 5, 6):
            r = sc(438, ctypes.c_int(pfd), ctypes.c_int(n), ctypes.c_uint(0))  # pidfd_getfd
            print(
                f"CHECK {who} pidfd_getfd({n}): {'ALLOWED fd ' + str(r) if r >= 0 else 'refused ' + str(-r)}",
                file=log,
            )
            if r >= 0:
                print("   -> it is", os.readlink(f"/proc/self/fd/{r}"), file=log)
        for flag, nm in ((0x00020000, "mnt"), (0x40000000, "net"), (0x20000000, "pid"), (0x10000000, "user")):
            r = libc.setns(ctypes.c_int(pfd), ctypes.c_int(flag))
            print(
                f"CHECK {who} setns(pidfd,{nm}): {'ALLOWED' if r == 0 else 'refused ' + str(ctypes.get_errno())}",
                file=log,
            )
        os.close(pfd)
    buf = ctypes.create_string_buffer(16)

    class IOV(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

    local = IOV(ctypes.cast(buf, ctypes.c_void_p), 16)
    remote = IOV(0x400000, 16)
    r = sc(
        310,
        ctypes.c_int(pid),
        ctypes.byref(local),
        ctypes.c_ulong(1),
        ctypes.byref(remote),
        ctypes.c_ulong(1),
        ctypes.c_ulong(0),
    )
    print(
        f"CHECK {who} process_vm_readv: {'ALLOWED ' + str(r) if r >= 0 else 'refused ' + str(-r)}", file=log
    )
    r = sc(
        312,
        ctypes.c_int(os.getpid()),
        ctypes.c_int(pid),
        ctypes.c_int(0),
        ctypes.c_ulong(0),
        ctypes.c_ulong(0),
    )
    print(f"CHECK {who} kcmp: {'ALLOWED ' + str(r) if r >= 0 else 'refused ' + str(-r)}", file=log)
    r = sc(101, ctypes.c_long(0x4206), ctypes.c_long(pid), ctypes.c_long(0), ctypes.c_long(0))  # PTRACE_SEIZE
    print(f"CHECK {who} ptrace(SEIZE): {'ALLOWED ' + str(r) if r >= 0 else 'refused ' + str(-r)}", file=log)
    for f in ("fd", "fdinfo", "mem", "environ", "ns/mnt", "ns/net", "ns/pid", "cwd", "root/etc/hostname"):
        p = f"/proc/{pid}/{f}"
        res(
            f"{who} open {p}",
            lambda p=p: (
                os.listdir(p)[:8] if os.path.isdir(p) else os.close(os.open(p, os.O_RDONLY)) or "opened"
            ),
        )
    try:
        for n in os.listdir(f"/proc/{pid}/fd"):
            p = f"/proc/{pid}/fd/{n}"
            res(f"{who} open {p} (its fd {n})", lambda p=p: os.close(os.open(p, os.O_RDONLY)) or "opened")
            res(f"{who} readlink {p}", lambda p=p: os.readlink(p))
    except OSError:
        pass
    # the calls Landlock has no hook for (same uid suffices): read, or set to what they already are
    res(f"{who} prlimit(NOFILE) read", lambda pid=pid: resource.prlimit(pid, resource.RLIMIT_NOFILE))
    res(
        f"{who} prlimit(CORE) set to its own value",
        lambda pid=pid: resource.prlimit(
            pid, resource.RLIMIT_CORE, resource.prlimit(pid, resource.RLIMIT_CORE)
        ),
    )
    res(
        f"{who} setpriority (same value)",
        lambda pid=pid: os.setpriority(os.PRIO_PROCESS, pid, os.getpriority(os.PRIO_PROCESS, pid)),
    )
    res(
        f"{who} sched_setaffinity (same set)",
        lambda pid=pid: os.sched_setaffinity(pid, os.sched_getaffinity(pid)),
    )
    res(
        f"{who} sched_setscheduler (same)",
        lambda pid=pid: os.sched_setscheduler(pid, os.sched_getscheduler(pid), os.sched_param(0)),
    )
print("CHECK handles9: INFO done", file=log, flush=True)

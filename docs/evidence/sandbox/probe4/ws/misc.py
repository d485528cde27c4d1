"""V11-V25: small checks, one line each (KPROBE4 name: result). Usage: python misc.py OUTSIDE HOME_SECRET"""
import ctypes
import errno
import fcntl
import os
import socket
import struct
import sys
import termios

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
outside, secret = sys.argv[1], sys.argv[2]


_out = open(os.path.join(os.getcwd(), "sub", "misc.out"), "w")  # the output tail keeps 30 lines


def say(line):
    print(line, flush=True)
    _out.write(line + "\n")
    _out.flush()


def check(name, fn):
    try:
        r = fn()
        say(f"KPROBE4 {name}: {r}")
    except BaseException as e:  # noqa: BLE001
        en = getattr(e, "errno", None)
        say(f"KPROBE4 {name}: {type(e).__name__} {errno.errorcode.get(en, en) if en else e}")


def err():
    return errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno())


check("read home secret", lambda: open(secret).read())
check("stat home secret (metadata)", lambda: (os.stat(secret).st_size, os.stat(secret).st_mtime))
check("listdir outside", lambda: os.listdir(outside))
check("stat outside/victim.txt", lambda: os.stat(os.path.join(outside, "victim.txt")).st_size)
check("readlink outside/link", lambda: os.readlink(os.path.join(outside, "link")))
check("getxattr home secret (direct)", lambda: os.listxattr(secret))
check("read via /proc/self/root", lambda: open("/proc/self/root" + secret).read())
check("hard link outside file", lambda: os.link(os.path.join(outside, "victim.txt"), os.path.join(os.environ["TMPDIR"], "hl")))
check("rename outside file in", lambda: os.rename(os.path.join(outside, "victim.txt"), os.path.join(os.environ["TMPDIR"], "mv")))
check("unlink outside file", lambda: os.unlink(os.path.join(outside, "victim.txt")))
check("truncate outside file", lambda: os.truncate(os.path.join(outside, "victim.txt"), 0))
check("create in outside dir", lambda: open(os.path.join(outside, "new.txt"), "w").write("x"))
check("mkfifo in TMPDIR", lambda: os.mkfifo(os.path.join(os.environ["TMPDIR"], "fifo")) or "made")
check("mknod char in TMPDIR", lambda: os.mknod(os.path.join(os.environ["TMPDIR"], "null"), 0o666 | 0o20000, os.makedev(1, 3)))
check("kill(-1, 0)", lambda: os.kill(-1, 0) or "ok")
check("pids visible", lambda: sorted(int(p) for p in os.listdir("/proc") if p.isdigit())[:20])
check("my pid / ppid", lambda: (os.getpid(), os.getppid()))
check("/proc/1/cmdline", lambda: open("/proc/1/cmdline", "rb").read()[:120])
check("/proc/1/environ", lambda: open("/proc/1/environ", "rb").read()[:80])
check("open /dev/tty", lambda: os.open("/dev/tty", os.O_RDWR))
def tiocsti():
    fd = os.open("/dev/tty", os.O_RDWR)
    fcntl.ioctl(fd, termios.TIOCSTI, b"x")
    return "injected"
check("TIOCSTI", tiocsti)
check("TIOCSTI on fd 0", lambda: fcntl.ioctl(0, termios.TIOCSTI, b"x") and "injected")
check("fds open", lambda: {int(f): os.readlink(f"/proc/self/fd/{f}") for f in os.listdir("/proc/self/fd")})
def userns_mount():
    if libc.unshare(0x10000000) != 0:
        return f"unshare(NEWUSER) {err()}"
    if libc.unshare(0x00020000) != 0:
        return f"userns ok; unshare(NEWNS) {err()}"
    r = libc.mount(b"none", os.environ["TMPDIR"].encode(), b"tmpfs", 0, None)
    return f"userns+mountns ok; mount tmpfs -> {r} {err() if r else ''}"
def in_child(fn):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = str(fn())
        except BaseException as e:  # noqa: BLE001
            out = f"{type(e).__name__} {e}"
        os.write(w, out.encode()[:4000])
        os._exit(0)
    os.close(w)
    data = os.read(r, 4000).decode()
    os.waitpid(pid, 0)
    return data
check("unshare -U then mount", lambda: in_child(userns_mount))
check("chroot", lambda: in_child(lambda: f"{libc.chroot(b'/tmp')} {err()}"))
def tcp():
    s = socket.socket()
    s.settimeout(2)
    return s.connect_ex(("127.0.0.1", int(os.environ.get("KPROBE4_PORT", "22"))))
check("tcp connect 127.0.0.1", tcp)
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    return s.sendto(b"kprobe4", ("127.0.0.1", int(os.environ.get("KPROBE4_UDP", "9"))))
check("udp sendto 127.0.0.1", udp)
check("netlink route socket", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).fileno())
check("packet socket", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0).fileno())
def abstract():
    s = socket.socket(socket.AF_UNIX)
    s.connect("\0kprobe4-abstract")
    return s.recv(100)
check("abstract unix to a listener outside", abstract)
check("interfaces", lambda: socket.if_nameindex())
def memfd_exec():
    fd = os.memfd_create("x")
    os.write(fd, open("/bin/true", "rb").read())
    pid = os.fork()
    if pid == 0:
        os.execve(fd, ["true"], {})  # fexecve
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
check("memfd exec", memfd_exec)
check("subreaper of its own", lambda: libc.prctl(36, 1, 0, 0, 0))
import resource

check("raise RLIMIT_FSIZE", lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY)))
check("RLIMIT_NPROC/FSIZE", lambda: (resource.getrlimit(resource.RLIMIT_NPROC), resource.getrlimit(resource.RLIMIT_FSIZE)))
check("write /proc/sys/kernel/hostname", lambda: open("/proc/sys/kernel/hostname", "w").write("x"))
check("write /proc/self/oom_score_adj", lambda: open("/proc/self/oom_score_adj", "w").write("-1000"))
check("write /proc/self/attr/current", lambda: open("/proc/self/comm", "w").write("kprobe4"))
check("/dev/shm write", lambda: open("/dev/shm/kprobe4", "w").write("x"))
check("/dev/shm list", lambda: os.listdir("/dev/shm"))
check("posix mq_open", lambda: ctypes.CDLL("librt.so.1", use_errno=True).mq_open(b"/kprobe4", 0o100 | 2, 0o600, None))
check("sysv shmget", lambda: libc.shmget(0x4B50, 4096, 0o1000 | 0o600))
def inotify():
    import select
    import time
    fd = libc.inotify_init1(0o4000)
    wd = libc.inotify_add_watch(fd, os.path.dirname(secret).encode(), 0xFFF)
    if wd < 0:
        return f"inotify_add_watch {err()}"
    names, end = set(), time.time() + 8
    while time.time() < end and not names:
        if select.select([fd], [], [], 0.5)[0]:
            data = os.read(fd, 65536)
            i = 0
            while i < len(data):
                _wd, mask, _cookie, ln = struct.unpack_from("iIII", data, i)
                names.add(data[i + 16:i + 16 + ln].rstrip(b"\0").decode(errors="replace"))
                i += 16 + ln
    return f"watch on the (unreadable) home directory: wd={wd}; names seen there: {sorted(n for n in names if n)}"
check("inotify on home dir", inotify)
check("ptrace attach pid 1", lambda: f"{libc.ptrace(16, 1, 0, 0)} {err()}")
check("io_uring setup", lambda: libc.syscall(425, 4, ctypes.create_string_buffer(120)))
check("personality / x32 chmod", lambda: "skipped")
check("open_by_handle_at", lambda: f"{libc.syscall(304, -100, None, 0)} {err()}")
check("keyctl session keyring read", lambda: open("/proc/keys").read()[:200])
check("bpf()", lambda: f"{libc.syscall(321, 0, None, 0)} {err()}")
check("perf_event_open", lambda: f"{libc.syscall(298, None, 0, -1, -1, 0)} {err()}")
check("userfaultfd", lambda: f"{libc.syscall(323, 0)} {err()}")
check("sched_setattr/nice -20", lambda: os.nice(-20))
say("KPROBE4 misc done")

# ruff: noqa: F821, E741 — exec()d with `log` and `ws` given
"""The eighth probe's attack, exec()d with `log` and `ws` by pkg_init.py (a kernel child) or cmd_wrapper.py
(a command). One line per check: `CHECK name: BLOCKED|SUCCEEDED|INFO detail`. Classes the earlier probes
did not try: inherited descriptors, the terminal (TIOCSTI), a user namespace's mounts, file handles
(name_to_handle_at/open_by_handle_at), the device lock file, SCM_RIGHTS from the lifeline."""

import ctypes
import fcntl
import os
import stat
import termios

libc = ctypes.CDLL(None, use_errno=True)
BASE = os.path.dirname(ws)
OUTSIDE = os.path.join(BASE, "outside")
HOME = os.path.join(BASE, "home")
SECRET = os.path.join(HOME, "secret.txt")


def say(name, ok, detail=""):
    verdict = ok if isinstance(ok, str) else ("SUCCEEDED" if ok else "BLOCKED")
    print(f"CHECK {name}: {verdict} {str(detail)[:300]}", file=log, flush=True)


def err(e):
    return f"{type(e).__name__}: {e}"


say(
    "who",
    "INFO",
    f"uid={os.getuid()} pid={os.getpid()} ppid={os.getppid()} sid={os.getsid(0)} cwd={os.getcwd()}",
)

# 1. every descriptor this process holds: where it leads; a regular file outside the write rules
#    opened for writing, or one outside the read rules, would be a way out
allowed = (ws, "/tmp/kprof-kernels-", "/tmp/kprof-", "/dev/null")
for name in sorted(os.listdir("/proc/self/fd"), key=int):
    fd = int(name)
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
        st = os.fstat(fd)
        fl = fcntl.fcntl(fd, fcntl.F_GETFL)
    except OSError:
        continue
    acc = {os.O_RDONLY: "r", os.O_WRONLY: "w", os.O_RDWR: "rw"}[fl & 3]
    kind = "reg" if stat.S_ISREG(st.st_mode) else "dir" if stat.S_ISDIR(st.st_mode) else "other"
    leak = kind in ("reg", "dir") and not target.startswith(allowed) and "(deleted)" not in target
    say(f"fd-{fd}", leak, f"{target} {kind} {acc}")
    if kind == "dir" and leak:
        try:
            say(f"fd-{fd}-openat-secret", True, os.open("home/secret.txt", os.O_RDONLY, dir_fd=fd))
        except OSError as e:
            say(f"fd-{fd}-openat", False, err(e))

# 2. the terminal: a controlling tty (the user's shell) through /dev/tty, TIOCSTI on 0-2, a new pty
for what in ("/dev/tty", 0, 1, 2):
    try:
        fd = os.open(what, os.O_RDWR) if isinstance(what, str) else what
        fcntl.ioctl(fd, termios.TIOCSTI, b"#")
        say(f"tiocsti-{what}", True, "a byte was pushed into a terminal's input")
    except OSError as e:
        say(f"tiocsti-{what}", False, err(e))
try:
    m, s = os.openpty()
    say("openpty", "INFO", f"{os.ttyname(s)} (a pty of its own: no other terminal)")
except OSError as e:
    say("openpty", "INFO", err(e))
try:
    say("ls-/dev/pts", "INFO", os.listdir("/dev/pts"))
    for n in os.listdir("/dev/pts"):
        if n.isdigit():
            try:
                os.close(os.open(f"/dev/pts/{n}", os.O_RDWR | os.O_NOCTTY))
                say(f"open-/dev/pts/{n}", True, "another terminal opened")
            except OSError as e:
                say(f"open-/dev/pts/{n}", False, err(e))
except OSError as e:
    say("ls-/dev/pts", False, err(e))

# 3. a user namespace of its own, and in it a mount namespace: bind the home directory into a writable
#    place, or mount a fresh proc, then read the secret (Landlock forbids mounts; unshare may be refused)
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
pid = os.fork()
if pid == 0:
    code = 0
    try:
        if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
            code = 10 + ctypes.get_errno() % 100
        else:
            dst = os.path.join(os.environ.get("TMPDIR", "/tmp"), "bindhome")
            os.makedirs(dst, exist_ok=True)
            if libc.mount(HOME.encode(), dst.encode(), None, 4096, None) != 0:  # MS_BIND
                code = 120 + min(ctypes.get_errno(), 100) % 100 if False else 2
            else:
                open(os.path.join(dst, "secret.txt")).read()
                code = 1
    except BaseException:
        code = 3
    os._exit(code)
_, status = os.waitpid(pid, 0)
rc = os.waitstatus_to_exitcode(status)
say(
    "userns-bind-home",
    rc == 1,
    {1: "bound and read the secret", 2: "unshare ok, mount refused", 3: "raised"}.get(
        rc, f"unshare refused (errno {rc - 10})"
    ),
)


# 4. file handles: a handle of the secret by name (no open, Landlock sees none), then opened by handle
class FH(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_uint), ("type", ctypes.c_int), ("h", ctypes.c_ubyte * 128)]


fh, mnt = FH(), ctypes.c_int()
fh.bytes = 128
AT_FDCWD = -100
if libc.name_to_handle_at(AT_FDCWD, SECRET.encode(), ctypes.byref(fh), ctypes.byref(mnt), 0) != 0:
    say("name_to_handle_at-secret", False, f"errno {ctypes.get_errno()}")
else:
    say("name_to_handle_at-secret", "INFO", f"a handle of {fh.bytes} bytes (metadata, as P4-11)")
    mfd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)  # "/" is not readable: any fd on the same mount
    fd = libc.open_by_handle_at(mfd, ctypes.byref(fh), os.O_RDONLY)
    if fd >= 0:
        say("open_by_handle_at-secret", True, os.read(fd, 64))
    else:
        say("open_by_handle_at-secret", False, f"errno {ctypes.get_errno()}")

# 5. the device lock (outside): hold it and every later job of every server waits
for p in (
    os.path.join(BASE, "locks", "cpu.lock"),
    os.path.join(HOME, ".cache", "kprof-mcp", "locks", "cpu.lock"),
):
    try:
        fd = os.open(p, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        say(f"lock {p}", True, "the device lock held from a job")
    except OSError as e:
        say(f"lock {p}", False, err(e))

# 6. descriptors by SCM_RIGHTS: a unix socket pair is all it can make; the server's sockets are not
#    reachable (the lifeline is a pipe). Writes through /proc/self/fd of an inherited pipe's other end
try:
    for name in os.listdir("/proc/self/fd"):
        t = os.readlink(f"/proc/self/fd/{name}")
        if t.startswith("pipe:"):
            try:
                w = os.open(f"/proc/self/fd/{name}", os.O_WRONLY | os.O_NONBLOCK)
                say(f"pipe-reopen-{name}", "INFO", f"{t} reopened for writing (its own pipe: to its reader)")
                os.close(w)
            except OSError as e:
                say(f"pipe-reopen-{name}", "INFO", err(e))
except OSError as e:
    say("pipes", "INFO", err(e))

# 7. the secret and an outside write, plainly (controls)
try:
    say("read-secret", True, open(SECRET).read())
except OSError as e:
    say("read-secret", False, err(e))
try:
    with open(os.path.join(OUTSIDE, "escape8.txt"), "w") as f:
        f.write("x")
    say("write-outside", True)
except OSError as e:
    say("write-outside", False, err(e))

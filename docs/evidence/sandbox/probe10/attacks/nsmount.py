# User namespace (unprivileged userns are allowed here: max_user_namespaces 96365), then mounts, pivot_root,
# hard links and renames of protected files into a writable place, and a chmod by io_uring-free means.
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)


def try_(what, f):
    try:
        r = f()
        log.write(f"{what}: ALLOWED {r}\n")  # noqa: F821
    except OSError as e:
        log.write(f"{what}: refused {e}\n")  # noqa: F821


def call(what, rc):
    log.write(f"{what}: {'ALLOWED' if rc == 0 else f'refused errno {ctypes.get_errno()}'}\n")  # noqa: F821
    return rc == 0


uid, gid = os.getuid(), os.getgid()
log.flush()  # noqa: F821
_pid = os.fork()  # a single-threaded process: unshare(CLONE_NEWUSER) needs one
if _pid == 0:
    if call("unshare(CLONE_NEWUSER)", libc.unshare(0x10000000)):
        try_("uid_map", lambda: open("/proc/self/uid_map", "w").write(f"0 {uid} 1"))
        try_("setgroups deny", lambda: open("/proc/self/setgroups", "w").write("deny"))
        try_("gid_map", lambda: open("/proc/self/gid_map", "w").write(f"0 {gid} 1"))
        log.write(f"in the userns: uid {os.getuid()}\n")  # noqa: F821
        if call("unshare(CLONE_NEWNS)", libc.unshare(0x00020000)):
            d = os.path.abspath("mnt-kp10")
            os.makedirs(d, exist_ok=True)
            call("mount tmpfs on ./mnt-kp10", libc.mount(b"tmpfs", d.encode(), b"tmpfs", 0, None))
            call("bind / on ./mnt-kp10", libc.mount(b"/", d.encode(), None, 4096 | 0x4000, None))
            call("remount / rw", libc.mount(None, b"/", None, 32, None))
    log.flush()  # noqa: F821
    os._exit(0)
os.waitpid(_pid, 0)
ws_ = ws  # noqa: F821
for src in (os.path.join(ws_, "out", "profiles"), os.path.join(ws_, "victim_ws.txt")):
    try_(f"link {src} -> ./kp10-link", lambda s=src: os.link(s, "kp10-link"))
    try_(f"rename {src} -> ./kp10-moved", lambda s=src: os.rename(s, "kp10-moved"))
try_(
    "symlink out -> ./kp10-sym, write through it",
    lambda: (
        os.symlink(os.path.join(ws_, "out"), "kp10-sym"),
        open("kp10-sym/kp10-through.txt", "w").write("x"),
    ),
)

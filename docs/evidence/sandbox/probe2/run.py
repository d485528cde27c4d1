"""Independent adversarial probe of profile_command / profile_kernel (issue 38), new variants only
(the first probe's are in ../probe/). A client that can only call the MCP tools (and, as a cloned
repository would, bring files into its workspace). CPU only.

    python docs/evidence/sandbox/probe2/run.py            # as the current user (root here)
    setpriv --reuid 65534 --regid 65534 --clear-groups python .../run.py --as-nobody

Everything lives under a fresh /tmp/kprobe2-* directory; processes it starts are ended by pid; the
/dev/zero row runs its own server in a memory cgroup of 2 GiB (root only)."""
import anyio, json, os, shutil, signal, socket, stat, subprocess, sys, tempfile, threading, time
from pathlib import Path
from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
PY = str(REPO / ".venv/bin/python") if os.geteuid() == 0 else sys.executable  # /root is 0700: the venv link is not followable by 65534
ROOT = Path(tempfile.mkdtemp(prefix="kprobe2-", dir="/tmp"))
os.chmod(ROOT, 0o755)
WS, WS2, V, HOME = ROOT / "ws", ROOT / "ws2", ROOT / "victim", ROOT / "home"
TAG = "kprobe2-" + ROOT.name
ROWS, STARTED, CLEAN = [], [], []
NOBODY = "--as-nobody" in sys.argv
SECRET_V, SECRET_WS2 = "victim-secret-7f3a", "ws2-secret-91bc"


def row(attack, how, outcome, evidence):
    ROWS.append((attack, how, outcome, str(evidence).replace("\n", " ").replace("|", "/")[:300]))


def text(r):
    return r.content[0].text if r.content else ""


def tagged():
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if f"KPROBE_TAG={TAG}".encode() in open(f"/proc/{d}/environ", "rb").read():
                    if open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
                        out.append(int(d))
            except OSError:
                pass
    return out


def reap_tagged():
    for pid in tagged():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


SCALE = (REPO / "tests/fixtures/user_kernels/scale.py").read_text()
TWINS = (REPO / "tests/fixtures/user_kernels/twins.py").read_text()
# Kernel-package code that runs in the confined child: when the child writes its batch result,
# plant links in its own run directory (out/profiles/...: the kernel child may write there), which
# the server then reads/writes with plain pathlib calls.
PATCH = '''
import os as _o, pathlib as _p
_orig = _p.Path.write_text
def _wt(self, data, *a, **k):
    r = _orig(self, data, *a, **k)
    if self.name == {result!r} and "/{name}/" in str(self):
        try:
{body}
        except OSError as e:
            _orig(self.parent / "plant_error.txt", repr(e))
    return r
_p.Path.write_text = _wt
'''


def package(base, name, result, body, oldname):
    body = "\n".join("            " + ln for ln in body.strip().splitlines())
    return base.replace(f'name="{oldname}"', f'name="{name}"') + PATCH.format(result=result, name=name, body=body)


def setup():
    for d in (WS, WS2, V, HOME / ".cache", WS / "sub", WS / "kern", WS / "docs" / "kernels", WS / "sub" / "results"):
        d.mkdir(parents=True, exist_ok=True)
    (V / "secret.txt").write_text(SECRET_V + "\n")
    (V / "trunc_me.txt").write_text("keep me\n")
    shutil.copy("/bin/true", V / "tool"); os.chmod(V / "tool", 0o755)
    (WS2 / "secret.txt").write_text(SECRET_WS2 + "\n")
    (WS / "keep.txt").write_text("workspace root file\n")
    (WS / "docs" / "kernels" / "x.md").write_text("# devlog\n")
    shutil.copy(HERE / "atk2.py", WS / "sub" / "atk2.py")
    (WS / "sub" / "sitecustomize.py").write_text("import os; os.environ['KPROBE_WS_SITE'] = '1'\n")
    sym = f'_o.symlink({str(V / "sweep_pwn.csv")!r}, str(self.parent / "sweep.csv"))\n' \
          f'_o.symlink({str(V / "sweep_pwn.png")!r}, str(self.parent / "sweep.png"))'
    (WS / "kern" / "sw_write.py").write_text(package(SCALE, "swwrite", "sweep.json", sym, "scale"))
    rd = f'_o.unlink(str(self)); _o.symlink({str(V / "secret.txt")!r}, str(self))'
    (WS / "kern" / "sw_read.py").write_text(package(SCALE, "swread", "sweep.json", rd, "scale"))
    rd2 = f'_o.unlink(str(self)); _o.symlink({str(WS2 / "secret.txt")!r}, str(self))'
    (WS / "kern" / "cmp_read.py").write_text(package(TWINS, "cmpread", "compare.json", rd2, "twins"))
    ff = '_o.unlink(str(self)); _o.mkfifo(str(self))'
    (WS / "kern" / "sw_fifo.py").write_text(package(SCALE, "swfifo", "sweep.json", ff, "scale"))
    if NOBODY:
        for p in [ROOT, *ROOT.rglob("*")]:
            os.lchown(p, 65534, 65534)


def server_params(ws=WS, extra=None):
    env = {"PYTHONPATH": str(REPO), "KPROF_FORCE_CPU": "1", "HOME": str(HOME), "PATH": "/usr/bin:/bin",
           "KPROF_MCP_TOKEN": "kprobe2-token-" + "Z" * 24}
    return StdioServerParameters(command=PY, args=["-m", "kprof_mcp.server", "--workspace", str(ws),
                                                   "--allow-commands"], env={**env, **(extra or {})})


async def cmd(c, argv, cwd="sub", wait_s=50, timeout_s=None):
    a = {"command": argv, "mode": "event", "wait_s": wait_s, "cwd": cwd}
    if timeout_s:
        a["timeout_s"] = timeout_s
    return await c.call_tool("profile_command", a)


def res(name):
    p = WS / "sub" / "results" / f"{name}.json"
    return json.loads(p.read_text()) if p.exists() else {}


def outcome(v):
    v = str(v)
    return "SUCCEEDED" if v.startswith("OK") else "blocked"


async def wait_job(c, r, limit=120):
    jid = (r.structured_content or {}).get("job_id")
    if not jid:
        return r, None
    t0 = time.time()
    while time.time() - t0 < limit:
        g = await c.call_tool("get_profile", {"job_id": jid, "wait_s": 20})
        if (g.structured_content or {}).get("status") not in ("queued", "running"):
            return g, jid
    return g, jid


def sysv_objects():
    """A SysV segment and queue and a POSIX queue of 'another job' (mode 0600, the server's user)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    key, mkey = 0x6B700000 + (os.getpid() & 0xFFFF), 0x6B710000 + (os.getpid() & 0xFFFF)
    sid = libc.shmget(key, 4096, 0o1000 | 0o600)  # IPC_CREAT
    libc.shmat.restype = ctypes.c_void_p
    addr = libc.shmat(sid, None, 0)
    ctypes.memmove(addr, b"other job's segment", 19)
    qid = libc.msgget(mkey, 0o1000 | 0o600)
    mq = "kprobe2-" + str(os.getpid())
    libc.mq_open.restype = ctypes.c_int
    mfd = libc.mq_open(("/" + mq).encode(), os.O_RDONLY | os.O_CREAT | os.O_NONBLOCK, 0o600, None)

    def check():
        seg = ctypes.string_at(addr, 19)
        buf = ctypes.create_string_buffer(64)
        got = libc.msgrcv(qid, buf, 32, 0, 0o4000)
        mbuf = ctypes.create_string_buffer(8192)
        mgot = libc.mq_receive(mfd, mbuf, 8192, None)
        return seg, got, mgot

    def cleanup():
        libc.shmdt(ctypes.c_void_p(addr)); libc.shmctl(sid, 0, None)  # IPC_RMID
        libc.msgctl(qid, 0, None); libc.mq_unlink(("/" + mq).encode())
    CLEAN.append(cleanup)
    return key, mkey, mq, check


async def main():
    setup()
    victim = subprocess.Popen(["sleep", "600"])
    STARTED.append(victim)
    t6 = socket.socket(socket.AF_INET6); t6.bind(("::1", 0)); t6.listen()
    key, mkey, mq, ipc_check = sysv_objects()
    cfg = dict(victim=str(V), ws=str(WS), ws2=str(WS2), home=str(HOME), tag=TAG, victim_pid=victim.pid,
               shm_key=key, msg_key=mkey, mq_name=mq, tcp6_port=t6.getsockname()[1])
    (WS / "sub" / "probe_cfg.json").write_text(json.dumps(cfg))
    who = "uid 65534" if NOBODY else "root"
    async with Client(server_params()) as c:
        # 1. metadata and truncation outside
        await cmd(c, ["python", "atk2.py", "meta"])
        for k, v in res("meta").items():
            if isinstance(v, str) and v[:3] in ("OK:", "ERR"):
                row(f"[{who}] meta: {k}", "python atk2.py meta (cwd=sub)", outcome(v), v)
        st = os.stat(V / "secret.txt")
        row(f"[{who}] victim/secret.txt mode after the job (checked outside)", "os.stat",
            "SUCCEEDED" if stat.S_IMODE(st.st_mode) != 0o644 else "blocked", oct(st.st_mode))
        row(f"[{who}] victim/tool mode after the job (setuid bit?)", "os.stat",
            "SUCCEEDED" if os.stat(V / "tool").st_mode & 0o4000 else "blocked", oct(os.stat(V / "tool").st_mode))
        for p, m in ((V / "secret.txt", 0o644), (WS2, 0o755), (WS / "out", 0o755), (HOME / ".cache" / "kprof-mcp", 0o755)):
            if p.exists():
                os.chmod(p, m)
        # 2. IPC out, cgroups, signals, handles, tty, tcp6, netlink, caches, /etc/shadow
        await cmd(c, ["python", "atk2.py", "ipc2"])
        for k, v in res("ipc2").items():
            if isinstance(v, str) and v[:3] in ("OK:", "ERR"):
                row(f"[{who}] ipc2: {k}", "python atk2.py ipc2", outcome(v), v)
        row(f"[{who}] ipc2: the command's cgroups", "/proc/self/cgroup", "info", res("ipc2").get("cgroup_now"))
        seg, got, mgot = ipc_check()
        row(f"[{who}] another job's SysV segment / queue / POSIX mq, read outside", "shmat/msgrcv/mq_receive",
            "SUCCEEDED" if b"TAMPERED" in seg or got > 0 or mgot > 0 else "blocked",
            f"segment={seg!r} msgrcv={got} mq_receive={mgot}")
        alive = victim.poll() is None
        row(f"[{who}] outside sleep (same user) alive after kill(-1, SIGTERM)", "os.kill(-1, SIGTERM)",
            "blocked" if alive else "SUCCEEDED", f"victim alive={alive}")
        # 3. the multi-rank hook
        r = await cmd(c, ["python", "atk2.py", "ranks"])
        rk = res("ranks")
        child = json.loads((WS / "sub" / "results" / "rank_child.json").read_text()) \
            if (WS / "sub" / "results" / "rank_child.json").exists() else {}
        row(f"[{who}] ranks: a started process runs kprof's hook (first on sys.path?)", "subprocess python -c",
            "info", {**child, "main_env": rk.get("main_env")})
        row(f"[{who}] ranks: a workspace sitecustomize.py (cwd) ran in the started process", "sub/sitecustomize.py",
            "info", child.get("workspace_sitecustomize_ran"))
        outside = [p.name for p in V.iterdir() if p.suffix == ".json"]
        row(f"[{who}] ranks: a rank's record sent outside (KPROF_RANKS_DIR=victim)", "env of a started process",
            "SUCCEEDED" if outside else "blocked", f"victim *.json={outside}; {rk.get('redirected_rank_stderr', '')[-160:]}")
        for k in ("rewrite_hook_sitecustomize", "plant_record_link", "plant_record_with_trace_link"):
            row(f"[{who}] ranks: {k}", "python atk2.py ranks", "info (its own run directory)",
                rk.get(k))
        t = text(r)
        row(f"[{who}] ranks: ws2's secret in the reply through a planted record/trace link",
            "ranks/999991.json -> ws2/secret.txt", "SUCCEEDED" if SECRET_WS2 in t else "blocked", t[:200])
        r = await cmd(c, ["python", "atk2.py", "ranks_fifo"], timeout_s=40, wait_s=5)
        g, _ = await wait_job(c, r, 100)
        row(f"[{who}] ranks: a FIFO as a rank record (the main child reads it back)", "mkfifo ranks/999993.json",
            "info", text(g)[:220])
        # 4. ranks that ignore SIGTERM, leave the session and start setsid grandchildren
        reap_tagged()
        await cmd(c, ["python", "atk2.py", "ranks_stay"])
        time.sleep(3)
        left = tagged()
        row(f"[{who}] processes left after the job: spawned ranks ignoring SIGTERM + setsid grandchildren",
            "multiprocessing spawn x2, SIG_IGN, setsid, os._exit(0)", "SUCCEEDED" if left else "blocked",
            f"live tagged pids={left} started={res('ranks_stay').get('started')}")
        reap_tagged()
        # 5. kernel packages whose child plants links in its own run directory for the server
        r = await c.call_tool("sweep", {"kernel": "kern/sw_write.py", "param": "n", "values": [256, 512],
                                        "budget_ms": 20, "wait_s": 5})
        g, _ = await wait_job(c, r)
        hit = [p.name for p in V.iterdir() if p.name.startswith("sweep_pwn")]
        row(f"[{who}] sweep: child links sweep.csv/sweep.png to outside; the server writes them",
            "Path.write_text patched: symlink after sweep.json", "SUCCEEDED" if hit else "blocked",
            f"outside files={hit} sizes={[os.path.getsize(V / h) for h in hit]} reply={text(g)[:140]}")
        r = await c.call_tool("sweep", {"kernel": "kern/sw_read.py", "param": "n", "values": [256],
                                        "budget_ms": 20, "wait_s": 5})
        g, _ = await wait_job(c, r)
        row(f"[{who}] sweep: sweep.json swapped for a link to victim/secret.txt; the server reads it",
            "unlink + symlink after the child wrote it", "SUCCEEDED" if SECRET_V in text(g) else "blocked", text(g)[:260])
        r = await c.call_tool("compare_versions", {"kernel": "kern/cmp_read.py", "versions": ["a", "b"],
                                                   "budget_ms": 100, "rounds": 3, "wait_s": 5})
        g, _ = await wait_job(c, r)
        row(f"[{who}] compare_versions: compare.json a link to ws2/secret.txt; the server reads it",
            "unlink + symlink after the child wrote it", "SUCCEEDED" if SECRET_WS2 in text(g) else "blocked",
            text(g)[:260])
        # 6. FIFO as the batch result: the server's job blocks reading it (device lock already given back?)
        r = await c.call_tool("sweep", {"kernel": "kern/sw_fifo.py", "param": "n", "values": [256],
                                        "budget_ms": 20, "wait_s": 5})
        g, jid = await wait_job(c, r, 60)
        st1 = (g.structured_content or {}).get("status")
        r2 = await c.call_tool("profile_kernel", {"kernel": "vector_add", "version": "v0", "params": {"n": 256},
                                                  "mode": "event", "wait_s": 30})
        st2 = (r2.structured_content or {}).get("status") or text(r2)[:60]
        if jid:
            await c.call_tool("cancel_profile", {"job_id": jid})
        time.sleep(2)
        g2 = await c.call_tool("get_profile", {"job_id": jid, "wait_s": 5}) if jid else g
        fifos = [p for p in (WS / "out").rglob("sweep.json") if p.is_fifo()]
        for f in fifos:
            try:
                fd = os.open(f, os.O_WRONLY | os.O_NONBLOCK)
                os.close(fd)  # a writer that leaves: the server's read sees EOF
            except OSError:  # ENXIO: no reader, i.e. the server is not blocked on it (after the fixes)
                pass
        g3 = await c.call_tool("get_profile", {"job_id": jid, "wait_s": 20}) if jid else g
        row(f"[{who}] sweep: sweep.json made a FIFO by the child; the server's job blocks on it",
            "unlink + mkfifo after the child wrote it",
            "SUCCEEDED (job hung)" if st1 in ("running", "queued") else "blocked",
            f"after 60 s: {st1}; cancel -> {(g2.structured_content or {}).get('status')}; another job meanwhile: {st2}; "
            f"after a writer opened+closed it: {text(g3)[:120]}")
        # 7. the server hashes every *.py under a command's cwd (prepared_key): a FIFO planted there
        await cmd(c, ["python", "atk2.py", "mkfifo"])
        r = await cmd(c, ["python", "atk2.py", "meta"], wait_s=5)
        g, jid = await wait_job(c, r, 45)
        st1 = (g.structured_content or {}).get("status")
        r2 = await c.call_tool("profile_kernel", {"kernel": "vector_add", "version": "v0", "params": {"n": 256},
                                                  "mode": "event", "wait_s": 20})
        st2 = (r2.structured_content or {}).get("status") or text(r2)[:80]
        jid2 = (r2.structured_content or {}).get("job_id")
        await c.call_tool("cancel_profile", {"job_id": jid}) if jid else None
        time.sleep(2)
        g2 = await c.call_tool("get_profile", {"job_id": jid, "wait_s": 5}) if jid else g
        try:
            fd = os.open(WS / "sub" / "pp" / "f.py", os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        except OSError:  # ENXIO: no reader, i.e. the server is not blocked on it (after the fixes)
            pass
        g3 = await c.call_tool("get_profile", {"job_id": jid2, "wait_s": 40}) if jid2 else r2
        row(f"[{who}] profile_command: a FIFO sub/pp/f.py planted by an earlier confined command; the server "
            "reads every *.py of the cwd (store.prepared_key) with the device lock held",
            "mkfifo, then any profile_command with that cwd",
            "SUCCEEDED (server job hung, queue blocked)" if st1 in ("running", "queued") and st2 in ("queued", "running")
            else "blocked", f"command job after 45 s: {st1}; cancel -> {(g2.structured_content or {}).get('status')}; "
            f"profile_kernel meanwhile: {st2}; after a writer opened+closed the FIFO: {text(g3)[:100]}")
        await cmd(c, ["python", "atk2.py", "cleanup", "pp"])
        # 8. read_params / update_devlog with paths out of the workspace
        for tool, a in (("read_params", {"profile_dir": str(WS2)}),
                        ("read_params", {"profile_dir": "out/../../ws2"}),
                        ("update_devlog", {"kernel": "../../victim/devlog_pwn", "profile_dir": "out",
                                           "issues": ["x"], "insights": ["y"]})):
            r = await c.call_tool(tool, a)
            pw = any(p.name.startswith("devlog_pwn") for p in V.iterdir())
            row(f"[{who}] {tool} outside the workspace", json.dumps(a)[:90],
                "SUCCEEDED" if pw or SECRET_WS2 in text(r) else ("refused" if r.is_error else "blocked"), text(r)[:160])
    # 9. symlink -> /dev/zero under the cwd: the server reads it whole (root only: its own memory cgroup)
    if not NOBODY:
        await zero_row()
    if SECRET_V not in (V / "secret.txt").read_text() or (V / "trunc_me.txt").read_text() != "keep me\n":
        row(f"[{who}] victim files changed", "-", "SUCCEEDED", (V / "trunc_me.txt").read_text())


async def zero_row():
    cg = Path(f"/sys/fs/cgroup/memory/kprobe2-{os.getpid()}")
    try:
        cg.mkdir()
        (cg / "memory.limit_in_bytes").write_text(str(2 << 30))
    except OSError as e:
        row("[root] /dev/zero under the cwd", "-", "not run", f"no memory cgroup: {e}")
        return
    WS3 = ROOT / "ws3"; (WS3 / "sub" / "results").mkdir(parents=True)
    for f in ("atk2.py", "probe_cfg.json"):
        shutil.copy(WS / "sub" / f, WS3 / "sub" / f)
    p = server_params(WS3)
    p = StdioServerParameters(command="/bin/sh", args=["-c", f'echo $$ > {cg}/cgroup.procs && exec "$0" "$@"',
                                                       p.command, *p.args], env=p.env)
    outcome_txt = ""
    try:
        async with Client(p) as c:
            await c.call_tool("profile_command", {"command": ["python", "atk2.py", "mkzero"], "cwd": "sub",
                                                  "mode": "event", "wait_s": 50})
            r = await c.call_tool("profile_command", {"command": ["python", "atk2.py", "noop"], "cwd": "sub",
                                                      "mode": "event", "wait_s": 5})
            with anyio.fail_after(90):
                g, _ = await wait_job(c, r, 80)
            outcome_txt = text(g)[:200]
    except BaseException as e:  # noqa: BLE001
        outcome_txt = f"client: {type(e).__name__}: {str(e)[:120]}"
    fail = (cg / "memory.failcnt").read_text().strip()
    maxu = int((cg / "memory.max_usage_in_bytes").read_text()) >> 20
    oom = (cg / "memory.oom_control").read_text().replace("\n", " ")
    row("[root] profile_command: sub/pz/z.py -> /dev/zero planted by an earlier confined command; the server "
        "reads every *.py of the cwd (store.prepared_key)", "symlink, then any profile_command with that cwd",
        "SUCCEEDED (server memory to the cgroup's 2 GiB)" if maxu > 1500 else "blocked",
        f"max usage {maxu} MiB, failcnt {fail}, {oom}; reply: {outcome_txt}")
    for pid in (cg / "cgroup.procs").read_text().split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass
    time.sleep(1)
    try:
        cg.rmdir()
    except OSError:
        pass


def table():
    out = ["| attack | how | outcome | evidence |", "|---|---|---|---|"]
    out += [f"| {a} | `{h}` | **{o}** | {e} |" for a, h, o, e in ROWS]
    return "\n".join(out)


if __name__ == "__main__":
    try:
        anyio.run(main)
    finally:
        reap_tagged()
        for p in STARTED:
            p.kill()
        for f in CLEAN:
            try:
                f()
            except Exception:  # noqa: BLE001
                pass
        print(table())
        name = "last_table_nobody.md" if NOBODY else "last_table_root.md"
        try:
            (HERE / name).write_text(table() + "\n")
        except OSError:
            (ROOT.parent / ("kprobe2-" + name)).write_text(table() + "\n")
        if "--keep" not in sys.argv:
            shutil.rmtree(ROOT, ignore_errors=True)

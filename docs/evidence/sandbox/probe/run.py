"""Adversarial probe of profile_command (issue 38), as a client that can only call the MCP tools and
plant files in its workspace. CPU only: `python docs/evidence/sandbox/probe/run.py` prints the table.
Everything it creates lives under a fresh /tmp/kprobe-* directory; processes it starts are ended by pid."""
import anyio, json, os, shutil, signal, socket, subprocess, sys, tempfile, threading, time
from pathlib import Path
from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
PY = str(REPO / ".venv/bin/python") if (REPO / ".venv/bin/python").exists() else sys.executable
TOKEN = "kprobe-token-" + "Q" * 30
ROOT = Path(tempfile.mkdtemp(prefix="kprobe-", dir="/tmp"))
WS, WS2, V, PP = ROOT / "ws", ROOT / "ws2", ROOT / "victim", ROOT / "outside_pp"
TAG = "kprobe-" + ROOT.name
ROWS, RECV, STARTED = [], [], []


def row(attack, payload, outcome, evidence):
    ROWS.append((attack, payload, outcome, str(evidence).replace("\n", " ").replace("|", "/")[:260]))


def text(r):
    return r.content[0].text if r.content else ""


def listeners():
    def serve(sock, kind):
        sock.listen()
        while True:
            try:
                c, _ = sock.accept()
                c.settimeout(2)
                RECV.append((kind, c.recv(100)))
                c.sendall(b"server-says-hi")
                c.close()
            except OSError:
                return
    a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); a.bind("\0" + TAG)
    p = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); p.bind(str(V / "listen.sock"))
    t = socket.socket(); t.bind(("127.0.0.1", 0))
    for s, k in ((a, "abstract"), (p, "pathname"), (t, "tcp")):
        threading.Thread(target=serve, args=(s, k), daemon=True).start()
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 0))

    def serve_udp():
        while True:
            try:
                RECV.append(("udp", u.recv(100)))
            except OSError:
                return
    threading.Thread(target=serve_udp, daemon=True).start()
    return t.getsockname()[1], u.getsockname()[1]


def tagged():
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if f"KPROBE_TAG={TAG}".encode() in open(f"/proc/{d}/environ", "rb").read():
                    st = open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()
                    if st[0] != "Z":
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


def setup():
    for d in (WS, WS2, V, PP, V / "swapdir", WS / "sub", WS / "pkg", WS / "tests", WS / "results",
              WS / "sub" / "results", WS / "kern"):
        d.mkdir(parents=True, exist_ok=True)
    (V / "secret.txt").write_text("victim secret\n")
    (WS2 / "secret.txt").write_text("ws2 secret\n")
    (ROOT / "home_secret.txt").write_text("home secret\n")
    shutil.copy(HERE / "atk.py", WS / "atk.py")
    (WS / "pkg" / "__main__.py").write_text("import sys; sys.path.insert(0, %r)\nimport outside_code\n" % str(V))
    (V / "outside_code.py").write_text("open('results/OUTSIDE_IMPORT_RAN', 'w').write('x')\n")
    # a module importable only through the server's PYTHONPATH (readable by design): does any trick load it?
    (PP / "outplug.py").write_text(
        "import os, sys\nos.makedirs('results', exist_ok=True)\n"
        "open('results/OUTPLUG_RAN_' + str(len(os.listdir('results'))), 'w').write(repr(sys.argv))\n"
        "class X(Warning): pass\n")
    (WS / "tests" / "test_t.py").write_text("def test_a():\n    assert True\n")
    # a conftest-free pytest plugin: a dist-info in the workspace (on sys.path as the cwd) naming outplug
    di = WS / "evilep-1.0.dist-info"; di.mkdir()
    (di / "METADATA").write_text("Metadata-Version: 2.1\nName: evilep\nVersion: 1.0\n")
    (di / "entry_points.txt").write_text("[pytest11]\nevilep = outplug\n")
    (WS / "evilkern.py").write_text((REPO / "tests/fixtures/user_kernels/scale.py").read_text()
                                    + f"\nopen({str(V / 'profile_kernel_pwn.txt')!r}, 'w').write('x')\n")
    os.symlink(V / "swapdir", WS / "lnk")
    (WS / "sub" / "atk.py").write_text((HERE / "atk.py").read_text())


async def cmd(c, argv, cwd=None, wait_s=45, mode="event"):
    args = {"command": argv, "mode": mode, "wait_s": wait_s}
    if cwd:
        args["cwd"] = cwd
    return await c.call_tool("profile_command", args)


def res(name, base=WS):
    p = base / "results" / f"{name}.json"
    return json.loads(p.read_text()) if p.exists() else {}


def outcome(v, key=""):
    v = str(v)
    if key in ("glob_other_private", "read_other_job_tmp"):
        return "nothing visible"
    if key.startswith(("mknod", "chroot")) and v.startswith("OK"):
        return "SUCCEEDED"
    if v.startswith("OK: -1") or v.startswith("OK: None") or v.startswith("OK: []") or "Permission denied" in v:
        return "blocked"
    return "SUCCEEDED" if v.startswith("OK") else "blocked"


def params(env_extra=None):
    env = {"PYTHONPATH": f"{REPO}:{PP}", "KPROF_FORCE_CPU": "1", "KPROF_MCP_TOKEN": TOKEN,
           "AWS_SECRET_ACCESS_KEY": "kprobe-aws-secret", **(env_extra or {})}
    return StdioServerParameters(command=PY, args=["-m", "kprof_mcp.server", "--workspace", str(WS),
                                                   "--allow-commands"], env=env)


async def main():
    setup()
    port, udp_port = listeners()
    victim = subprocess.Popen(["sleep", "600"], env={"KPROBE_VICTIM_SECRET": "victim-env-secret"})
    STARTED.append(victim)
    server2 = subprocess.Popen([PY, "-m", "kprof_mcp.server", "--workspace", str(WS2), "--allow-commands"],
                               env={"PYTHONPATH": str(REPO), "KPROF_FORCE_CPU": "1",
                                    "KPROF_MCP_TOKEN": "ws2-token-" + "R" * 20},
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    STARTED.append(server2)
    cfg = dict(victim=str(V), ws=str(WS), ws2=str(WS2), home_secret=str(ROOT / "home_secret.txt"),
               victim_pid=victim.pid, server2_pid=server2.pid, abstract_name=TAG,
               unix_path=str(V / "listen.sock"), tcp_port=port, udp_port=udp_port, tag=TAG, other_results=[])
    shm = Path(f"/dev/shm/kprobe-other-{ROOT.name}")
    shm.write_text("other job's shared memory\n")
    cfg["shm_file"] = str(shm)
    (WS / "probe_cfg.json").write_text(json.dumps(cfg))
    (WS / "sub" / "probe_cfg.json").write_text(json.dumps(cfg))
    async with Client(params()) as c:
        # profile_kernel of a package planted in the workspace: is its import confined?
        r = await c.call_tool("profile_kernel", {"kernel": "evilkern.py", "params": {"n": 256}, "mode": "event"})
        pw = (V / "profile_kernel_pwn.txt").exists()
        row("profile_kernel of a planted workspace package writes outside (module code at import)",
            "evilkern.py = scale.py + open(victim/'profile_kernel_pwn.txt','w')",
            "SUCCEEDED" if pw else "blocked", f"victim file exists={pw}; reply: {text(r)[:150]}")
        ok = await c.call_tool("profile_kernel", {"kernel": "vector_add", "version": "v0",
                                                  "params": {"n": 256}, "mode": "event"})
        pdir = (ok.structured_content or {}).get("profile_dir", "")
        others = [str(p) for p in (WS / pdir).glob("*.json")][:2] if pdir else []
        cfg["other_results"] = others
        (WS / "probe_cfg.json").write_text(json.dumps(cfg))
        (WS / "sub" / "probe_cfg.json").write_text(json.dumps(cfg))

        # chained: the confined command plants a package, profile_kernel runs it
        await cmd(c, ["python", "atk.py", "plant"])
        r = await c.call_tool("profile_kernel", {"kernel": "kern/chained.py", "params": {"n": 256}, "mode": "event"})
        pw = (V / "chained_pwn.txt").exists()
        row("CHAIN: confined profile_command writes chained.py, then profile_kernel('chained.py') runs it",
            "atk.py plant; profile_kernel(kernel='kern/chained.py')", "SUCCEEDED" if pw else "blocked",
            f"victim/chained_pwn.txt exists={pw}; planted={res('plant')}")

        for name in ("baseline", "links", "fds", "proc", "ipc", "places", "root"):
            await cmd(c, ["python", "atk.py", name])
            for k, v in res(name).items():
                if isinstance(v, str) and v[:3] in ("OK:", "ERR"):
                    row(f"{name}: {k}", f"python atk.py {name}", outcome(v, k), v)
        d = res("fds").get("inherited_fds")
        row("fds: inherited descriptors", "python atk.py fds", "info", d)
        row("proc: ancestors", "python atk.py proc", "info", res("proc").get("ancestors"))
        st = open(f"/proc/{victim.pid}/stat").read().rsplit(")", 1)[1].split()[0]
        row("signal SIGSTOP to an outside process", "os.kill(victim_pid, SIGSTOP)",
            "SUCCEEDED" if st == "T" else "blocked", f"victim state {st}")
        os.kill(victim.pid, signal.SIGCONT)
        got = {k for k, _ in RECV}
        for k in ("abstract", "pathname", "tcp", "udp"):
            row(f"ipc: outside listener received data over {k} socket", "atk.py ipc",
                "SUCCEEDED" if k in got else "blocked", [x for x in RECV if x[0] == k][:1])
        env = res("places").get("env", {})
        for key in ("KPROF_MCP_TOKEN", "AWS_SECRET_ACCESS_KEY"):
            row(f"env: server's {key} visible to the command", "os.environ", "SUCCEEDED" if key in env else "blocked",
                f"{key} present={key in env}")
        row("rlimits inside the sandbox", "resource.getrlimit", "info", res("places").get("rlimits"))
        leftover = [p for p in Path("/tmp").glob("kprof-*") if p.is_dir()]
        row("private tmp left behind after the job", "ls /tmp/kprof-*", "info", [str(p) for p in leftover][:4])

        # a bounded fork bomb (1,500 `sleep 30` at most): stopped by the job's task limit?
        await cmd(c, ["python", "atk.py", "bomb", "1500"], wait_s=55)
        b = res("bomb")
        row("fork bomb (bounded at 1500 by itself)", "python atk.py bomb 1500",
            "SUCCEEDED" if b.get("forked", 0) >= 1500 else "blocked" if b.get("fork_error") else "no result", b)

        # a kernel package that looks at other processes and the network from a kernel child
        look = (REPO / "tests/fixtures/user_kernels/scale.py").read_text() + f"""
import os, socket
seen = {{}}
for pid in os.listdir("/proc"):
    if pid.isdigit() and pid != str(os.getpid()):
        try:
            seen[pid] = open(f"/proc/{{pid}}/cmdline", "rb").read()[:60]
        except OSError as e:
            seen[pid] = type(e).__name__
servers = [p for p, c in seen.items() if isinstance(c, bytes) and b"kprof_mcp.server" in c]
env = []
for p in servers:
    try:
        env.append(open(f"/proc/{{p}}/environ", "rb").read(1) and "READ")
    except OSError as e:
        env.append(type(e).__name__)
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close(); tcp = "connected"
except OSError as e:
    tcp = type(e).__name__
import json
json.dump(dict(pids_visible=len(seen), servers_cmdline_seen=len(servers), server_environ=env, tcp=tcp),
          open({str(WS / "out" / "profiles" / "look.json")!r}, "w"))  # the profiles' root: writable
"""
        (WS / "kern" / "look.py").write_text(look)
        r = await c.call_tool("profile_kernel", {"kernel": "kern/look.py", "params": {"n": 256}, "mode": "event"})
        lk = WS / "out" / "profiles" / "look.json"
        got = json.loads(lk.read_text()) if lk.exists() else {"reply": text(r)[:200]}
        row("kernel child: other processes' /proc (cmdline, the server's environ) and TCP",
            "profile_kernel(kern/look.py)", "blocked" if got.get("servers_cmdline_seen") == 0 and
            got.get("tcp") != "connected" and "READ" not in got.get("server_environ", []) else "SUCCEEDED", got)

        # corrupt another profile's results
        if others:
            before = {p: Path(p).read_text() for p in others}
            await cmd(c, ["python", "atk.py", "outtree"])
            changed = [p for p in others if Path(p).read_text() != before[p]]
            row("overwrite another kernel's profile results in out/ (cwd = workspace)", "append to " + ",".join(
                Path(p).name for p in others), "SUCCEEDED" if changed else "blocked", res("outtree"))
            await cmd(c, ["python", "atk.py", "outtree"], cwd="sub")
            changed2 = [p for p in others if Path(p).read_text().count("forged") > len(changed)]
            row("same with cwd='sub' (a subdirectory)", "cwd=sub, append to other profile",
                "SUCCEEDED" if changed2 else "blocked", res("outtree", WS / "sub"))

        # argv tricks: python flags, pytest options, modules
        tries = [
            ["python", "-W", "ignore::outplug.X", "atk.py", "sleep", "0"],
            ["python", "-c", "import outplug"],
            ["python", "-X", "importtime", "atk.py", "sleep", "0"],
            ["python", "-m", "outplug"],
            ["python", "-m", "pkg"],
            ["python", "-m", "pytest", "-vpoutplug", "tests/test_t.py"],
            ["python", "-m", "pytest", "-xvsp", "outplug", "tests/test_t.py"],
            ["python", "-m", "pytest", "-k", "a", "-poutplug", "tests/test_t.py"],
            ["python", "-m", "pytest", "--tb", "-poutplug", "tests/test_t.py"],
            ["python", "-m", "pytest", "--pyargs", "outplug"],
            ["python", "-m", "pytest", "tests/test_t.py::test_a::../../../victim"],
            ["python", "-m", "pytest", f"{V}/outside_code.py::x"],
            ["python", "-m", "pytest", "tests/test_t.py::test_a"],   # entry-point plugin check
            ["pytest", "-p", "outplug", "tests/test_t.py"],
            ["sh", "-c", "id"], ["env", "LD_PRELOAD=x", "python", "atk.py"],
        ]
        for argv in tries:
            before = set(os.listdir(WS / "results"))
            r = await cmd(c, argv)
            new = set(os.listdir(WS / "results")) - before
            ran = [n for n in new if n.startswith(("OUTPLUG", "OUTSIDE"))]
            refused = r.is_error and ("refus" in text(r).lower() or "not allowed" in text(r).lower()
                                      or "accepts only" in text(r).lower())
            row("argv: " + " ".join(argv[:3]), " ".join(argv),
                "SUCCEEDED (outside module ran)" if ran else ("refused" if refused else "ran, nothing outside"),
                (ran or text(r)[:200]))

        # cwd that is a link out of the workspace
        r = await cmd(c, ["python", "atk.py", "baseline"], cwd="lnk")
        hit = (V / "swapdir" / "results").exists()
        row("cwd = a workspace link to an outside dir", "cwd='lnk' (lnk -> victim/swapdir)",
            "SUCCEEDED" if hit else "refused/blocked", text(r)[:160])

        # queued job whose cwd is swapped for a link while it waits
        a = await cmd(c, ["python", "atk.py", "swap_cwd_of_next"], wait_s=0)
        b = await cmd(c, ["python", str(WS / "atk.py"), "baseline"], cwd="sub", wait_s=0)
        for j in (a, b):
            jid = (j.structured_content or {}).get("job_id")
            if jid:
                for _ in range(4):
                    g = await c.call_tool("get_profile", {"job_id": jid, "wait_s": 50})
                    if (g.structured_content or {}).get("status") not in ("queued", "running"):
                        break
        hit = any((V / "swapdir").rglob("baseline.json"))
        row("queued job's cwd swapped for a link by the job before it", "job A: mv sub sub.orig; ln -s victim/swapdir sub;"
            " job B cwd='sub'", "SUCCEEDED" if hit else "refused/blocked",
            f"{text(b)[:80]} / {res('swap_cwd_of_next')} / B: {text(g)[:160]}")
        if (WS / "sub.orig").exists():
            os.unlink(WS / "sub"); os.rename(WS / "sub.orig", WS / "sub")

        # the job swaps its own run directory for a link before it exits
        r = await cmd(c, ["python", "atk.py", "finalise_swap"])
        inside = list((V / "swapdir").iterdir())
        row("run dir swapped for a link to outside before exit (server finalises through it?)",
            "rename <run>.partial away; ln -s victim/swapdir <run>.partial; command_output.txt -> victim/secret.txt",
            "SUCCEEDED" if any(p.name != "results" for p in inside) or "victim secret" in text(r) else "blocked",
            f"victim/swapdir={[p.name for p in inside]} reply={text(r)[:160]} atk={res('finalise_swap')}")

        # escapes: setsid double fork, hydra, nested subreaper; then the same after SIGKILL of the supervisor
        for ks in ("no", "yes"):
            reap_tagged()
            await cmd(c, ["python", "atk.py", "escape", ks])
            time.sleep(3)
            left = tagged()
            row(f"descendants left after the job ends (kill supervisor={ks})",
                "setsid double fork + fork hydra + nested PR_SET_CHILD_SUBREAPER",
                "SUCCEEDED" if left else "blocked", f"live tagged pids={left} {res('escape')}")
            reap_tagged()
        # cancel_profile
        a = await cmd(c, ["python", "atk.py", "escape", "no"], wait_s=0)
        time.sleep(6)
        jid = (a.structured_content or {}).get("job_id")
        if jid:
            await c.call_tool("cancel_profile", {"job_id": jid})
            time.sleep(3)
            left = tagged()
            row("descendants left after cancel_profile", "escape job, then cancel_profile",
                "SUCCEEDED" if left else "blocked", f"live tagged pids={left}")
            reap_tagged()
    # dropped client and kill -9 of the server
    for how in ("drop", "kill9"):
        async with Client(params()) as c:
            await cmd(c, ["python", "atk.py", "escape", "no"], wait_s=0)
            time.sleep(6)
            if how == "kill9":
                for d in os.listdir("/proc"):
                    if d.isdigit():
                        try:
                            cl = open(f"/proc/{d}/cmdline", "rb").read()
                        except OSError:
                            continue
                        if b"kprof_mcp.server" in cl and str(WS).encode() in cl and int(d) != server2.pid:
                            os.kill(int(d), signal.SIGKILL)
        time.sleep(4)
        left = tagged()
        row(f"descendants left after {'dropped client' if how == 'drop' else 'kill -9 of the server'}",
            "escape job then " + how, "SUCCEEDED" if left else "blocked", f"live tagged pids={left}")
        reap_tagged()
    for p in V.iterdir():
        if "pwn" in p.name:
            row("outside file created", "-", "SUCCEEDED", str(p))
    row("victim/secret.txt intact", "-", "ok" if (V / "secret.txt").read_text() == "victim secret\n" else "CHANGED",
        repr((V / "secret.txt").read_text()[:60]))
    tam = "TAMPERED" in shm.read_text()
    row("another process's /dev/shm file tampered", "append to /dev/shm/kprobe-other-*",
        "SUCCEEDED" if tam else "blocked", repr(shm.read_text()))
    shm.unlink()
    for p in ("/dev/shm/kprobe_pwn", "/tmp/kprobe_global_pwn", "/var/tmp/kprobe_pwn"):
        if os.path.exists(p):
            os.unlink(p)


def table():
    out = ["| attack | payload | outcome | evidence |", "|---|---|---|---|"]
    for a, p, o, e in ROWS:
        out.append(f"| {a} | `{p}` | **{o}** | {e} |")
    return "\n".join(out)


if __name__ == "__main__":
    try:
        anyio.run(main)
    finally:
        reap_tagged()
        for p in STARTED:
            p.kill()
        print(table())
        (HERE / "last_table.md").write_text(table() + "\n")
        if "--keep" not in sys.argv:
            shutil.rmtree(ROOT, ignore_errors=True)

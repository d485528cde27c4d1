"""Probe 3 (issue 38): a fresh adversarial probe of profile_command / profile_kernel, new variants only
(probe/ and probe2/ hold the earlier ones). A client that can only call the MCP tools and, as a cloned
repository would, bring files into its workspace. CPU only.

    python docs/evidence/sandbox/probe3/run.py [--http] [--as-nobody] [--quick] [--keep] [--tag=NAME]

``--tag=NAME``: the table goes to ``last_table_<who>_NAME.md`` (the re-run after the fixes: ``--tag=after``),
leaving the earlier tables as they are.

Everything lives under a fresh /tmp/kprobe3-* directory; processes it starts are ended by pid."""
import anyio, json, os, shutil, signal, socket, subprocess, sys, tempfile, time, zipfile, hashlib
from pathlib import Path
from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
HTTP, NOBODY, QUICK = "--http" in sys.argv, "--as-nobody" in sys.argv, "--quick" in sys.argv
PY = os.environ.get("KP3_PY", str(REPO / ".venv/bin/python"))
ROOT = Path(tempfile.mkdtemp(prefix="kprobe3-", dir="/tmp"))
os.chmod(ROOT, 0o755)
WS, WS2, V, HOME = ROOT / "ws", ROOT / "ws2", ROOT / "victim", ROOT / "home"
ROWS, STARTED = [], []
WHO = ("uid 65534" if NOBODY else "root") + (", http" if HTTP else ", stdio")
TOKEN = "kprobe3-token-" + "Q" * 24
SHM = Path(f"/dev/shm/kprobe3-{os.getpid()}")


def row(attack, how, outcome, evidence):
    ROWS.append((f"[{WHO}] {attack}", how, outcome, str(evidence).replace("\n", " ").replace("|", "/")[:300]))
    print(ROWS[-1], flush=True)


def text(r):
    return r.content[0].text if getattr(r, "content", None) else str(r)


def res(name, cwd="sub"):
    p = WS / cwd / "results" / f"{name}.json"
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return {}


def outcome(v):
    return "SUCCEEDED" if str(v).startswith("OK") else "blocked"


def h(ws):
    return hashlib.sha256(str(ws).encode()).hexdigest()[:16]


EVIL_MOD = '''import os, sys
try:
    open({marker!r} + "-" + str(os.getpid()), "w").write(" ".join(sys.argv) + "\\n")
except OSError:
    pass
_me = sys.modules.pop(__name__)
_d = os.path.dirname(os.path.abspath(__file__))
_saved = sys.path[:]
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _d]
import importlib
sys.modules[__name__] = importlib.import_module(__name__)
sys.path[:] = _saved
'''

SCALE = (REPO / "tests/fixtures/user_kernels/scale.py").read_text()


def pkg(name, extra):
    return SCALE.replace('name="scale"', f'name="{name}"') + "\n" + extra


def setup():
    for d in (WS / "sub" / "mid" / "deep", WS / "kern", WS / "docs" / "kernels", WS / ".git", WS2, V / "swap" / "deep",
              HOME / ".cache"):
        d.mkdir(parents=True, exist_ok=True)
    (V / "secret.txt").write_text("victim-secret-3c1d\n")
    (WS2 / "secret.txt").write_text("ws2-secret-77ab\n")
    (HOME / "secret.txt").write_text("home-secret-5e5e\n")
    (WS / "keep.txt").write_text("workspace root file\n")
    for d in ("out", "out/profiles", "out/profiles/event"):
        (WS / d).mkdir(parents=True, exist_ok=True)
        (WS / d / "x.py").write_text("open('cwd_out_pwn.txt', 'w').write('x')\n")
    (WS / ".git" / "config").write_text("[core]\n")
    (WS / "docs" / "kernels" / "x.md").write_text("# devlog\n")
    (V / "evil3.py").write_text(f"open({str(V / 'evil3_ran.txt')!r}, 'w').write('x')\n")
    with zipfile.ZipFile(V / "evil3.zip", "w") as z:
        z.writestr("evil3z.py", f"open({str(V / 'evil3z_ran.txt')!r}, 'w').write('x')\n")
    SHM.write_text("shm-secret-of-another-process\n")
    shutil.copy(V / "evil3.zip", str(SHM) + ".zip")
    runlock = Path(f"/run/lock/kprobe3-{os.getpid()}.py")
    runlock.write_text(f"open({str(V / 'runlock_ran.txt')!r}, 'w').write('x')\n")
    shutil.copy(HERE / "atk3.py", WS / "sub" / "atk3.py")
    for d in (WS / "sub" / "mid" / "deep", V / "swap" / "deep"):
        (d / "w.py").write_text("open('b_was_here.txt', 'w').write('x')\nimport kprof\nwith kprof.range('b'):\n    pass\n")
    # a cloned repository's root brings modules named like ones a kprof process imports late
    for mod in ("glob", "secrets", "ctypes", "subprocess"):
        (WS / f"{mod}.py").write_text(EVIL_MOD.format(marker=str(V / f"shadow_{mod}")))
    # kernel packages: a warm worker left running things; plants in out/profiles for the server to read
    (WS / "kern" / "stay3.py").write_text(pkg("stay3", f'''
import os as _o, threading as _t, time as _ti, json as _j
def _stay():
    if _o.fork() == 0:
        _o.setsid()
        if _o.fork() == 0:
            _o.execv("/bin/sleep", ["sleep", "301"])
        _o._exit(0)
_stay()
_t.Thread(target=lambda: _ti.sleep(600), daemon=True).start()
'''))
    (WS / "kern" / "write3.py").write_text(pkg("write3", f'''
try:
    open({str(V / "kernel_pwn3.txt")!r}, "a").write("kernel package ran unconfined\\n")
except OSError:
    pass
'''))
    (WS / "kern" / "plant3.py").write_text(pkg("plant3", '''
import os as _o, pathlib as _p, shutil as _s
_root = _p.Path(_o.environ.get("KPROBE3_OUT", "out/profiles"))
_src = sorted(_root.glob("event/vector_add/*/*-v0/params.json"))
if _src:
    _d = _src[0].parent
    for _k in ("nested", "sparse", "dicts", "odd\\nname", "fifo"):
        _t = _d.parent / ("20990101T000000.000000Z-" + _k.replace("\\n", "_NL_"))
        if _k == "odd\\nname":
            _t = _d.parent / "20990101T000000.000000Z-odd\\nname"
        if not _t.exists():
            _t.mkdir()
            for _f0 in ("params.json", "result.json"):
                (_t / _f0).write_bytes((_d / _f0).read_bytes())
        for _f in ("params.json", "result.json"):
            (_t / _f).unlink()
            if _k == "nested":
                (_t / _f).write_text("[" * 200000 + "]" * 200000)
            elif _k == "sparse":
                with open(_t / _f, "wb") as _fh:
                    _fh.truncate(8 << 30)
            elif _k == "dicts":
                (_t / _f).write_text('{"n": [' + "{}," * (20 << 20) + "{}]}")
            elif _k == "fifo":
                _o.mkfifo(_t / _f)
            else:
                (_t / _f).write_text(open(_src[0]).read() if _f == "params.json" else open(_d / _f).read())
'''))
    if NOBODY:
        for p in [ROOT, *ROOT.rglob("*")]:
            os.lchown(p, 65534, 65534)
        for p in (SHM, runlock, Path(str(SHM) + ".zip")):
            os.chmod(p, 0o600)
    return runlock


def env():
    e = {"PYTHONPATH": str(REPO), "KPROF_FORCE_CPU": "1", "HOME": str(HOME), "PATH": "/usr/bin:/bin",
         "KPROF_MCP_TOKEN": TOKEN, "KPROF_LOCK_DIR": str(ROOT / "locks"),
         "AWS_SECRET_ACCESS_KEY": "kprobe3-aws-secret"}
    return e


def server_cmd():
    base = [str(Path(PY).parent / "kprof-mcp"), "--workspace", str(WS), "--allow-commands"]
    return base + (["--transport", "streamable-http", "--port", str(PORT)] if HTTP else [])


PORT = 0


class Server:
    """The server started by the documented launcher (``.venv/bin/kprof-mcp``), cwd = the workspace
    (as an MCP client started from the project directory does)."""

    def __init__(self):
        self.proc = None

    async def __aenter__(self):
        global PORT
        if HTTP:
            s = socket.socket(); s.bind(("127.0.0.1", 0)); PORT = s.getsockname()[1]; s.close()
            self.err = open(ROOT / "server_stderr.txt", "wb")
            self.proc = subprocess.Popen(server_cmd(), cwd=WS, env=env(), stdout=self.err, stderr=self.err)
            STARTED.append(self.proc)
            for _ in range(150):
                try:
                    socket.create_connection(("127.0.0.1", PORT), 0.2).close(); break
                except OSError:
                    time.sleep(0.2)
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client
            self.http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
            self.c = Client(streamable_http_client(f"http://127.0.0.1:{PORT}/mcp", http_client=self.http))
        else:
            cmd = server_cmd()
            self.c = Client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env(), cwd=str(WS)))
        return await self.c.__aenter__()

    async def __aexit__(self, *a):
        try:
            await self.c.__aexit__(*a)
        finally:
            if self.proc:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(20)
                except subprocess.TimeoutExpired:
                    self.proc.kill()


async def cmd(c, argv, cwd="sub", wait_s=50, timeout_s=None):
    a = {"command": argv, "mode": "event", "wait_s": wait_s, "cwd": cwd}
    if timeout_s:
        a["timeout_s"] = timeout_s
    try:
        return await c.call_tool("profile_command", a)
    except Exception as e:  # noqa: BLE001
        return e


async def wait_job(c, r, limit=120):
    jid = (getattr(r, "structured_content", None) or {}).get("job_id")
    if not jid:
        return r
    t0 = time.time()
    g = r
    while time.time() - t0 < limit:
        g = await c.call_tool("get_profile", {"job_id": jid, "wait_s": 20})
        if (g.structured_content or {}).get("status") not in ("queued", "running"):
            return g
    return g


def alive(pid, start):
    try:
        st = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return st[0] != "Z" and int(st[19]) == start
    except OSError:
        return False


def vm_hwm(pid):
    try:
        for ln in open(f"/proc/{pid}/status"):
            if ln.startswith(("VmHWM", "VmRSS")):
                yield ln.split()[1]
    except OSError:
        return


def server_pid():
    me = os.getpid()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                cl = open(f"/proc/{d}/cmdline", "rb").read()
                if b"kprof-mcp" in cl and str(WS).encode() in cl and b"kprof_mcp.sandbox" not in cl:
                    return int(d)
            except OSError:
                pass
    return None


def shadows():
    return sorted(p.name for p in V.iterdir() if p.name.startswith("shadow_"))


async def main():
    runlock = setup()
    cfg = dict(victim=str(V), ws=str(WS), ws2=str(WS2), home=str(HOME), kprof_root=str(REPO),
               shm_file=str(SHM), shm_zip=str(SHM) + ".zip", run_lock_file=str(runlock), run_lock_py=str(runlock),
               cache_hash_ws=h(WS), cache_hash_ws2=h(WS2), stay_file=str(WS / "sub" / "stay.json"),
               user_site=str(HOME / ".local" / "lib" / "python3.11" / "site-packages"), dicts_mb=40)
    (WS / "sub" / "probe_cfg.json").write_text(json.dumps(cfg))
    (WS / "sub" / "mid" / "deep" / "probe_cfg.json").write_text(json.dumps(cfg))
    if NOBODY:
        for p in [ROOT, *ROOT.rglob("*")]:
            os.lchown(p, 65534, 65534)
    async with Server() as c:
        tools = sorted(t.name for t in (await c.list_tools()).tools)
        row("tools exposed", "list_tools", "info", tools)
        # 0a. a workspace package that writes outside, first job of the server (the eager warm workers)
        for tool, args in (("profile_kernel", {"kernel": "kern/write3.py", "version": "v0", "params": {"n": 256},
                                               "mode": "event", "wait_s": 50}),
                           ("sweep", {"kernel": "kern/write3.py", "param": "n", "values": [256, 512], "budget_ms": 20,
                                      "wait_s": 50}),
                           ("measure_noise", {"cases": [{"kernel": "kern/write3.py", "version": "v0", "params": {"n": 256}}],
                                              "rounds": 2, "wait_s": 50})):
            try:
                r = await wait_job(c, await c.call_tool(tool, args))
                ans = text(r)[:120]
            except Exception as e:  # noqa: BLE001
                ans = repr(e)[:120]
            hit = (V / "kernel_pwn3.txt").exists()
            row(f"{tool} of a workspace package that writes outside at import (first jobs: eager warm workers)",
                "kern/write3.py", "**SUCCEEDED**" if hit else "blocked", f"victim/kernel_pwn3.txt={hit}; {ans}")
        # 0. a kernel profile first (a profile dir for later rows); the shadow modules at the root
        r = await c.call_tool("profile_kernel", {"kernel": "vector_add", "version": "v0", "params": {"n": 256},
                                                 "mode": "event", "wait_s": 50})
        r = await wait_job(c, r)
        pdir = (r.structured_content or {}).get("profile_dir")
        row("baseline profile_kernel", "vector_add v0 n=256", "info", f"profile_dir={pdir} err={r.is_error}")
        # 1. links/renames/special files
        await cmd(c, ["python", "atk3.py", "links"])
        for k, v in res("links").items():
            if isinstance(v, str) and v[:3] in ("OK:", "ERR"):
                row(f"links: {k}", "python atk3.py links (cwd=sub)", outcome(v), v)
        row("workspace root keep.txt / .git/config / devlog intact (checked outside)", "read", "ok" if (
            (WS / "keep.txt").read_text() == "workspace root file\n" and (WS / ".git/config").read_text() == "[core]\n"
            and (WS / "docs/kernels/x.md").read_text() == "# devlog\n") else "**SUCCEEDED**",
            [(WS / "keep.txt").exists(), (WS / ".git/config").read_text(), (WS / "docs/kernels/x.md").read_text()])
        # 2. reads
        await cmd(c, ["python", "atk3.py", "reads"])
        for k, v in res("reads").items():
            if isinstance(v, str) and v[:3] in ("OK:", "ERR"):
                row(f"reads: {k}", "python atk3.py reads", outcome(v), v)
        # 3. code vectors
        await cmd(c, ["python", "atk3.py", "code"])
        for k, v in res("code").items():
            if isinstance(v, str) and v[:3] in ("OK:", "ERR"):
                row(f"code: {k}", "python atk3.py code", outcome(v), v)
        ran = sorted(p.name for p in V.iterdir() if p.name.endswith("_ran.txt") or p.name == "rankhook_pwn.txt")
        row("code: outside code ran (markers in victim/)", "evil3.py, evil3.zip, /run/lock/*.py, rank hook",
            "**SUCCEEDED**" if ran else "blocked", ran)
        # 4. shadow modules at the workspace root, imported by an unconfined kprof process
        sh = shadows()
        row("code: a workspace-root glob.py/secrets.py/ctypes.py/subprocess.py imported UNCONFINED (the "
            "supervisor 'python -m kprof_mcp.sandbox' and 'python -c' helpers run with the server's cwd first "
            "on sys.path)", "server cwd = workspace; profile_kernel + profile_command ran",
            "**SUCCEEDED**" if sh else "blocked", f"markers written outside the workspace: {sh[:6]} "
            f"(argv: {(V / sh[0]).read_text()[:120] if sh else ''})")
        # 5. cwd inside out/
        for cwd in ("out", "out/profiles", "out/profiles/event"):
            r = await cmd(c, ["python", "x.py"], cwd=cwd)
            row(f"profile_command with cwd={cwd!r}", "cwd under out/ (never writable by a command)",
                "refused" if getattr(r, "is_error", True) else "**SUCCEEDED**", text(r)[:200])
        # 6. nested cwd swap: job A (cwd=sub) replaces sub/mid by a link while job B (cwd=sub/mid/deep) waits
        ra = await cmd(c, ["python", "atk3.py", "swap", "mid"], wait_s=0)
        rb = await cmd(c, ["python", "w.py"], cwd="sub/mid/deep", wait_s=0)
        ga, gb = await wait_job(c, ra), await wait_job(c, rb)
        hit = (V / "swap" / "deep" / "b_was_here.txt").exists()
        row("queued job B's cwd sub/mid/deep: job A swaps the middle component sub/mid for a link outside",
            "A: rename sub/mid; symlink sub/mid -> victim/swap", "**SUCCEEDED**" if hit else "blocked",
            f"victim/swap/deep/b_was_here.txt={hit}; A={res('swap')}; B: {text(gb)[:160]}")
        await cmd(c, ["python", "atk3.py", "cleanup", "mid"])
        # 7. records the server reads back: deeply nested, memory amplification
        for kind in ("nested", "nested_dict", "dicts"):
            spid = server_pid()
            before = list(vm_hwm(spid)) if spid else []
            t0 = time.time()
            r = await cmd(c, ["python", "-c", "x"] if False else ["python", "atk3.py", "result", kind], wait_s=50)
            dt = time.time() - t0
            after = list(vm_hwm(spid)) if spid else []
            ok = not isinstance(r, Exception)
            row(f"the command's record (result.json in its private tmp) replaced: {kind}",
                "Path.write_text patched in the child (200k-deep [[..]] / {\"a\":{..}} / 40 MiB of {})",
                "info" if ok else "**SUCCEEDED (server)**",
                f"{dt:.1f}s server VmHWM/VmRSS kB before={before} after={after}; reply: {text(r)[:200]}")
        # 8. processes left: stopped, renamed, environ cleared, own session
        await cmd(c, ["python", "atk3.py", "stay"])
        time.sleep(2)
        try:
            pids = [json.loads(x)[:2] for x in (WS / "sub" / "stay.json").read_text().splitlines() if x]
        except (OSError, ValueError):
            pids = []
        left = [p for p, s in pids if alive(p, s)]
        row("processes left after the job: SIGSTOPped / PR_SET_NAME kworker / execve with empty environ, setsid",
            "python atk3.py stay", "**SUCCEEDED**" if left else "blocked", f"started={pids} alive after={left}")
        for p in left:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        # 9. a warm worker's package leaves a process behind after its job
        r = await c.call_tool("profile_kernel", {"kernel": "kern/stay3.py", "version": "v0", "params": {"n": 256},
                                                 "mode": "event", "wait_s": 50})
        r = await wait_job(c, r)
        time.sleep(2)
        st = subprocess.run(["pgrep", "-f", "^sleep 301"], capture_output=True, text=True).stdout.split()
        row("kernel package (warm worker) forks a setsid 'sleep 301': alive after profile_kernel is done",
            "kern/stay3.py, module code", "**SUCCEEDED**" if st else "blocked",
            f"pids={st}; job: {text(r)[:120]}")
        # 10. a package plants odd files into out/profiles; the server reads them
        r = await c.call_tool("profile_kernel", {"kernel": "kern/plant3.py", "version": "v0", "params": {"n": 256},
                                                 "mode": "event", "wait_s": 50})
        r = await wait_job(c, r)
        row("kernel package plants profile dirs (200k-deep JSON, 8 GiB sparse, 60 MiB of {}, FIFO, newline name)",
            "kern/plant3.py", "info", text(r)[:160])
        if pdir:
            base = Path(pdir).parent
            for k in ("nested", "sparse", "fifo", "odd\nname", "dicts"):
                d = base / ("20990101T000000.000000Z-" + k)
                for tool, args in (("read_params", {"profile_dir": str(d)}),
                                   ("update_devlog", {"kernel": "vector_add", "profile_dir": str(d), "issues": ["x"]})):
                    spid = server_pid()
                    t0 = time.time()
                    try:
                        rr = await c.call_tool(tool, args)
                        ans, err = text(rr), rr.is_error
                    except Exception as e:  # noqa: BLE001
                        ans, err = f"client: {type(e).__name__}: {e}", None
                    row(f"{tool} on a planted profile dir: {k!r}", "planted by a confined kernel child",
                        "refused" if err else ("**SUCCEEDED (server)**" if err is None else "info"),
                        f"{time.time() - t0:.1f}s hwm={list(vm_hwm(spid)) if spid else None} {ans[:200]}")
        # 11. many files in the command's cwd: the next job's time
        if not QUICK:
            await cmd(c, ["python", "atk3.py", "many", "60000"], wait_s=50, timeout_s=300)
            t0 = time.time()
            r = await cmd(c, ["python", "atk3.py", "noop"])
            row("60,000 empty *.py in the cwd (inode fill): the next command in that cwd",
                "python atk3.py many 60000, then noop", "info", f"next command {time.time() - t0:.1f}s; {res('many')}; "
                f"{text(r)[:100]}")
            shutil.rmtree(WS / "sub" / "many", ignore_errors=True)
        r = await c.call_tool("list_kernels", {})
        row("server still answers (list_kernels)", "-", "ok" if not r.is_error else "**FAILED**", text(r)[:100])
        sh = shadows()
        row("code: shadow modules imported unconfined during the whole run", "victim/shadow_*",
            "**SUCCEEDED**" if sh else "blocked", f"{len(sh)} markers: {sorted(set(s.split('-')[0] for s in sh))}")
    time.sleep(3)
    st = subprocess.run(["pgrep", "-f", "^sleep 30[01]"], capture_output=True, text=True).stdout.split()
    row("processes left after the server stopped", "pgrep sleep 300/301", "**SUCCEEDED**" if st else "blocked", st)
    for p in st:
        try:
            os.kill(int(p), signal.SIGKILL)
        except OSError:
            pass


def finish():
    tag = "".join("_" + a[6:] for a in sys.argv if a.startswith("--tag="))
    name = "last_table_" + ("nobody" if NOBODY else "root") + ("_http" if HTTP else "") + tag + ".md"
    lines = ["| attack | how | outcome | evidence |", "|---|---|---|---|"]
    lines += [f"| {a} | `{b}` | {c} | {d} |" for a, b, c, d in ROWS]
    try:
        (HERE / name).write_text("\n".join(lines) + "\n")
    except OSError:
        (ROOT / name).write_text("\n".join(lines) + "\n")
        print("table at", ROOT / name)
    for p in STARTED:
        if p.poll() is None:
            p.kill()
    for p in (SHM, Path(str(SHM) + ".zip"), *Path("/run/lock").glob(f"kprobe3-{os.getpid()}*")):
        p.unlink(missing_ok=True)


if __name__ == "__main__":
    try:
        anyio.run(main)
    finally:
        finish()
        if "--keep" not in sys.argv:
            shutil.rmtree(ROOT, ignore_errors=True)

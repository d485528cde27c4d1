"""The fourth probe of issue 38's sandbox (2026-11-26): every variant through the real MCP SDK client
against a server started by the documented launcher (.venv/bin/kprof-mcp --workspace WS
--allow-commands), mode event, KPROF_FORCE_CPU=1, a fresh workspace under /tmp/kprobe4-*, HOME a
directory of its own holding a secret, the whole run in a memory cgroup (v1) of 4 GiB.

    .venv/bin/python docs/evidence/sandbox/probe4/run.py [PHASE...]   (default: all phases)

Phases: confine (V4 V5 V11-25 misc), forge (V1, V1b), ghost (V8, V9), deep (V7), progress (V10),
http (V1 over streamable HTTP with a token), stderr (V3), stdout (V2). Prints one line per
observation; the report (../probe-2026-11-26-fourth.md) quotes them."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

REPO = Path(__file__).resolve().parents[4]
HERE = Path(__file__).resolve().parent
VENV = REPO / ".venv" / "bin"
STAMP = time.strftime("%H%M%S")
ROOT = Path(os.environ.get("KPROBE4_ROOT", f"/tmp/kprobe4-{STAMP}"))
WS, HOME, OUT, VICTIM, PP = ROOT / "ws", ROOT / "home", ROOT / "outside", ROOT / "victim", ROOT / "pp"
TOKEN = "kprobe4-token-" + "q" * 24
T0 = time.time()


def log(*a) -> None:
    print(f"[{time.time() - T0:7.1f}s]", *a, flush=True)


def cgroup(limit: int = 4 << 30) -> Path | None:
    d = Path("/sys/fs/cgroup/memory") / f"kprobe4-{STAMP}"
    try:
        d.mkdir(exist_ok=True)
        (d / "memory.limit_in_bytes").write_text(str(limit))
        (d / "cgroup.procs").write_text(str(os.getpid()))
        log("memory cgroup", d, "limit", limit)
        return d
    except OSError as e:
        log("no memory cgroup:", e)
        return None


def env(extra: dict | None = None) -> dict:
    return {
        "PATH": f"{VENV}:/usr/bin:/bin",
        "HOME": str(HOME),
        "KPROF_FORCE_CPU": "1",
        "PYTHONPATH": str(PP),  # an operator's search path: readable by commands (docs/security.md)
        "KPROF_MCP_TOKEN_NOTE": "not a token",
        "AWS_SECRET_ACCESS_KEY": "kprobe4-aws-secret",
        "DATABASE_URL": "postgres://admin:kprobe4-dbpass@db/prod",
        **(extra or {}),
    }


def setup() -> None:
    for d in (WS / "sub", HOME, OUT, VICTIM, PP):
        d.mkdir(parents=True, exist_ok=True)
    (HOME / "secret.txt").write_text("KPROBE4-HOME-SECRET\n")
    os.chmod(HOME / "secret.txt", 0o600)
    (OUT / "victim.txt").write_text("outside victim\n")
    os.symlink("/etc/hostname", OUT / "link")
    (PP / "flagfile.txt").write_text("a file of the operator's PYTHONPATH\n")
    for f in (HERE / "ws").iterdir():
        if f.suffix == ".py":
            shutil.copy(f, WS / f.name)
    # the victim: another workspace with two finished profiles (made by the CLI, unconfined)
    for n in (4096, 8192):
        cp = subprocess.run(
            [str(VENV / "kprof"), "profile", "vector_add", "--mode", "event", "--n", str(n), "--json"],
            cwd=VICTIM, env=env(), capture_output=True, text=True, timeout=600,
        )
        assert cp.returncode == 0, cp.stderr[-2000:]
    runs = sorted(p for p in (VICTIM / "out").rglob("result.json"))
    log("victim profiles:", [str(p.parent) for p in runs])
    (WS / "kprobe4-victim.txt").write_text(str(runs[1].parent) + "\n")
    (ROOT / "victims.json").write_text(json.dumps([str(p.parent) for p in runs]))
    if AS_NOBODY:
        subprocess.run(["chown", "-R", "65534:65534", str(ROOT)], check=True)
        os.chmod(ROOT, 0o755)


def listeners() -> None:
    """What a confined process must not reach: an abstract unix socket, a TCP and a UDP port."""
    a = socket.socket(socket.AF_UNIX)
    a.bind("\0kprobe4-abstract")
    a.listen(5)
    t = socket.socket()
    t.bind(("127.0.0.1", 0))
    t.listen(5)
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 0))
    os.environ["KPROBE4_PORT"], os.environ["KPROBE4_UDP"] = str(t.getsockname()[1]), str(u.getsockname()[1])

    def serve(s, what):
        while True:
            try:
                c, _ = s.accept()
                log(f"LISTENER {what}: a connection came in (reached from the job?)")
                c.sendall(b"kprobe4 listener secret")
                c.close()
            except OSError:
                return

    def udp():
        while True:
            data, addr = u.recvfrom(100)
            log(f"LISTENER udp: {data!r} from {addr}")

    for s, w in ((a, "abstract unix"), (t, "tcp")):
        threading.Thread(target=serve, args=(s, w), daemon=True).start()
    threading.Thread(target=udp, daemon=True).start()


def server_pids() -> list[int]:
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                cmd = open(f"/proc/{p}/cmdline", "rb").read().split(b"\0")
            except OSError:
                continue
            if any(b"kprof-mcp" in c or b"kprof_mcp.server" in c for c in cmd[:3]) and str(WS).encode() in cmd:
                out.append(int(p))
    return out


def named(name: str) -> list[tuple[int, str]]:
    """Processes (any thread) named ``name``, with their state."""
    found = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            comms = {open(f"/proc/{p}/task/{t}/comm").read().strip() for t in os.listdir(f"/proc/{p}/task")}
            state = open(f"/proc/{p}/stat").read().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if name in comms:
            found.append((int(p), state))
    return found


def text(r) -> str:
    return "\n".join(getattr(c, "text", "") for c in (r.content or []))


async def call(c: Client, tool: str, args: dict, show: int = 3000) -> tuple[bool, str, dict | None]:
    t = time.time()
    try:
        r = await c.call_tool(tool, args)
    except Exception as e:  # noqa: BLE001 — the server died, or the transport broke
        log(f"CALL {tool} {json.dumps(args)[:200]} -> EXCEPTION {type(e).__name__}: {e}")
        return True, f"EXCEPTION {type(e).__name__}: {e}", None
    sc = r.structured_content or {}
    while not r.is_error and sc.get("job_id") and sc.get("status") in ("queued", "running"):
        try:
            r = await c.call_tool("get_profile", {"job_id": sc["job_id"], "wait_s": 50})
        except Exception as e:  # noqa: BLE001
            log(f"CALL get_profile -> EXCEPTION {type(e).__name__}: {e}")
            return True, f"EXCEPTION {type(e).__name__}: {e}", None
        sc = r.structured_content or {}
    body = text(r)
    log(f"CALL {tool} {json.dumps(args)[:200]} -> is_error={r.is_error} ({time.time() - t:.1f}s)")
    print(body[:show], flush=True)
    return r.is_error, body, r.structured_content


def cmd(argv: list[str], **kw) -> dict:
    return {"command": argv, "mode": "event", "wait_s": 50, "timeout_s": 300, **kw}


AS_NOBODY = os.environ.get("KPROBE4_AS") == "nobody"  # the server run as uid 65534 (no namespaces then)
SETPRIV = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--"]
# The venv's interpreter lives under /root (0700 here): a mount namespace of the launcher's own shows
# /root/.pyenv alone (read-only bind) to the nobody server; nothing of the host's mounts changes.
NOBODY_MOUNTS = (
    "mkdir -p {m} && mount --bind -o ro /root/.pyenv {m} && mount -t tmpfs -o mode=755 none /root && "
    "mkdir -p /root/.pyenv && mount --bind {m} /root/.pyenv && exec \"$@\""
)


def stdio(extra_env: dict | None = None) -> StdioServerParameters:
    launcher = [str(VENV / "kprof-mcp")]
    if AS_NOBODY:
        launcher = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                    NOBODY_MOUNTS.format(m=ROOT / "pyenv-mnt"), "sh", *SETPRIV, *launcher]
    return StdioServerParameters(
        command=launcher[0],
        args=[*launcher[1:], "--workspace", str(WS), "--allow-commands"],
        env=env(extra_env),
        cwd=str(WS),
    )


# ------------------------------------------------------------------ the phases
async def confine(c: Client) -> None:
    """V11-V25 (misc.py), V4 (xattr through io_uring), V5 (inode flags)."""
    stop = threading.Event()

    def operator_writes():  # the operator working in the home directory meanwhile
        i = 0
        while not stop.wait(1.0):
            (HOME / f"operator-file-{i}.txt").write_text("x")
            i += 1

    threading.Thread(target=operator_writes, daemon=True).start()
    await call(c, "profile_command", cmd(["python", "misc.py", str(OUT), str(HOME / "secret.txt")]), 300)
    stop.set()
    log("MISC output (sub/misc.out):\n" + (WS / "sub" / "misc.out").read_text())
    before = {p: dict((k, os.getxattr(p, k)) for k in os.listxattr(p)) for p in (OUT / "victim.txt", HOME / "secret.txt")}
    await call(c, "profile_command", cmd(["python", "attack_xattr.py", str(OUT / "victim.txt"), str(HOME / "secret.txt")]))
    for p, b in before.items():
        after = {k: os.getxattr(p, k) for k in os.listxattr(p)}
        log(f"XATTR {p}: before {sorted(b)} after {sorted(after)}; ls -l: "
            + subprocess.run(["ls", "-l", str(p)], capture_output=True, text=True).stdout.strip())
        if "system.posix_acl_access" in after:
            cp = subprocess.run(["su", "-s", "/bin/sh", "nobody", "-c", f"cat {p}; echo WRITTEN-BY-NOBODY >> {p}"],
                                capture_output=True, text=True)
            log(f"XATTR as nobody (uid 65534) after the ACL: rc={cp.returncode} out={cp.stdout!r} err={cp.stderr.strip()!r}")
    flags0 = subprocess.run(["lsattr", str(PP / "flagfile.txt")], capture_output=True, text=True).stdout.strip()
    await call(c, "profile_command", cmd(["python", "ioctl_flags.py", str(PP / "flagfile.txt")]))
    flags1 = subprocess.run(["lsattr", str(PP / "flagfile.txt")], capture_output=True, text=True).stdout.strip()
    log(f"FLAGS lsattr before: {flags0} | after: {flags1}")


async def forge(c: Client) -> None:
    """V1 (a command forges its child's record), V1b (a kernel package, no command needed)."""
    victims = [Path(v) for v in json.loads((ROOT / "victims.json").read_text())]
    v = victims[0]
    before = sorted(os.listdir(v))
    await call(c, "profile_command", cmd(["python", "forge_record.py", str(v)]), 1500)
    log(f"FORGE victim {v} exists after: {v.exists()}; its parent now holds {sorted(os.listdir(v.parent))}")
    pwned = v.parent / "PWNED-by-kprobe4"
    if pwned.exists():
        log(f"FORGE files before {before} -> in {pwned.name}: {sorted(os.listdir(pwned))}")
        log("FORGE command.log there:", (pwned / "command.log").read_text()[:300].replace("\n", " | "))
    v2 = victims[1]
    before = sorted(os.listdir(v2))
    await call(c, "profile_kernel", {"kernel": "./pkg_forge.py", "mode": "event", "params": {"n": 1024}, "wait_s": 50}, 1500)
    pwned = v2.parent / "PWNED-by-kprobe4-package"
    log(f"FORGE-PKG victim {v2} exists after: {v2.exists()}; parent holds {sorted(os.listdir(v2.parent))}")
    if pwned.exists():
        log(f"FORGE-PKG files before {before} -> in {pwned.name}: {sorted(os.listdir(pwned))}")


async def ghosts(c: Client) -> None:
    """V8 (a command's ghost), V9 (a kernel package's ghost in the warm worker)."""
    glog = WS / "sub" / "ghost.log"
    await call(c, "profile_command", cmd(["python", "../ghost_cmd.py", "ghost.log", "60"], cwd="sub"))
    n0 = len(glog.read_text().splitlines()) if glog.exists() else 0
    time.sleep(6)
    n1 = len(glog.read_text().splitlines()) if glog.exists() else 0
    log(f"GHOST command: log lines {n0} at the job's end, {n1} six seconds later; named now: {named('kprobe4ghost')}")
    plog = WS / "out" / "profiles" / "kprobe4-ghost.log"
    await call(c, "profile_kernel", {"kernel": "./pkg_ghost.py", "mode": "event", "params": {"n": 1024}, "wait_s": 50}, 800)
    n0 = len(plog.read_text().splitlines()) if plog.exists() else 0
    time.sleep(6)
    n1 = len(plog.read_text().splitlines()) if plog.exists() else 0
    log(f"GHOST package: log lines {n0} at the job's end, {n1} six seconds later; named now: {named('kprobe4ghost')}")
    await call(c, "profile_kernel", {"kernel": "vector_add", "mode": "event", "params": {"n": 1024}, "wait_s": 50}, 300)
    log(f"GHOST package: after a later job (vector_add) named: {named('kprobe4ghost')}")


async def race(c: Client) -> None:
    """V12: the ghost of pkg_race.py plants request.json links in the server's jobs directory."""
    target = ROOT / "race-target.txt"
    target.write_text("outside file, must stay as it is\n")
    if AS_NOBODY:
        os.chown(target, 65534, 65534)
    (WS / "kprobe4-race-target.txt").write_text(str(target) + "\n")
    await call(c, "profile_kernel", {"kernel": "./pkg_race.py", "mode": "event", "params": {"n": 1024}, "wait_s": 50}, 300)
    for i in range(int(os.environ.get("KPROBE4_RACES", "12"))):
        await call(c, "profile_kernel", {"kernel": "vector_add", "mode": "event", "params": {"n": 1024 + i}, "wait_s": 50}, 200)
        if target.read_text() != "outside file, must stay as it is\n":
            break
    rl = WS / "out" / "profiles" / "kprobe4-race.log"
    log(f"RACE target now: {target.read_text()[:300]!r}")
    log("RACE ghost's log:\n" + (rl.read_text()[-1500:] if rl.exists() else "(none)"))


async def gate(c: Client) -> None:
    """V13: a kernel child rewrites its request's wait_for; the next (fresh) child's policy reads it."""
    secret = HOME / "secret.txt"
    (WS / "kprobe4-gate-target.txt").write_text(str(secret) + "\n")
    await call(c, "profile_kernel", {"kernel": "vector_add", "mode": "event", "params": {"n": 2048}, "wait_s": 50}, 100)
    await call(c, "profile_kernel", {"kernel": "./pkg_gate.py", "mode": "event", "params": {"n": 1024}, "wait_s": 50}, 1500)
    for name in ("kprobe4-gate-tries.txt", "kprobe4-gate-leak.txt"):
        p = WS / "out" / "profiles" / name
        log(f"GATE {name}: " + (p.read_text() if p.exists() else "(none)"))


async def acldir(c: Client) -> None:
    """P4-3 on a directory: the (0700) home directory opened to uid 65534, who then plants a .bashrc."""
    os.chmod(HOME, 0o700)
    await call(c, "profile_command", cmd(["python", "attack_xattr.py", str(HOME)]))
    log("ACLDIR ls -ld: " + subprocess.run(["ls", "-ld", str(HOME)], capture_output=True, text=True).stdout.strip())
    cp = subprocess.run(["su", "-s", "/bin/sh", "nobody", "-c", f"echo 'echo planted-by-uid-65534' >> {HOME}/.bashrc; ls -la {HOME}"],
                        capture_output=True, text=True)
    log(f"ACLDIR as nobody: rc={cp.returncode} out={cp.stdout.strip()!r} err={cp.stderr.strip()!r}")


async def signals(c: Client) -> None:
    """Which processes a command may signal (Landlock's signal scope)."""
    await call(c, "profile_command", cmd(["python", "sigscan.py"]), 3000)


async def deep(c: Client) -> None:
    before = set(Path("/tmp").glob("kprof-*"))
    await call(c, "profile_command", cmd(["python", "deep.py", "1500"]))
    left = [p for p in set(Path("/tmp").glob("kprof-*")) - before]
    log(f"DEEP temporary directories left in /tmp: {[str(p) for p in left]}")
    await call(c, "list_kernels", {})


async def progress(c: Client) -> None:
    got = []

    async def on_progress(p, total, message):
        got.append((p, (message or "")[:80], len(message or "")))

    try:
        r = await c.call_tool("profile_command", cmd(["python", "progress_bomb.py"]), progress_callback=on_progress)
        sc = r.structured_content or {}
        while not r.is_error and sc.get("job_id") and sc.get("status") in ("queued", "running"):
            r = await c.call_tool("get_profile", {"job_id": sc["job_id"], "wait_s": 50}, progress_callback=on_progress)
            sc = r.structured_content or {}
        log(f"PROGRESS is_error={r.is_error}; notifications: {got[:12]}")
        print(text(r)[:2500])
    except Exception as e:  # noqa: BLE001
        log(f"PROGRESS EXCEPTION {type(e).__name__}: {e}; notifications {got[:12]}")
    await call(c, "list_kernels", {})


async def bigout(c: Client, fd: int, mb: int, lines: bool = False) -> None:
    pids = server_pids()
    log(f"BIG fd={fd} {mb} MB {'in 1 MiB lines' if lines else 'without a newline'}; server pids {pids}")
    stop = threading.Event()
    peak = [0]

    def watch():
        while not stop.is_set():
            for p in pids:
                try:
                    rss = int(open(f"/proc/{p}/statm").read().split()[1]) * 4096
                    peak[0] = max(peak[0], rss)
                except OSError:
                    pass
            time.sleep(0.2)

    threading.Thread(target=watch, daemon=True).start()
    await call(c, "profile_command", cmd(["python", "bigout.py", str(fd), str(mb), *(["lines"] if lines else [])]), 600)
    stop.set()
    alive = [p for p in pids if Path(f"/proc/{p}").exists()]
    log(f"BIG fd={fd}: server peak RSS {peak[0] / 2**30:.2f} GiB; server alive after: {alive}")
    if alive:
        await call(c, "list_kernels", {}, 200)


async def pkgbig(c: Client, fd: int, mb: int) -> None:
    """V2b/V3b: the same flood from a kernel package's import (profile_kernel, no command)."""
    (WS / "kprobe4-bigout.txt").write_text(f"{fd} {mb}\n")
    pids = server_pids()
    log(f"PKGBIG fd={fd} {mb} MB from a package's import; server pids {pids}")
    limit = float(os.environ.get("KPROBE4_PKGBIG_S", "240"))
    with anyio.move_on_after(limit) as scope:
        await call(c, "profile_kernel", {"kernel": "./pkg_bigout.py", "mode": "event", "params": {"n": 1024}, "wait_s": 50}, 600)
    if scope.cancelled_caught:
        for p in pids:
            try:
                st = open(f"/proc/{p}/stat").read().rpartition(")")[2].split()
                cpu_s = (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")
                rss = int(open(f"/proc/{p}/statm").read().split()[1]) * 4096
                log(f"PKGBIG fd={fd}: NO ANSWER in {limit:.0f} s; server {p} state {st[0]}, CPU {cpu_s:.0f} s, "
                    f"RSS {rss / 2**30:.2f} GiB; killing it (this probe's own process)")
                os.kill(p, 9)
            except OSError:
                pass
    time.sleep(1)
    log(f"PKGBIG fd={fd}: server alive after: {[p for p in pids if Path(f'/proc/{p}').exists() and open(f'/proc/{p}/stat').read().split()[2] != 'Z']}")
    (WS / "kprobe4-bigout.txt").unlink()


async def main(phases: list[str]) -> None:
    for p in phases:
        if p in ("confine", "forge", "ghost", "deep", "progress"):
            pass
    stdio_phases = [p for p in phases if p in ("confine", "forge", "ghost", "deep", "progress", "race", "gate", "signals", "acldir")]
    if stdio_phases:
        async with Client(stdio()) as c:
            log("server (stdio):", server_pids())
            for p in stdio_phases:
                log(f"===== phase {p}")
                await {"confine": confine, "forge": forge, "ghost": ghosts, "deep": deep, "progress": progress, "race": race, "gate": gate, "signals": signals, "acldir": acldir}[p](c)
            spids = server_pids()
        time.sleep(3)
        log(f"AFTER SERVER EXIT: server pids {[p for p in spids if Path(f'/proc/{p}').exists()]}; "
            f"named kprobe4ghost: {named('kprobe4ghost')}")
    if "http" in phases:
        log("===== phase http")
        await http_phase()
    for p, fd, mb in (("stderr", 2, 3500), ("stdout", 1, 3500), ("pkgstderr", 2, 3500), ("pkgstdout", 1, 3500),
                      ("stdoutlines", 1, 5000)):
        if p in phases:
            log(f"===== phase {p}")
            async with Client(stdio()) as c:
                if p == "stdoutlines":
                    await bigout(c, fd, mb, lines=True)
                else:
                    await (pkgbig if p.startswith("pkg") else bigout)(c, fd, int(os.environ.get("KPROBE4_MB", mb)))


async def http_phase() -> None:
    """V1 again over streamable HTTP with a bearer token, a third victim made now."""
    cp = subprocess.run([str(VENV / "kprof"), "profile", "vector_add", "--mode", "event", "--n", "2048", "--json"],
                        cwd=VICTIM, env=env(), capture_output=True, text=True, timeout=600)
    v = sorted(p.parent for p in (VICTIM / "out").rglob("result.json") if "n=2048" in str(p))[0]
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen(
        [str(VENV / "kprof-mcp"), "--workspace", str(WS), "--allow-commands", "--transport", "streamable-http",
         "--port", str(port)],
        env=env({"KPROF_MCP_TOKEN": TOKEN}), cwd=str(WS), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.3)
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        async with http, Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c:
            await call(c, "profile_command", cmd(["python", "forge_record.py", str(v)]), 800)
        log(f"HTTP-FORGE victim {v} exists after: {v.exists()}; parent holds {sorted(os.listdir(v.parent))}")
    finally:
        proc.terminate()
        proc.wait(30)


if __name__ == "__main__":
    phases = sys.argv[1:] or ["confine", "forge", "ghost", "gate", "race", "deep", "progress", "http", "stderr",
                              "stdout", "pkgstderr", "pkgstdout"]
    cg = cgroup()
    if not ROOT.exists():
        setup()
    log("root", ROOT, "phases", phases)
    listeners()
    anyio.run(main, phases)
    if cg:
        for f in ("memory.max_usage_in_bytes", "memory.failcnt", "memory.oom_control"):
            try:
                log(f"cgroup {f}:", (cg / f).read_text().strip().replace("\n", " "))
            except OSError:
                pass

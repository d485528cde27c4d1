# ruff: noqa: B007
"""Issue 38's eleventh probe: a fresh workspace, a HOME with a secret, the server started by the documented
launcher (.venv/bin/kprof-mcp --workspace WS --allow-commands) in a memory (4 GiB) and pids cgroup of its
own, driven through the real MCP SDK client over stdio. Usage (as root, from the repository root):

    .venv/bin/python docs/evidence/sandbox/probe10/run.py [--user nobody] VARIANT...

Each variant prints what it saw; the report (probe-2026-11-27-eleventh.md) quotes the output."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
STAMP = time.strftime("%H%M%S")
BASE = Path(f"/tmp/kprobe11-{STAMP}-{os.getpid()}")
WS, HOME, OUTSIDE = BASE / "ws", BASE / "home", BASE / "outside"
CG = {k: Path(f"/sys/fs/cgroup/{k}/kprobe11-{os.getpid()}") for k in ("memory", "pids")}


def setup(user: str | None) -> None:
    for d in (WS / "evil" / "attacks", WS / "cmd", HOME, OUTSIDE, WS / "out" / "profiles"):
        d.mkdir(parents=True, exist_ok=True)
    (HOME / "secret.txt").write_text("HOME-SECRET-kprobe11\n")
    (OUTSIDE / "victim.txt").write_text("outside victim\n")
    shutil.copy(HERE / "pkg_init.py", WS / "evil" / "__init__.py")
    for f in (HERE / "attacks").glob("*.py"):
        shutil.copy(f, WS / "evil" / "attacks" / f.name)
        shutil.copy(f, WS / "cmd" / f.name)
    shutil.copy(HERE / "cmd_wrapper.py", WS / "cmd" / "run_attack.py")
    shutil.copy(HERE / "rewrite_rc.py", WS / "cmd" / "rewrite_rc.py")
    (WS / "evil" / "ATTACK").write_text("")
    for f in HERE.glob("pkg_*.py"):  # more planted packages: pkg_NAME.py -> ws/NAME/__init__.py
        if f.name != "pkg_init.py":
            (WS / f.stem[4:]).mkdir(exist_ok=True)
            shutil.copy(f, WS / f.stem[4:] / "__init__.py")
    Path("/opt/kprobe11-victim.txt").write_text("root-owned file in a read rule (/opt)\n")
    (WS / "victim_ws.txt").write_text("workspace file a kernel child may only read\n")
    for k, d in CG.items():
        d.mkdir(exist_ok=True)
    (CG["memory"] / "memory.limit_in_bytes").write_text(str(4 << 30))
    (CG["pids"] / "pids.max").write_text("3000")
    if user:
        subprocess.run(["chown", "-R", f"{user}:65534", str(BASE)], check=True)
        subprocess.run(["chmod", "0755", str(BASE)], check=True)


def params(user: str | None, http: bool = False) -> StdioServerParameters:
    exe = str(REPO / ".venv" / "bin" / "kprof-mcp")
    join = "; ".join(f"echo $$ > {d}/cgroup.procs" for d in CG.values())
    cmd = f"{join}; exec {exe} --workspace {WS} --allow-commands"
    if user:
        # as probe4 did: /root (0700, where the venv's interpreter lives) a tmpfs in a mount namespace of
        # the server's own that shows only /root/.pyenv; the host's mounts untouched
        pe = BASE / "pyenv"
        inner = (
            f"mkdir -p {pe} && mount --bind /root/.pyenv {pe} && mount -t tmpfs -o mode=755 none /root && "
            f"mkdir /root/.pyenv && mount --bind {pe} /root/.pyenv && cd {WS} && exec setpriv --reuid={user} "
            f"--regid=65534 --clear-groups {exe} --workspace {WS} --allow-commands"
        )
        cmd = f"{join}; exec unshare -m sh -c '{inner}'"
    env = {
        "HOME": str(HOME),
        "KPROF_FORCE_CPU": "1",
        "PATH": os.environ["PATH"],
        "KPROF_LOCK_DIR": str(BASE / "locks"),
        "KPROF_MCP_TOKEN_FOR_TEST": "not-passed",
    }
    if os.environ.get("KPROBE11_GPUS"):  # two job slots (two GPUs' worth), on the CPU
        env["KPROF_GPUS"] = os.environ["KPROBE11_GPUS"]
        env.pop("KPROF_FORCE_CPU")  # force_cpu means one slot; torch here has no GPU and runs on the CPU
    if os.environ.get(
        "KPROBE11_SRC"
    ):  # a commit's kprof_mcp exported there (git archive), ahead of the checkout
        env["PYTHONPATH"] = os.environ["KPROBE11_SRC"]
    return StdioServerParameters(command="/bin/sh", args=["-c", cmd], env=env, cwd=str(WS))


def text(r) -> str:
    return "\n".join(getattr(c, "text", "") for c in (r.content or []))


def server_pid() -> list[int]:
    return [int(p) for p in (CG["memory"] / "cgroup.procs").read_text().split()]


def ps_tree() -> str:
    pids = " ".join(str(p) for p in server_pid())
    return (
        subprocess.run(
            f"ps -o pid,ppid,pgid,sid,stat,etimes,args -p {pids or 1}",
            shell=True,
            capture_output=True,
            text=True,
        ).stdout
        if pids
        else ""
    )


class Probe:
    def __init__(self, c: Client):
        self.c = c

    async def call(self, tool: str, args: dict, timeout: float = 180) -> tuple[bool, str, dict | None]:
        with anyio.fail_after(timeout):
            r = await self.c.call_tool(tool, args)
        return r.is_error, text(r), r.structured_content

    async def settle(self, err: bool, t: str, sc: dict | None, wait_s: float) -> tuple[bool, str]:
        """Poll get_profile while the job runs, up to wait_s in all."""
        deadline = time.monotonic() + wait_s
        while (
            not err
            and sc
            and sc.get("job_id")
            and sc.get("status") in ("queued", "running")
            and time.monotonic() < deadline
        ):
            err, t, sc = await self.call("get_profile", {"job_id": sc["job_id"], "wait_s": 20})
        return err, t

    async def kernel(self, attack: str, wait_s: int = 150, **kw) -> tuple[bool, str]:
        (WS / "evil" / "ATTACK").write_text(attack)
        r = await self.call(
            "profile_kernel",
            {"kernel": "./evil", "mode": "event", "wait_s": min(wait_s, 50), "params": {"n": 1024}, **kw},
        )
        return await self.settle(*r, wait_s)

    async def command(self, argv: list[str], cwd: str = "cmd", wait_s: int = 150, **kw) -> tuple[bool, str]:
        r = await self.call("profile_command", {"command": argv, "cwd": cwd, "wait_s": min(wait_s, 50), **kw})
        return await self.settle(*r, wait_s)

    def out(self, attack: str) -> str:
        p = WS / "out" / "profiles" / "kprobe11" / (attack + ".txt")
        return p.read_text() if p.exists() else "(no output file)"


VARIANTS = {}


def variant(f):
    VARIANTS[f.__name__] = f
    return f


async def main_async(names: list[str], user: str | None) -> None:
    async with Client(params(user)) as c:
        p = Probe(c)
        tools = sorted(t.name for t in (await c.list_tools()).tools)
        print("server pids", server_pid(), "tools", tools, flush=True)
        (WS / "SERVER_PID").write_text(" ".join(map(str, server_pid())))
        if os.environ.get("KPROBE11_USER"):
            subprocess.run(["chown", os.environ["KPROBE11_USER"], str(WS / "SERVER_PID")])
        start_victim(user)
        for n in names:
            print(f"===== {n} ({time.strftime('%H:%M:%S')})", flush=True)
            try:
                await VARIANTS[n](p)
            except Exception as e:  # noqa: BLE001
                print("variant raised", type(e).__name__, e, flush=True)
            alive = server_pid()
            print("server cgroup pids after:", alive, flush=True)


VICTIM = []


def start_victim(user: str | None) -> None:
    """A same-user process outside the sandbox: logs every SIGUSR1/SIGUSR2/SIGURG it gets, listens on an
    abstract unix socket '@kprobe11-victim-PID' and logs connections."""
    code = (
        "import os,signal,socket,sys,threading,time\n"
        "log=open(sys.argv[1],'a',buffering=1)\n"
        "def h(s,f): log.write(f'signal {s} at {time.time():.3f}\\n')\n"
        "[signal.signal(s,h) for s in (signal.SIGUSR1,signal.SIGUSR2,signal.SIGURG,signal.SIGWINCH)]\n"
        "a=socket.socket(socket.AF_UNIX); a.bind('\\0kprobe11-victim-%d'%os.getpid()); a.listen(8)\n"
        "def acc(s):\n"
        "  while True:\n"
        "    c,_=s.accept(); log.write('connection on '+repr(s.getsockname())+'\\n'); c.sendall(b'VICTIM-SECRET'); c.close()\n"
        "threading.Thread(target=acc,args=(a,),daemon=True).start()\n"
        "open(sys.argv[2],'w').write(str(os.getpid()))\n"
        "while True: time.sleep(1)\n"
    )
    argv = ["/usr/bin/python3", "-c", code, str(OUTSIDE / "victim-signals.log"), str(WS / "VICTIM_PID")]
    if user:
        argv = ["setpriv", f"--reuid={user}", "--regid=65534", "--clear-groups", *argv]
    # its own group: F_SETOWN -pgid hits it alone
    VICTIM.append(subprocess.Popen(argv, start_new_session=True))
    for _ in range(50):
        if (WS / "VICTIM_PID").exists() and (WS / "VICTIM_PID").read_text():
            break
        time.sleep(0.1)
    print("victim pid", (WS / "VICTIM_PID").read_text(), flush=True)


def teardown() -> None:
    for v in VICTIM:  # a positive control first: a signal the victim must log
        try:
            os.kill(v.pid, 10)
            time.sleep(0.3)
        except ProcessLookupError:
            pass
        v.kill()
    for d in CG.values():
        for pid in (d / "cgroup.procs").read_text().split():
            try:
                os.kill(int(pid), 9)
            except ProcessLookupError:
                pass
        for _ in range(50):
            for sub in [
                *d.glob("kprof-jobs/kprof-job-*"),
                d / "kprof-jobs",
                *d.glob("kprof-job-*"),
            ]:  # the supervisors' job cgroups, left when a server was killed
                try:
                    sub.rmdir()
                except OSError:
                    pass
            try:
                d.rmdir()
                break
            except OSError:
                time.sleep(0.1)


sys.path.insert(0, str(HERE))
import variants11  # noqa: E402,F401 — registers the variants

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--user")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("names", nargs="+")
    a = ap.parse_args()
    setup(a.user)
    os.environ["KPROBE11_USER"] = a.user or ""  # for variants that start a second server
    print(
        "base",
        BASE,
        "user",
        a.user or "root",
        "kprof_mcp from",
        os.environ.get("KPROBE11_SRC") or REPO,
        flush=True,
    )
    try:
        anyio.run(main_async, a.names, a.user)
    finally:
        print("left in the server's cgroups at the end:", ps_tree(), flush=True)
        time.sleep(10)
        print("... and 10 s later:", ps_tree(), flush=True)
        teardown()
        vl = OUTSIDE / "victim-signals.log"
        print(
            "victim's log (signals/connections it got):",
            vl.read_text() if vl.exists() else "(none)",
            flush=True,
        )
        print(
            "/opt/kprobe11-victim.txt at the end:",
            Path("/opt/kprobe11-victim.txt").read_text().strip(),
            flush=True,
        )
        Path("/opt/kprobe11-victim.txt").unlink()
        if not a.keep:
            subprocess.run(["rm", "-rf", str(BASE)])  # a 2,000-deep tree (manyfiles) is too deep for rmtree

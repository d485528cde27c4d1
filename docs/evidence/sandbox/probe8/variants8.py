"""The eighth probe's variants (registered into run.py's table)."""

import glob
import os
import subprocess
import time

import __main__ as R

variant = R.variant


def outside() -> str:
    return "; ".join(f"{f.name} {f.stat().st_size} bytes" for f in sorted(R.OUTSIDE.iterdir()))


def hoppers() -> list[str]:
    ps = subprocess.run(["ps", "-eo", "pid,ppid,sid,args"], capture_output=True, text=True).stdout
    return [ln for ln in ps.splitlines() if "kprobe8-hopper" in ln and "ps -eo" not in ln]


def kill_hoppers() -> None:
    for _ in range(20):  # they hop: stop each found, then kill (only the processes this probe started)
        found = [int(ln.split()[0]) for ln in hoppers()]
        if not found:
            return
        for pid in found:
            for sig in (19, 9):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
        time.sleep(0.1)


@variant
async def k_escape8(p):
    """attacks/escape8.py in a kernel child (the warm worker, event mode)."""
    err, t = await p.kernel("escape8", wait_s=150, timeout_s=120)
    print("profile_kernel answered: error", err, t[:200].replace("\n", " "))
    print(p.out("escape8"))
    print("outside after:", outside())


@variant
async def c_escape8(p):
    """attacks/escape8.py as profile_command (python run_attack.py escape8, cwd cmd/)."""
    err, t = await p.command(["python", "run_attack.py", "escape8"], timeout_s=120)
    print("profile_command answered: error", err)
    f = R.WS / "cmd" / "escape8.txt"
    print(f.read_text() if f.exists() else t[:3000])
    print("outside after:", outside())


async def _hop(p, kind: str):
    if kind == "kernel":
        err, t = await p.kernel("hopper", wait_s=150, timeout_s=60)
        print("profile_kernel answered: error", err, t[:200].replace("\n", " "))
        print(p.out("hopper"))
    else:
        err, t = await p.command(["python", "run_attack.py", "hopper"], timeout_s=60)
        print("profile_command answered: error", err, t[:200].replace("\n", " "))
    time.sleep(3)
    left = hoppers()
    print(f"hoppers alive 3 s after the job ended: {len(left)}", left[:5])
    print(
        f"RESULT {kind}_hopper:",
        "SUCCEEDED (a process outlived its job)" if left else "BLOCKED (nothing left)",
        flush=True,
    )
    kill_hoppers()


@variant
async def k_hopper(p):
    """A pid-hopping process in its own session, started from a kernel package's run()."""
    await _hop(p, "kernel")


@variant
async def c_hopper(p):
    """The same from a command."""
    await _hop(p, "command")


@variant
async def k_rrace(p):
    """The describe worker (profile_kernel ./rracer) plants result.json links (to the home's secret), FIFOs,
    directories, and rewrites request.json, in the kernel jobs directory while 16 queued jobs run."""
    user = os.environ.get("KPROBE8_USER")
    (R.WS / "rracer" / "RACE").write_text(f"{R.HOME / 'secret.txt'} {R.OUTSIDE} 60")
    if user:
        subprocess.run(["chown", user, str(R.WS / "rracer" / "RACE")])
    before = outside()
    ids, texts = [], []
    for _ in range(16):
        err, t, sc = await p.call(
            "profile_kernel",
            {"kernel": "vector_add", "mode": "event", "wait_s": 0, "params": {"n": 1024}, "timeout_s": 20},
            timeout=60,
        )
        ids.append((sc or {}).get("job_id"))
    t0 = time.monotonic()
    err, t, sc = await p.call(
        "profile_kernel",
        {"kernel": "./rracer", "mode": "event", "wait_s": 0, "params": {"n": 1024}},
        timeout=200,
    )
    print(f"./rracer answered after {time.monotonic() - t0:.1f} s: error {err}:", t[:160].replace("\n", " "))
    texts.append(t)
    states = []
    for i in ids:
        if i:
            err, t, sc = await p.call("get_profile", {"job_id": i, "wait_s": 60}, timeout=90)
            texts.append(t)
            states.append((sc or {}).get("status"))
            if (sc or {}).get("status") == "failed":
                print("failed job:", ((sc or {}).get("error") or t)[:300].replace("\n", " "))
    print("job states:", states)
    for f in glob.glob("/tmp/kprof-kernels-*/kprobe8-rrace.log"):
        print("racer log", f, ":\n" + open(f).read()[-1500:])
    leaked = [x for x in texts if "HOME-SECRET" in x]
    bare = [x[:200] for x in texts if "Traceback" in x or "Error:" in x.split("\n")[0][:40]]
    print("outside before:", before, "| after:", outside())
    print("answers with the secret:", len(leaked), "| answers that look like bare exceptions:", bare[:3])
    print(
        "RESULT k_rrace:",
        "SUCCEEDED"
        if leaked or before != outside()
        else "BLOCKED (no secret in any answer, outside unchanged)",
        flush=True,
    )


@variant
async def x_fifo(p):
    """A client with no file access but a workspace holding FIFOs (a cloned repository): a script, a
    pytest test path, a kernel package's __init__.py, a cwd's ini that are FIFOs. The server must answer
    each with a clear error and not hang (each call has 60 s)."""
    user = os.environ.get("KPROBE8_USER")
    made = []
    for rel in ("cmd/fifo.py", "cmd/test_fifo.py", "fifopkg/__init__.py", "ficwd/pytest.ini"):
        f = R.WS / rel
        f.parent.mkdir(exist_ok=True)
        os.mkfifo(f)
        made.append(f)
    if user:
        subprocess.run(["chown", "-R", user, str(R.WS / "cmd"), str(R.WS / "fifopkg"), str(R.WS / "ficwd")])
    calls = [
        ("profile_command", {"command": ["python", "fifo.py"], "cwd": "cmd", "wait_s": 30}),
        (
            "profile_command",
            {"command": ["python", "-m", "pytest", "test_fifo.py"], "cwd": "cmd", "wait_s": 30},
        ),
        ("profile_command", {"command": ["python", "-m", "fifo"], "cwd": "cmd", "wait_s": 30}),
        ("profile_command", {"command": ["python", "-m", "pytest"], "cwd": "ficwd", "wait_s": 30}),
        ("profile_kernel", {"kernel": "./fifopkg", "mode": "event", "wait_s": 30}),
        ("read_params", {"kernel": "./fifopkg"}),
    ]
    for tool, args in calls:
        t0 = time.monotonic()
        try:
            err, t, sc = await p.call(tool, args, timeout=60)
            if sc and sc.get("job_id") and sc.get("status") in ("queued", "running"):
                err, t = await p.settle(err, t, sc, 40)
            print(
                f"{tool} {args.get('command') or args.get('kernel')}: {time.monotonic() - t0:.1f} s error {err}:",
                t[:220].replace("\n", " "),
            )
        except TimeoutError:
            print(f"{tool} {args}: NO ANSWER in 60 s (a hang)")
    for f in made:
        f.unlink()
    err, t, sc = await p.call("list_kernels", {}, timeout=60)
    print("server still answers (list_kernels):", not err or t[:100])


@variant
async def k_holdlife(p, attack="holdlife"):
    """A kernel job reopens its read pipes (the lifeline among them) for writing and keeps them in a
    detached sleeper, then stays running; the server is killed (-9) meanwhile: do its children live on?"""
    (R.WS / "evil" / "ATTACK").write_text(attack)
    await p.call("profile_kernel", {"kernel": "./evil", "mode": "event", "wait_s": 12, "params": {"n": 1024}})
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout.splitlines()
    srv = [
        int(ln.split()[0]) for ln in ps if "kprof-mcp --workspace " + str(R.WS) in ln and "sh -c" not in ln
    ]
    print("server", srv, "holders", [ln for ln in ps if "kprobe8-holdlife" in ln])
    for pid in srv:
        os.kill(pid, 9)
    time.sleep(6)
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout.splitlines()
    left = [ln for ln in ps if "kprobe8-holdlife" in ln or ("kprof_mcp" in ln and str(R.BASE) in ln)]
    workers = [ln for ln in ps if "kprof_mcp.child serve" in ln]
    print("6 s after kill -9 of the server: holders", left[:4], "| kprof workers alive:", len(workers))
    print("RESULT k_holdlife:", "SUCCEEDED (outlived the server)" if left else "BLOCKED", flush=True)


@variant
async def k_holdlife_control(p):
    """The same with a job that only sleeps: the lifeline must kill it when the server dies."""
    await k_holdlife(p, "sleeponly")

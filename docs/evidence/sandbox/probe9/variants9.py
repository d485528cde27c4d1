"""The ninth probe's variants (registered into run.py's table)."""

import os
import subprocess
import time

import __main__ as R

variant = R.variant


def ps_grep(word: str) -> list[str]:
    ps = subprocess.run(["ps", "-eo", "pid,ppid,sid,stat,args"], capture_output=True, text=True).stdout
    return [ln for ln in ps.splitlines() if word in ln and "ps -eo" not in ln and "grep" not in ln]


def kill_named(word: str) -> None:
    for _ in range(5):  # only the processes this probe's attack files named
        for ln in ps_grep(word):
            try:
                os.kill(int(ln.split()[0]), 9)
            except ProcessLookupError:
                pass
        time.sleep(0.2)


@variant
async def k_handles9(p):
    """attacks/handles9.py in a kernel job (the warm worker)."""
    err, t = await p.kernel("handles9", wait_s=150, timeout_s=120)
    print("profile_kernel answered: error", err, t[:200].replace("\n", " "))
    print(p.out("handles9"))


@variant
async def c_handles9(p):
    """attacks/handles9.py as profile_command."""
    err, t = await p.command(["python", "run_attack.py", "handles9"], timeout_s=120)
    print("profile_command answered: error", err)
    f = R.WS / "cmd" / "handles9.txt"
    print(f.read_text() if f.exists() else t[:3000])


async def _escape(p, kind: str):
    if kind == "kernel":
        err, t = await p.kernel("prlim_escape", wait_s=100, timeout_s=60)
        print(p.out("prlim_escape"))
    else:
        err, t = await p.command(["python", "run_attack.py", "prlim_escape"], timeout_s=60)
        f = R.WS / "cmd" / "prlim_escape.txt"
        print(f.read_text() if f.exists() else "(no log)")
    print(f"{kind} job answered: error", err, t[:300].replace("\n", " "))
    time.sleep(5)
    left = ps_grep("kprobe9-orphan")
    print("kprobe9-orphan alive 5 s after the job ended:", left)
    err2, t2, _ = await p.call("list_kernels", {}, timeout=60)
    print("server answers after (list_kernels): error", err2, t2[:80].replace("\n", " "))
    print(
        f"RESULT {kind}_prlim_escape:",
        "SUCCEEDED (a process outlived its job)" if left else "BLOCKED (nothing left)",
        flush=True,
    )
    kill_named("kprobe9-orphan")


@variant
async def k_prlim_escape(p):
    await _escape(p, "kernel")


@variant
async def c_prlim_escape(p):
    await _escape(p, "command")


async def _dos(p, kind: str, attack: str):
    srv = min(R.server_pid())
    if kind == "kernel":
        err, t = await p.kernel(attack, wait_s=100, timeout_s=60)
        print(p.out(attack))
    else:
        err, t = await p.command(["python", "run_attack.py", attack], timeout_s=60)
        f = R.WS / "cmd" / f"{attack}.txt"
        print(f.read_text() if f.exists() else "(no log)")
    print(f"{kind} job answered: error", err, t[:200].replace("\n", " "))
    time.sleep(3)
    alive = os.path.exists(f"/proc/{srv}")
    lim = ""
    if alive:
        lim = [
            ln
            for ln in open(f"/proc/{srv}/limits").read().splitlines()
            if "CPU time" in ln or "open files" in ln
        ]
    print("server", srv, "alive 3 s later:", alive, lim)
    ok = None
    try:
        err2, t2, sc = await p.call(
            "profile_kernel",
            {"kernel": "vector_add", "mode": "event", "wait_s": 50, "params": {"n": 1024}},
            timeout=90,
        )
        ok = not err2 and (sc or {}).get("status") not in ("failed",)
        print(
            "another client's job after it: error",
            err2,
            (sc or {}).get("status"),
            t2[:300].replace("\n", " "),
        )
    except BaseException as e:  # noqa: BLE001
        print("another client's job after it: no answer:", type(e).__name__, str(e)[:200])
    print(
        f"RESULT {kind}_{attack}:",
        "SUCCEEDED (the server is dead or cannot serve other clients)" if not alive or not ok else "BLOCKED",
        flush=True,
    )


@variant
async def k_prlim_kill(p):
    await _dos(p, "kernel", "prlim_kill")


@variant
async def c_prlim_kill(p):
    await _dos(p, "command", "prlim_kill")


@variant
async def k_prlim_nofile(p):
    await _dos(p, "kernel", "prlim_nofile")


@variant
async def c_prlim_nofile(p):
    await _dos(p, "command", "prlim_nofile")


@variant
async def k_sigio(p):
    """attacks/sigio.py in a kernel job: F_SETOWN/O_ASYNC signals to the victim (logged by run.py)."""
    err, t = await p.kernel("sigio", wait_s=100, timeout_s=60)
    print(p.out("sigio"))
    vl = R.OUTSIDE / "victim-signals.log"
    got = vl.read_text() if vl.exists() else ""
    print("victim's log so far:", got or "(nothing)")
    print("RESULT k_sigio:", "SUCCEEDED (the victim got a signal)" if got else "BLOCKED", flush=True)


@variant
async def c_sigio(p):
    err, t = await p.command(["python", "run_attack.py", "sigio"], timeout_s=60)
    f = R.WS / "cmd" / "sigio.txt"
    print(f.read_text() if f.exists() else t[:2000])
    vl = R.OUTSIDE / "victim-signals.log"
    got = vl.read_text() if vl.exists() else ""
    print("victim's log so far:", got or "(nothing)")
    print("RESULT c_sigio:", "SUCCEEDED (the victim got a signal)" if got else "BLOCKED", flush=True)


@variant
async def c_oomspread(p):
    """A command spreads ~8.5 GB over 120 processes smaller than the server, in the harness's 4 GiB cgroup."""
    await _dos(p, "command", "oomspread")

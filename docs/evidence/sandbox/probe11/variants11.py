"""The eleventh probe's variants (registered into run.py's table)."""

import os
import subprocess
import time

import __main__ as R

variant = R.variant


def ps_grep(word: str) -> list[str]:
    ps = subprocess.run(["ps", "-eo", "pid,ppid,sid,stat,args"], capture_output=True, text=True).stdout
    return [ln for ln in ps.splitlines() if word in ln and "ps -eo" not in ln and "grep" not in ln]


def _alive(tag: str) -> bool:
    pids = R.server_pid()
    print(f"{tag}: server cgroup pids {pids}", flush=True)
    return bool(pids)


async def _sweep(p, wait_s=150):
    err, t, sc = await p.call(
        "sweep", {"kernel": "./evil", "param": "n", "values": [256, 512], "wait_s": 50, "budget_ms": 20}
    )
    return await p.settle(err, t, sc, wait_s)


async def _mplrc(p, rc: str, via_command: bool):
    """The server imports matplotlib (unconfined, in its own working directory: the workspace) when it
    draws a sweep's plot; matplotlib reads ./matplotlibrc first. figure.hooks names module:callable pairs
    that pyplot.figure imports and calls with the new figure."""
    (R.WS / "evil" / "ATTACK").write_text("")
    mrc = R.WS / "matplotlibrc"
    if via_command:
        mrc.write_text("# the project's plot style (benign, as cloned)\n")
        if os.environ.get("KPROBE11_USER"):
            subprocess.run(["chown", os.environ["KPROBE11_USER"], str(mrc)])
        (R.WS / "cmd" / "rc.txt").write_text(rc)
        err, t = await p.command(["python", "cmd/rewrite_rc.py"], cwd=".", timeout_s=60)
        print("command answered: error", err, t[:300].replace("\n", " "), flush=True)
    else:
        mrc.write_text(rc)
    print("matplotlibrc now:", mrc.read_text().strip(), flush=True)
    t = ""
    try:
        err, t = await _sweep(p)
        print("sweep answered: error", err, t[-1500:], flush=True)
    except Exception as e:  # noqa: BLE001
        print("sweep raised", type(e).__name__, str(e)[:300], flush=True)
    time.sleep(2)
    called = "Figure" in t  # the hook's error on its Figure argument, quoted back
    print("server pids after", R.server_pid(), "hook called:", called, flush=True)
    return called


@variant
async def mplrc_crash(p):
    dead = await _mplrc(p, "figure.hooks: faulthandler:_sigsegv\n", via_command=False)
    print(
        "RESULT mplrc_crash (workspace matplotlibrc):",
        "SUCCEEDED (hook called by the server)" if dead else "BLOCKED",
        flush=True,
    )


@variant
async def mplrc_crash_cmd(p):
    dead = await _mplrc(p, "figure.hooks: faulthandler:_sigsegv\n", via_command=True)
    print(
        "RESULT mplrc_crash_cmd (matplotlibrc rewritten by a command):",
        "SUCCEEDED (hook called by the server)" if dead else "BLOCKED",
        flush=True,
    )


@variant
async def mplrc_write(p):
    """A hook that writes outside, unconfined: pathlib has no one-argument writer; use the figure's own
    savefig via rc savefig.directory? No: a hook 'builtins:print' proves a call; the outside write is
    proved by savefig.* not being used. We record whether the server imported a hook at all."""
    target = R.OUTSIDE / "mpl-hook-ran.txt"
    rc = "figure.hooks: builtins:print, sys:exit\n"
    dead = await _mplrc(p, rc, via_command=True)
    print(
        "RESULT mplrc_write (builtins:print then sys:exit as server hooks):",
        "SUCCEEDED (server died)" if dead else "no death",
        target.exists(),
        flush=True,
    )


@variant
async def mplrc_env(p):
    """figure.hooks from KPROBE11_RC (written by a command that rewrites the existing matplotlibrc),
    then a second sweep and a list_kernels: does the server still serve?"""
    rc = "figure.hooks: " + os.environ.get("KPROBE11_RC", "sys:exit") + "\n"
    dead = await _mplrc(p, rc, via_command=True)
    try:
        err, t, sc = await p.call("list_kernels", {}, timeout=60)
        print("list_kernels after: error", err, t[:300].replace("\n", " "), flush=True)
        err, t = await _sweep(p, 60)
        print("second sweep after: error", err, t[-600:].replace("\n", " "), flush=True)
    except Exception as e:  # noqa: BLE001
        print("after-call raised", type(e).__name__, str(e)[:300], flush=True)
    print(
        f"RESULT mplrc_env {rc.strip()}:",
        "SUCCEEDED (hook called by the server)" if dead else "BLOCKED",
        flush=True,
    )

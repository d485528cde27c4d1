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


@variant
async def c_forkrun(p):
    """A command leaves a process that moves (fork and exit every 10 ms, its own session) and a
    double-forked sleeper ignoring SIGTERM with its fds closed; after the job, is any left?"""
    err, t = await p.command(["python", "run_attack.py", "forkrun"], timeout_s=30)
    print("command answered: error", err, t[:200].replace("\n", " "), flush=True)
    time.sleep(3)
    left = ps_grep("kprobe11-forkrun") + ps_grep("sleep 45")
    print("left after the job:", left, flush=True)
    print("RESULT c_forkrun:", "SUCCEEDED (a process outlived the job)" if left else "BLOCKED", flush=True)


@variant
async def k_forkrun(p):
    err, t = await p.kernel("forkrun", wait_s=100, timeout_s=60)
    print(p.out("forkrun"))
    print("kernel job answered: error", err, t[:200].replace("\n", " "), flush=True)
    time.sleep(3)
    left = ps_grep("kprobe11-forkrun") + ps_grep("sleep 45")
    print("left after the job:", left, flush=True)
    print("RESULT k_forkrun:", "SUCCEEDED (a process outlived the job)" if left else "BLOCKED", flush=True)


@variant
async def k_outside_pkg(p):
    """profile_kernel / list_kernels / sweep naming a package outside the workspace (absolute, ../, ~,
    /proc/self/cwd/..): is it imported (it writes outside/ran-<how>.txt when imported)?"""
    import shutil

    pkg = R.OUTSIDE / "opkg"
    pkg.mkdir(exist_ok=True)
    shutil.copy(R.HERE / "pkg_init.py", pkg / "__init__.py")
    with open(pkg / "__init__.py", "a") as f:
        f.write("\nopen(os.path.join(HERE, '..', 'ran-outside-pkg.txt'), 'a').write('imported\\n')\n")
    if os.environ.get("KPROBE11_USER"):
        subprocess.run(["chown", "-R", os.environ["KPROBE11_USER"], str(pkg)])
    home_pkg = R.HOME / "hpkg"
    shutil.copytree(pkg, home_pkg, dirs_exist_ok=True)
    for k in (
        str(pkg),
        "../outside/opkg",
        f"{R.WS}/../outside/opkg",
        "~/hpkg",
        "/proc/self/cwd/../outside/opkg",
        "/proc/self/root" + str(pkg),
    ):
        for tool, args in (
            ("profile_kernel", {"kernel": k, "mode": "event", "wait_s": 30, "params": {"n": 64}}),
            ("sweep", {"kernel": k, "param": "n", "values": [64], "wait_s": 30}),
        ):
            try:
                err, t, sc = await p.call(tool, args, timeout=90)
                err, t = await p.settle(err, t, sc, 60)
            except Exception as e:  # noqa: BLE001
                err, t = True, f"raised {type(e).__name__} {e}"
            print(f"{tool} {k}: error {err}: {t[:160]!r}", flush=True)
    err, t, sc = await p.call("list_kernels", {}, timeout=60)
    print("list_kernels mentions opkg/hpkg:", "opkg" in t or "hpkg" in t, flush=True)
    ran = (R.OUTSIDE / "ran-outside-pkg.txt").exists() or (R.HOME / "ran-outside-pkg.txt").exists()
    print(
        "RESULT k_outside_pkg:",
        "SUCCEEDED (an outside package was imported)" if ran else "BLOCKED",
        flush=True,
    )


@variant
async def plant_special(p):
    """A kernel job and a command plant FIFOs, a socket, an 8 GiB sparse file, a 100,000-deep JSON and
    links (to /etc/shadow) under the names the server reads in their run directories; then the read tools."""
    err, t = await p.kernel("plant", wait_s=120, timeout_s=60)
    print(p.out("plant")[:1500])
    print("kernel job answered: error", err, t[:600].replace("\n", " "), flush=True)
    err, t = await p.command(["python", "run_attack.py", "plant"], cwd="cmd", timeout_s=60)
    print("command job answered: error", err, t[:600].replace("\n", " "), flush=True)
    profs = sorted(str(q.relative_to(R.WS)) for q in (R.WS / "out" / "profiles").rglob("*") if q.is_dir())
    print("profile dirs:", profs[:30], flush=True)
    for d in profs[:12]:
        try:
            err, t, sc = await p.call("read_params", {"profile_dir": d}, timeout=60)
            print(f"read_params {d}: error {err}: {t[:200]!r}", flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"read_params {d}: raised {type(e).__name__} {str(e)[:200]}", flush=True)
    err, t, sc = await p.call("list_kernels", {}, timeout=60)
    print("server still answers list_kernels:", not err, flush=True)


@variant
async def mplrc_create(p):
    """Precondition of P11-1 through a command: can a command create a matplotlibrc where none is
    (the workspace root, granted entry by entry)?"""
    mrc = R.WS / "matplotlibrc"
    if mrc.exists():
        mrc.unlink()
    (R.WS / "cmd" / "rc.txt").write_text("figure.hooks: faulthandler:_sigsegv\n")
    err, t = await p.command(["python", "cmd/rewrite_rc.py"], cwd=".", timeout_s=60)
    print("command answered: error", err, t[-400:].replace("\n", " "), flush=True)
    print(
        "RESULT mplrc_create:", "SUCCEEDED (created)" if mrc.exists() else "BLOCKED (not created)", flush=True
    )

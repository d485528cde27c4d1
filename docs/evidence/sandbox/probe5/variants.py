"""The fifth probe's variants (registered into run.py's table)."""
import asyncio
import os
import subprocess
import time

import __main__ as R

variant = R.variant


def cmd_out(name: str) -> str:
    p = R.WS / "cmd" / (name + ".txt")
    return p.read_text() if p.exists() else "(no output file)"


def procs(pattern: str) -> str:
    return subprocess.run(["pgrep", "-a", "-f", pattern], capture_output=True, text=True).stdout.strip()


@variant
async def k_prlimit_server(p):
    """A kernel package (warm worker, event mode) lowers the server's RLIMIT_CPU."""
    before = R.server_pid()
    err, t = await p.kernel("prlimit_server", wait_s=60)
    print("tool error:", err, t[:300])
    print(p.out("prlimit_server"))
    time.sleep(2)
    print("server cgroup before", before, "after", R.server_pid())


@variant
async def c_prlimit_server(p):
    """profile_command lowers the server's RLIMIT_CPU."""
    before = R.server_pid()
    err, t = await p.command(["python", "run_attack.py", "prlimit_server"], wait_s=60)
    print("tool error:", err, t[:300])
    print(cmd_out("prlimit_server"))
    time.sleep(2)
    print("server cgroup before", before, "after", R.server_pid())


@variant
async def k_nice_server(p):
    err, t = await p.kernel("nice_server", wait_s=60)
    print("tool error:", err, t[:200])
    print(p.out("nice_server"))
    s = R.server_pid()[0]
    print(subprocess.run(["ps", "-o", "pid,ni,cls,psr,args", "-p", str(s)], capture_output=True, text=True).stdout)
    print(subprocess.run(["taskset", "-p", str(s)], capture_output=True, text=True).stdout)


@variant
async def c_nice_server(p):
    err, t = await p.command(["python", "run_attack.py", "nice_server"], wait_s=60)
    print("tool error:", err, t[:200])
    print(cmd_out("nice_server"))
    s = R.server_pid()[0]
    print(subprocess.run(["ps", "-o", "pid,ni,cls,psr,args", "-p", str(s)], capture_output=True, text=True).stdout)


@variant
async def k_clone_parent(p):
    """A package's CLONE_PARENT child outlives its job (and the next job) in the warm worker's supervisor."""
    err, t = await p.kernel("clone_parent", wait_s=60)
    print("tool error:", err, t[:200])
    print(p.out("clone_parent"))
    print("after the job:", procs("sleep 901") or "(none)")
    err, t, _ = await p.call("profile_kernel", {"kernel": "vector_add", "mode": "event", "wait_s": 50})
    print("second job (vector_add) error:", err)
    time.sleep(3)
    print("after a second job:", procs("sleep 901") or "(none)")
    print(R.ps_tree())


@variant
async def c_clone_parent(p):
    err, t = await p.command(["python", "run_attack.py", "clone_parent"], wait_s=60)
    print("tool error:", err, t[:200])
    print(cmd_out("clone_parent"))
    time.sleep(2)
    print("after the job:", procs("sleep 901") or "(none)")


@variant
async def k_linger_thread(p):
    err, t = await p.kernel("linger_thread", wait_s=60)
    print("tool error:", err, t[:200])
    print(p.out("linger_thread"))
    t0 = time.time()
    err, t, _ = await p.call("profile_kernel", {"kernel": "vector_add", "mode": "event", "wait_s": 50})
    print("second job (vector_add) error:", err)
    await asyncio.sleep(20)
    beat = R.WS / "out" / "profiles" / "kprobe5" / "linger_beat.txt"
    lines = beat.read_text().splitlines() if beat.exists() else []
    print(f"heartbeat lines: {len(lines)}; last: {lines[-1] if lines else None}; now {time.strftime('%H:%M:%S')}")


@variant
async def k_fake_done(p):
    t0 = time.time()
    err, t = await p.kernel("fake_done", wait_s=100, timeout_s=30)
    print(f"tool answered after {time.time() - t0:.1f} s, error:", err, t[:400])
    await asyncio.sleep(45)
    beat = R.WS / "out" / "profiles" / "kprobe5" / "fake_done_beat.txt"
    lines = beat.read_text().splitlines() if beat.exists() else []
    print(f"{time.time() - t0:.0f} s after the call (job timeout 30 s): beat lines {len(lines)}; last {lines[-1] if lines else None}")
    print(p.out("fake_done"))
    print(R.ps_tree())


@variant
async def k_keyring(p):
    err, t = await p.kernel("keyring", wait_s=60)
    print("tool error:", err, t[:200])
    print(p.out("keyring"))
    print(subprocess.run("grep kprobe5 /proc/keys", shell=True, capture_output=True, text=True).stdout)


@variant
async def c_keyring(p):
    err, t = await p.command(["python", "run_attack.py", "keyring"], wait_s=60)
    print("tool error:", err, t[:200])
    print(cmd_out("keyring"))
    print(subprocess.run("grep kprobe5 /proc/keys", shell=True, capture_output=True, text=True).stdout)


def cpu_and_limits(pid: int) -> str:
    try:
        f = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()
        cpu = (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
        lim = [ln for ln in open(f"/proc/{pid}/limits") if "cpu time" in ln or "open files" in ln]
        return f"pid {pid} cpu {cpu:.2f} s; " + " | ".join(" ".join(ln.split()) for ln in lim)
    except OSError as e:
        return f"pid {pid}: {e}"


@variant
async def k_prlimit_server_watch(p):
    """As k_prlimit_server, then the server is watched while it serves a few calls."""
    s = R.server_pid()[0]
    print("before:", cpu_and_limits(s))
    err, t = await p.kernel("prlimit_server", wait_s=60)
    print("tool error:", err)
    print(p.out("prlimit_server"))
    print("after the job:", cpu_and_limits(s))
    for i in range(300):  # the server's own work until its CPU time passes the limit
        try:
            err, t, sc = await p.call("list_kernels", {}, timeout=30)
            if i % 20 == 0:
                print(f"list_kernels {i}: error {err} {t[:60]!r}")
                print("   ", cpu_and_limits(s), "alive", os.path.exists(f"/proc/{s}"))
        except Exception as e:  # noqa: BLE001
            print(f"list_kernels {i}: client saw {type(e).__name__}: {e}; server pid {s} alive: {os.path.exists(f'/proc/{s}')}")
            return
    err, t = await p.command(["python", "run_attack.py", "keyring"], wait_s=60)
    print("a command after it: error", err, t[:300])


@variant
async def c_sigkill_self(p):
    """A command that ends by SIGKILL (its own kill -9, as the OOM killer would)."""
    (R.WS / "cmd" / "die9.py").write_text("import os, signal\nprint('dying', flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\n")
    err, t = await p.command(["python", "die9.py"], wait_s=60)
    print("tool error:", err, t[:900])


@variant
async def k_race_rundir(p):
    """A job's thread makes a later job's (vector_add's) run directory a link to OUTSIDE after the server checked it."""
    (R.WS / "evil" / "TARGET").write_text(str(R.OUTSIDE))
    err, t = await p.kernel("race_rundir", wait_s=60)
    print("job A (the package) error:", err)
    print(p.out("race_rundir"))
    for i in range(3):
        err, t, _ = await p.call("profile_kernel", {"kernel": "vector_add", "mode": "event", "wait_s": 50,
                                                    "params": {"n": 4096 * (i + 1)}})
        print(f"job B{i} (vector_add) error: {err}; answer: {t[:600]!r}")
        print("outside now:", sorted(os.listdir(R.OUTSIDE)))
    lg = R.WS / "out" / "profiles" / "kprobe5" / "race_rundir.log"
    print(lg.read_text() if lg.exists() else "(no race log)")
    for f in sorted(R.OUTSIDE.iterdir()):
        print("OUTSIDE", f.name, f.stat().st_size, "bytes; starts", f.read_text(errors="replace")[:120].replace("\n", " | "))


@variant
async def c_self_status(p):
    err, t = await p.command(["python", "run_attack.py", "self_status"], wait_s=60)
    print(cmd_out("self_status"))


@variant
async def k_self_status(p):
    err, t = await p.kernel("self_status", wait_s=60)
    print(p.out("self_status"))


def as_user(args: list[str]) -> str:
    import sys
    user = os.environ.get("KPROBE5_USER", "65534")
    py = "/usr/bin/python3"
    r = subprocess.run(["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", py,
                        str(R.HERE / "sysv_owner.py"), *args], capture_output=True, text=True)
    return (r.stdout + r.stderr).strip()


@variant
async def c_sysv_ipc(p):
    print("owner:", as_user(["create"]))
    try:
        err, t = await p.command(["python", "run_attack.py", "sysv_ipc"], wait_s=60)
        print(cmd_out("sysv_ipc"))
        print("owner:", as_user(["show"]))
    finally:
        print("owner:", as_user(["remove"]))


@variant
async def k_sysv_ipc(p):
    print("owner:", as_user(["create"]))
    try:
        err, t = await p.kernel("sysv_ipc", wait_s=60)
        print(p.out("sysv_ipc"))
        print("owner:", as_user(["show"]))
    finally:
        print("owner:", as_user(["remove"]))


@variant
async def k_race_read(p):
    """The server reads another workspace's profile (outside) and answers with it."""
    import shutil
    # another workspace's finished profile (made here by the server, then copied outside: a victim)
    err, t, sc = await p.call("profile_kernel", {"kernel": "vector_add", "mode": "event", "wait_s": 50, "params": {"n": 999}})
    src = R.Path(sc["profile_dir"])
    victim = R.OUTSIDE / "otherws-profile"
    shutil.copytree(src, victim)
    res = victim / "result.json"
    res.write_text(res.read_text().replace('"n": 999', '"n": 424242'))  # marks the victim's own
    (R.WS / "evil" / "TARGET").write_text(str(victim))
    (R.WS / "evil" / "DELAYS").write_text("0.002 0.005 0.01 0.02")
    err, t = await p.kernel("race_read", wait_s=60)
    print("job A (the package) error:", err)
    for i in range(4):
        err, t, _ = await p.call("profile_kernel", {"kernel": "vector_add", "mode": "event", "wait_s": 50,
                                                    "params": {"n": 2048 * (i + 1)}})
        print(f"job B{i} (vector_add n={2048 * (i + 1)}) error: {err}; answer mentions 424242: {'424242' in t}; {t[:300]!r}")
    lg = R.WS / "out" / "profiles" / "kprobe5" / "race_read.log"
    print(lg.read_text() if lg.exists() else "(no race log)")
    print("victim dir now:", sorted(x.name for x in victim.iterdir()))


@variant
async def k_respawn(p):
    err, t = await p.kernel("respawn", wait_s=60)
    print("job error:", err)
    await asyncio.sleep(2)
    print("after the job:", procs("sleep 902") or "(none)")
    for i in range(2):
        err, t, _ = await p.call("profile_kernel", {"kernel": "vector_add", "mode": "event", "wait_s": 50, "params": {"n": 1000 + i}})
        await asyncio.sleep(2)
        print(f"after job {i + 2} (vector_add, error {err}):", procs("sleep 902") or "(none)")
    lg = R.WS / "out" / "profiles" / "kprobe5" / "respawn.log"
    print(lg.read_text() if lg.exists() else "(no log)")


@variant
async def c_affinity(p):
    (R.WS / "cmd" / "affinity.py").write_text(
        "import os\nt = sorted(int(x) for x in open([f'/sys/fs/cgroup/memory{l.strip().split(\":\", 2)[2]}/cgroup.procs' "
        "for l in open('/proc/self/cgroup') if ':memory:' in l][0]).read().split())[0]\n"
        "try:\n    os.sched_setaffinity(t, {0}); print('server', t, 'pinned to CPU 0')\nexcept OSError as e:\n    print('affinity', e)\n")
    err, t = await p.command(["python", "affinity.py"], wait_s=60)
    print(t[-200:])
    s = R.server_pid()[0]
    print(subprocess.run(["taskset", "-p", str(s)], capture_output=True, text=True).stdout)


@variant
async def k_escapes(p):
    import shutil
    shutil.copy(R.HERE / "pkg_esc.py", R.WS / "esc.py")
    err, t, sc = await p.call("profile_kernel", {"kernel": "./esc.py", "mode": "event", "wait_s": 50})
    print("profile error:", err, "ESC in answer:", "\x1b" in t, "BEL:", "\x07" in t, "file:// in answer:", "file://" in t)
    print(repr(t[:700]))
    lk = await p.call("list_kernels", {})
    print("list_kernels ESC:", "\x1b" in lk[1], "file://:", "file://" in lk[1])
    if sc and sc.get("profile_dir"):
        d = R.Path(sc["profile_dir"])
        for f in ("report.md", "contract.md"):
            x = (d / f).read_text()
            print(f, "ESC:", "\x1b" in x, "file://:", "file://" in x, "<img:", "<img" in x, "<script:", "<script" in x)
        e2, t2, _ = await p.call("update_devlog", {"kernel": "./esc.py", "profile_dir": str(d)})
        print("update_devlog error:", e2, t2[:200])
        for f in R.WS.rglob("*.md"):
            if "devlog" in f.name.lower() or "docs/kernels" in str(f):
                x = f.read_text()
                print("devlog", f.relative_to(R.WS), "ESC:", "\x1b" in x, "file://:", "file://" in x, "<img:", "<img" in x, "<script:", "<script" in x)
    # the CLI showing the profile (a user's terminal)
    r = subprocess.run([str(R.REPO / ".venv" / "bin" / "kprof"), "--help"], capture_output=True, text=True)
    print("kprof CLI:", r.stdout[:300])


@variant
async def k_race_by_listing(p):
    """Only list_kernels sees the planted package (never profiled); then another kernel's job is hijacked."""
    import shutil
    (R.WS / "kernels").mkdir(exist_ok=True)
    shutil.copy(R.HERE / "pkg_import.py", R.WS / "kernels" / "imp.py")
    (R.WS / "evil" / "TARGET").write_text(str(R.OUTSIDE))
    err, t, sc = await p.call("list_kernels", {})
    print("list_kernels error:", err, "imp listed:", '"imp"' in t)
    print((R.WS / "out" / "profiles" / "kprobe5" / "import_race.txt").read_text() if (R.WS / "out" / "profiles" / "kprobe5" / "import_race.txt").exists() else "(not imported)")
    print(R.ps_tree())
    err, t, _ = await p.call("profile_kernel", {"kernel": "vector_add", "mode": "event", "wait_s": 50, "params": {"n": 3333}})
    print("vector_add error:", err, t[:160])
    lg = R.WS / "out" / "profiles" / "kprobe5" / "race_rundir.log"
    print(lg.read_text() if lg.exists() else "(no race log)")
    print("outside now:", sorted(os.listdir(R.OUTSIDE)))


@variant
async def k_hooks(p):
    """P5-5 without a thread: an audit hook and a gc callback run in later jobs (vector_add)."""
    err, t = await p.kernel("hooks", wait_s=60)
    print("job error:", err)
    print(p.out("hooks"))
    for i in range(2):
        err, t, _ = await p.call("profile_kernel", {"kernel": "vector_add", "mode": "event", "wait_s": 50, "params": {"n": 2000 + i}})
        print(f"later job {i} (vector_add) error: {err}")
    lg = R.WS / "out" / "profiles" / "kprobe5" / "hooks.log"
    lines = lg.read_text().splitlines() if lg.exists() else []
    print(f"hook log: {len(lines)} lines; audit lines: {sum('audit' in x for x in lines)}; gc lines: {sum('gc callback' in x for x in lines)}")
    for x in [x for x in lines if "audit" in x][:4] + [x for x in lines if "gc callback" in x][-2:]:
        print("  ", x)


@variant
async def k_race_compare(p):
    """P5-6 on compare_versions (engine/batch.py: the same checked_dirs, then compare.json read and written through the work dir)."""
    (R.WS / "evil" / "TARGET").write_text(str(R.OUTSIDE))
    err, t = await p.kernel("race_rundir", wait_s=60)
    print("job A error:", err)
    for i in range(2):
        err, t, sc = await p.call("compare_versions", {"kernel": "vector_add", "versions": ["v0", "v1"], "mode": "event",
                                                       "params": {"n": 5000 + i}, "wait_s": 50})
        if not err and sc and sc.get("status") in ("queued", "running"):
            err, t = await p.settle(err, t, sc, 150)
        print(f"compare_versions {i} error: {err}; {t[:200]!r}")
        print("outside now:", sorted(os.listdir(R.OUTSIDE)))
    lg = R.WS / "out" / "profiles" / "kprobe5" / "race_rundir.log"
    print("\n".join(x for x in (lg.read_text().splitlines() if lg.exists() else []) if "swapped" in x))

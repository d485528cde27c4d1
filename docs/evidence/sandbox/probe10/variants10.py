"""The tenth probe's variants (registered into run.py's table)."""

import os
import subprocess
import time

import __main__ as R

variant = R.variant


def ps_grep(word: str) -> list[str]:
    ps = subprocess.run(["ps", "-eo", "pid,ppid,sid,stat,args"], capture_output=True, text=True).stdout
    return [ln for ln in ps.splitlines() if word in ln and "ps -eo" not in ln and "grep" not in ln]


def segments(owner: str) -> list[str]:
    out = subprocess.run(["ipcs", "-m"], capture_output=True, text=True).stdout
    return [ln for ln in out.splitlines() if f" {owner} " in ln]


def drop_segments(lines: list[str]) -> None:
    for ln in lines:
        subprocess.run(["ipcrm", "-m", ln.split()[1]])


async def _shmleak(p, kind: str):
    owner = os.environ.get("KPROBE10_USER") or "root"
    before = {ln.split()[1] for ln in segments(owner)}
    avail0 = int(open("/proc/meminfo").read().split("MemAvailable:")[1].split()[0]) >> 10
    if kind == "kernel":
        err, t = await p.kernel("shmleak", wait_s=100, timeout_s=60)
        print(p.out("shmleak"))
    else:
        err, t = await p.command(["python", "run_attack.py", "shmleak"], timeout_s=60)
        f = R.WS / "cmd" / "shmleak.txt"
        print(f.read_text() if f.exists() else t[:1500])
    print(f"{kind} job answered: error", err, t[:200].replace("\n", " "))
    time.sleep(3)
    left = [ln for ln in segments(owner) if ln.split()[1] not in before]
    avail1 = int(open("/proc/meminfo").read().split("MemAvailable:")[1].split()[0]) >> 10
    jobs = R.CG["memory"] / "kprof-jobs"
    usage = (
        (jobs / "memory.usage_in_bytes").read_text().strip() if jobs.is_dir() else "(no kprof-jobs cgroup)"
    )
    print(
        f"SysV segments of {owner} left after the job: {left}; MemAvailable {avail0} -> {avail1} MiB; "
        f"kprof-jobs usage after the job: {usage}"
    )
    print(
        f"RESULT {kind}_shmleak:",
        "SUCCEEDED (memory held after the job ended)" if left else "BLOCKED (no segment left)",
        flush=True,
    )
    drop_segments(left)


@variant
async def c_shmleak(p):
    await _shmleak(p, "command")


@variant
async def k_shmleak(p):
    await _shmleak(p, "kernel")


@variant
async def race_runs_link(p):
    """Two slots (KPROBE10_GPUS=0,1): a kernel job flips out/profiles/event into a link to outside/evdir
    while command jobs start on the other slot; each command writes outside/evdir/command/PWNED-<pid>."""
    target = R.OUTSIDE / "evdir"
    (target / "command").mkdir(parents=True, exist_ok=True)
    if os.environ.get("KPROBE10_USER"):
        subprocess.run(["chown", "-R", os.environ["KPROBE10_USER"], str(target)])
    (R.WS / "FLIP_TARGET").write_text(str(target))
    (R.WS / "FLIP_S").write_text(os.environ.get("KPROBE10_FLIP_S", "60"))
    (R.WS / "evil" / "ATTACK").write_text("flipper")
    err, t, sc = await p.call(
        "profile_kernel",
        {"kernel": "./evil", "mode": "event", "wait_s": 1, "params": {"n": 1024}, "timeout_s": 150},
    )
    kjob = (sc or {}).get("job_id")
    print("kernel job", kjob, (sc or {}).get("status"), (sc or {}).get("gpu"), t[:150].replace("\n", " "))
    time.sleep(8)  # the warm worker starts the package
    tries, answers = 0, {}
    t_end = time.monotonic() + float(os.environ.get("KPROBE10_FLIP_S", "60")) - 10
    while time.monotonic() < t_end:
        tries += 1
        err2, t2 = await p.command(["python", "run_attack.py", "flipw"], wait_s=60, timeout_s=30)
        key = t2.split("\n")[0][:120]
        answers[key] = answers.get(key, 0) + 1
    print("command answers:", answers)
    f = R.WS / "cmd" / "flipw.txt"
    print("the commands' log:", (f.read_text() if f.exists() else "(none)")[-1500:])
    if kjob:
        err, t = await p.settle(False, "", {"job_id": kjob, "status": "running"}, 150)
    print(p.out("flipper"))
    got = sorted(x.name for x in (target / "command").iterdir())
    print(f"{tries} command jobs; files in outside/evdir/command: {got}")
    print(
        "RESULT race_runs_link:",
        "SUCCEEDED (a command wrote outside the workspace)" if got else "BLOCKED",
        flush=True,
    )


async def _dos(p, kind: str, attack: str):
    srv = min(R.server_pid())
    pids = " ".join(str(x) for x in R.server_pid())
    print(
        "before the job:",
        subprocess.run(f"ps -o pid,ppid,args -p {pids}", shell=True, capture_output=True, text=True).stdout[
            :3000
        ],
    )
    if kind == "kernel":
        err, t = await p.kernel(attack, wait_s=150, timeout_s=120)
        print(p.out(attack)[-600:])
    else:
        err, t = await p.command(["python", "run_attack.py", attack], timeout_s=120, wait_s=150)
        f = R.WS / "cmd" / f"{attack}.txt"
        print((f.read_text() if f.exists() else "(no log)")[-600:])
    print(f"{kind} job answered: error", err, t[:200].replace("\n", " "))
    time.sleep(3)
    alive = os.path.exists(f"/proc/{srv}")
    print("server", srv, "alive 3 s later:", alive)
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
            t2[:200].replace("\n", " "),
        )
    except BaseException as e:  # noqa: BLE001
        print("another client's job after it: no answer:", type(e).__name__, str(e)[:200])
    dm = subprocess.run(
        "dmesg | grep -i 'killed process' | tail -4", shell=True, capture_output=True, text=True
    )
    print("dmesg:", dm.stdout.strip())
    print(
        f"RESULT {kind}_{attack}:",
        "SUCCEEDED (the server is dead or cannot serve other clients)" if not alive or not ok else "BLOCKED",
        flush=True,
    )


@variant
async def c_shmfill(p):
    """A command leaves 6 GiB in detached SysV segments inside the harness's 4 GiB cgroup."""
    owner = os.environ.get("KPROBE10_USER") or "root"
    before = {ln.split()[1] for ln in segments(owner)}
    try:
        await _dos(p, "command", "shmfill")
    finally:
        left = [ln for ln in segments(owner) if ln.split()[1] not in before]
        print(f"segments left: {len(left)} ({sum(int(ln.split()[4]) for ln in left) >> 20} MiB); removed now")
        drop_segments(left)


@variant
async def k_shmfill(p):
    owner = os.environ.get("KPROBE10_USER") or "root"
    before = {ln.split()[1] for ln in segments(owner)}
    try:
        await _dos(p, "kernel", "shmfill")
    finally:
        left = [ln for ln in segments(owner) if ln.split()[1] not in before]
        print(f"segments left: {len(left)} ({sum(int(ln.split()[4]) for ln in left) >> 20} MiB); removed now")
        drop_segments(left)


@variant
async def c_shmfill2(p):
    """Two shmfill commands in a row: the first job's segments stay charged, the second fills the rest."""
    owner = os.environ.get("KPROBE10_USER") or "root"
    before = {ln.split()[1] for ln in segments(owner)}
    try:
        await _dos(p, "command", "shmfill")
        f = R.WS / "cmd" / "shmfill.txt"
        f.unlink(missing_ok=True)
        await _dos(p, "command", "shmfill")
    finally:
        left = [ln for ln in segments(owner) if ln.split()[1] not in before]
        print(f"segments left: {len(left)} ({sum(int(ln.split()[4]) for ln in left) >> 20} MiB); removed now")
        drop_segments(left)


@variant
async def c_oomlow(p):
    await _dos(p, "command", "oomlow")


@variant
async def k_oomlow(p):
    await _dos(p, "kernel", "oomlow")


@variant
async def c_devshm(p):
    await _dos(p, "command", "devshm")


@variant
async def c_nsmount(p):
    err, t = await p.command(["python", "run_attack.py", "nsmount"], timeout_s=60)
    f = R.WS / "cmd" / "nsmount.txt"
    print(f.read_text() if f.exists() else t[:2000])
    leaked = (R.WS / "out" / "kp10-through.txt").exists() or not (R.WS / "victim_ws.txt").exists()
    print("RESULT c_nsmount:", "SUCCEEDED" if leaked else "BLOCKED (see the ALLOWED lines)", flush=True)


@variant
async def k_nsmount(p):
    err, t = await p.kernel("nsmount", wait_s=100, timeout_s=60)
    print(p.out("nsmount"))
    leaked = (R.WS / "out" / "kp10-through.txt").exists() or not (R.WS / "victim_ws.txt").exists()
    print("RESULT k_nsmount:", "SUCCEEDED" if leaked else "BLOCKED (see the ALLOWED lines)", flush=True)

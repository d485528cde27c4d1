"""The seventh probe's variants (registered into run.py's table)."""

import time

import anyio

import __main__ as R

variant = R.variant


def outside() -> str:
    return "; ".join(f"{f.name} {f.stat().st_size} bytes" for f in sorted(R.OUTSIDE.iterdir()))


def leftovers() -> str:
    """Processes of the server's cgroup other than the server and its warm workers' supervisors."""
    return R.ps_tree()


@variant
async def k_recon(p):
    """The broad attack (attacks/recon.py) in a kernel child (the warm worker, event mode)."""
    err, t = await p.kernel("recon", wait_s=150, timeout_s=120)
    print("profile_kernel answered: error", err, t[:300].replace("\n", " "))
    print(p.out("recon"))
    print("outside after:", outside())


@variant
async def c_recon(p):
    """The broad attack as profile_command (python run_attack.py recon, cwd cmd/)."""
    err, t = await p.command(["python", "run_attack.py", "recon"], timeout_s=120)
    print("profile_command answered: error", err)
    f = R.WS / "cmd" / "recon.txt"
    print(f.read_text() if f.exists() else t[:3000])
    print("outside after:", outside())


async def _race_jobs(p, spin: int, secs: int = 57):
    """The describe worker (profile_kernel ./racer: its describe imports the package, confined) races the server's writes of its
    kernel jobs' request.json in the shared jobs directory while profile jobs run one after another."""
    import glob

    target = R.OUTSIDE / "victim.txt"
    (R.WS / "racer" / "RACE").write_text(f"{target} {secs} {spin}")
    before = target.read_bytes()
    print("outside before:", outside(), "| victim.txt:", before[:60])
    res = {"jobs": 0, "errors": []}

    async def lister():
        t0 = time.monotonic()
        err, t, sc = await p.call(
            "profile_kernel",
            {"kernel": "./racer", "mode": "event", "wait_s": 5, "params": {"n": 1024}},
            timeout=secs + 90,
        )
        res["list"] = (err, round(time.monotonic() - t0, 1), t[:200].replace("\n", " "))

    async def jobs():
        await anyio.sleep(6)
        end = time.monotonic() + secs - 10
        while time.monotonic() < end:
            err, t, sc = await p.call(
                "profile_kernel",
                {
                    "kernel": "vector_add",
                    "mode": "event",
                    "wait_s": 50,
                    "params": {"n": 1024},
                    "timeout_s": 3,
                },
                timeout=120,
            )
            err, t = await p.settle(err, t, sc, 60)
            res["jobs"] += 1
            if err:
                res["errors"].append(t[:300].replace("\n", " "))

    async with anyio.create_task_group() as tg:
        tg.start_soon(lister)
        tg.start_soon(jobs)
    print("profile_kernel ./racer (its describe imports the racer):", res.get("list"))
    print("profile jobs run:", res["jobs"], "errors:", len(res["errors"]))
    for e in res["errors"][:5]:
        print("  error:", e)
    for f in glob.glob("/tmp/kprof-kernels-*/kprobe7-race.log"):
        print("racer log", f, ":\n" + open(f).read()[-3000:])
    after = target.read_bytes()
    print("outside after:", outside(), "| victim.txt:", after[:300])
    print(
        "RESULT k_race_jobs:",
        "SUCCEEDED (the server wrote a job's request through a planted link into an outside file)"
        if after != before
        else "BLOCKED (the outside file is unchanged)",
        flush=True,
    )


@variant
async def k_race_jobs(p):
    await _race_jobs(p, 0)


@variant
async def k_race_jobs_spin(p):
    await _race_jobs(p, 3)

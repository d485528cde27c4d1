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


@variant
async def k_odd_package(p):
    """A package whose describe record and job record carry lone surrogates, NUL and escapes; then the
    tools that read them back (list_kernels, profile_kernel, get_profile, classify_bottleneck,
    update_devlog, compare_versions)."""
    for tool, args in (
        ("list_kernels", {}),
        ("profile_kernel", {"kernel": "./odd", "mode": "event", "wait_s": 50, "params": {"n": 1024}}),
    ):
        err, t, sc = await p.call(tool, args, timeout=180)
        if tool == "profile_kernel":
            err, t = await p.settle(err, t, sc, 120)
            pd = next((w for w in t.split() if "out/profiles" in w), "").strip("`'\",()")
            print("profile_dir:", pd)
        if tool == "list_kernels":
            odd = [
                k
                for k in (sc or {}).get("kernels", [])
                if k.get("name") == "odd" or "odd" in str(k.get("source"))
            ]
            print("list_kernels' entry for ./odd:", ascii(str(odd)[:600]))
        print(f"{tool}: error {err}:", ascii(t[:600]))
    for tool, args in (
        (
            "update_devlog",
            {"kernel": "odd", "profile_dir": pd, "issues": ["\x00\x1b issue"], "insights": ["\x00"]},
        ),
        ("compare_versions", {"kernel": "./odd", "versions": ["v0", "v0"], "wait_s": 50}),
        ("read_params", {"profile_dir": pd}),
    ):
        try:
            err, t, sc = await p.call(tool, args, timeout=180)
            err, t = await p.settle(err, t, sc, 120)
            print(f"{tool}: error {err}:", ascii(t[:400]))
        except Exception as e:  # noqa: BLE001
            print(f"{tool} raised", type(e).__name__, ascii(str(e)[:300]))


@variant
async def x_odd_arguments(p):
    """A client's arguments with NUL, escapes, bidi, huge and nested values (bare errors?); lone surrogates cannot be sent by the SDK client (it fails to serialize them)."""
    deep: object = 1
    for _ in range(3000):
        deep = [deep]
    calls = [
        (
            "profile_command",
            {"command": ["python", "run_attack.py", "\x00\x1b\u202e"], "cwd": "cmd", "wait_s": 5},
        ),
        ("profile_command", {"command": ["python", "\x00\x1b\u202e.py"], "cwd": "cmd", "wait_s": 5}),
        (
            "profile_command",
            {"command": ["python", "run_attack.py", "x"], "cwd": "\x00\x1b\u202e", "wait_s": 5},
        ),
        (
            "profile_command",
            {"command": ["python", "-m", "pytest", "-k", "\x00\x1b\u202e or x"], "cwd": "cmd", "wait_s": 5},
        ),
        (
            "profile_command",
            {"command": ["python", "-m", "pytest", "-m", "a" * 100000], "cwd": "cmd", "wait_s": 5},
        ),
        (
            "profile_command",
            {
                "command": ["python", "run_attack.py"],
                "cwd": "cmd",
                "include": ["\x00\x1b\u202e"],
                "wait_s": 5,
            },
        ),
        (
            "profile_command",
            {
                "command": ["python", "run_attack.py"],
                "cwd": "cmd",
                "stage_models": {"\x00\x1b\u202e": {"flops": 1}},
                "wait_s": 5,
            },
        ),
        ("profile_kernel", {"kernel": "\x00\x1b\u202e", "mode": "event"}),
        ("profile_kernel", {"kernel": "vector_add", "params": {"\x00\x1b\u202e": 1}, "mode": "event"}),
        ("profile_kernel", {"kernel": "vector_add", "params": {"n": deep}, "mode": "event"}),
        (
            "update_devlog",
            {"kernel": "vector_add", "profile_dir": "\x00\x1b\u202e", "issues": ["\x00\x1b\u202e"]},
        ),
        ("get_profile", {"job_id": "\x00\x1b\u202e"}),
        ("read_params", {"profile_dir": "out/profiles/\x00\x1b\u202e"}),
        ("cancel_profile", {"job_id": "\x00" * 1000}),
    ]
    for tool, args in calls:
        try:
            err, t, sc = await p.call(tool, args, timeout=120)
            if sc and sc.get("job_id"):
                err, t = await p.settle(err, t, sc, 60)
            print(f"{tool} {ascii(str(args))[:100]}: error {err}:", ascii(t[:300]))
        except Exception as e:  # noqa: BLE001
            print(f"{tool} {ascii(str(args))[:100]} raised", type(e).__name__, ascii(str(e)[:300]))


@variant
async def k_more(p):
    """caches.py, forkbomb.py, manyfiles.py in kernel children, then the tools that list and read
    profiles, with the server's pids and memory after each."""
    for attack in ("caches", "forkbomb", "manyfiles"):
        t0 = time.monotonic()
        err, t = await p.kernel(attack, wait_s=200, timeout_s=150)
        print(f"{attack}: error {err} after {time.monotonic() - t0:.1f} s:", t[:200].replace("\n", " "))
        print(p.out(attack))
        await anyio.sleep(2)
        print("after", attack, "server cgroup:", R.ps_tree())
    for tool, args in (
        ("device_info", {}),
        ("list_kernels", {}),
        ("profile_kernel", {"kernel": "vector_add", "mode": "event", "wait_s": 50, "params": {"n": 1024}}),
        ("read_params", {"profile_dir": "out/profiles/kprobe7/many"}),
        ("read_params", {"profile_dir": "out/profiles/event/\x1b[31mred"}),
    ):
        t0 = time.monotonic()
        err, t, sc = await p.call(tool, args, timeout=200)
        err, t = await p.settle(err, t, sc, 120)
        print(f"{tool} {ascii(args)[:80]}: error {err} after {time.monotonic() - t0:.1f} s:", ascii(t[:200]))
    rss = [open(f"/proc/{q}/status").read().split("VmRSS:")[1].split()[0] for q in R.server_pid()[:1]]
    print("server RSS kB:", rss)


@variant
async def k_race_jobs_queued(p):
    """P7-1 from one client calling one tool at a time: queue jobs of a built-in kernel (each call answers
    at once with a job id), then profile ./racer, whose describe (the confined describe worker) races
    the queued jobs' request files while they start one after another."""
    import glob

    target = R.OUTSIDE / "victim.txt"
    (R.WS / "racer" / "RACE").write_text(f"{target} 57 0")
    before = target.read_bytes()
    print("outside before:", outside(), "| victim.txt:", before[:60])
    ids = []
    for _ in range(16):
        err, t, sc = await p.call(
            "profile_kernel",
            {"kernel": "vector_add", "mode": "event", "wait_s": 0, "params": {"n": 1024}, "timeout_s": 3},
            timeout=60,
        )
        ids.append((sc or {}).get("job_id"))
    print("queued:", len([i for i in ids if i]), "jobs; first answer:", t[:160].replace("\n", " "))
    t0 = time.monotonic()
    err, t, sc = await p.call(
        "profile_kernel",
        {"kernel": "./racer", "mode": "event", "wait_s": 0, "params": {"n": 1024}},
        timeout=150,
    )
    print(
        f"profile_kernel ./racer answered after {time.monotonic() - t0:.1f} s: error {err}:",
        t[:160].replace("\n", " "),
    )
    for i in ids:
        if i:
            err, t, sc = await p.call("get_profile", {"job_id": i, "wait_s": 30}, timeout=60)
    for f in glob.glob("/tmp/kprof-kernels-*/kprobe7-race.log"):
        print("racer log", f, ":\n" + open(f).read()[-2000:])
    after = target.read_bytes()
    print("outside after:", outside(), "| victim.txt:", after[:300])
    print(
        "RESULT k_race_jobs_queued:",
        "SUCCEEDED (the server wrote a job's request through a planted link into an outside file)"
        if after != before
        else "BLOCKED (the outside file is unchanged)",
        flush=True,
    )

"""The sixth probe's variants (registered into run.py's table)."""
import os
import subprocess
import time

import anyio

import __main__ as R

variant = R.variant


def procs(pattern: str) -> str:
    return subprocess.run(["pgrep", "-a", "-f", pattern], capture_output=True, text=True).stdout.strip()


def outside() -> str:
    return "; ".join(f"{f.name} {f.stat().st_size} bytes" for f in sorted(R.OUTSIDE.iterdir()))


async def _batch_race(p, tool: str, args: dict, want: str, copies: int):
    """`tool` (sweep/compare_versions of the planted `sweeper`) and, queued behind it on the device lock,
    a planted package's job that swaps the batch's run directory once the server writes there."""
    (R.WS / "evil" / "TARGET").write_text(str(R.OUTSIDE))
    (R.WS / "evil" / "WANT").write_text(want)
    (R.WS / "sweeper" / "COPIES").write_text(str(copies))
    print("outside before:", outside())
    res = {}

    async def batch():
        t0 = time.monotonic()
        r = await p.call(tool, {**args, "wait_s": 50}, timeout=400)
        err, t = await p.settle(*r, 300)
        res["batch"] = (err, t[:600], round(time.monotonic() - t0, 1))

    async def racer():
        await anyio.sleep(3)  # the batch holds the device lock by then
        t0 = time.monotonic()
        err, t = await p.kernel("race_batch", wait_s=300, timeout_s=200)
        res["racer"] = (err, t[:300], round(time.monotonic() - t0, 1))

    async with anyio.create_task_group() as tg:
        tg.start_soon(batch)
        tg.start_soon(racer)
    print(tool, "answered: error", res["batch"][0], "after", res["batch"][2], "s:", res["batch"][1])
    print("racer answered: error", res["racer"][0], "after", res["racer"][2], "s:", res["racer"][1][:200])
    print("racer log:\n" + p.out("race_batch"))
    print("outside after:", outside())
    for f in sorted(R.OUTSIDE.iterdir()):
        if f.name != "victim.txt":
            print("  ", f.name, "first bytes:", f.read_bytes()[:120])


@variant
async def k_race_sweep(p):
    """P6-1: sweep's outputs are written after the device lock is released; a queued job swaps its run dir."""
    await _batch_race(p, "sweep", {"kernel": "./sweeper", "param": "n", "values": [1024, 2048]}, "sweep.csv", 1500)


@variant
async def k_race_compare6(p):
    """P6-1b: the same with compare_versions (compare.json read, compare.md written after the lock)."""
    await _batch_race(p, "compare_versions", {"kernel": "./sweeper", "versions": ["v0", "v0"]}, "compare.json", 1500)


@variant
async def k_race_sweep_2servers(p):
    """P6-2: as P6-1, but the racing job comes from a SECOND server on the same workspace (another client
    session: the device lock is machine-wide, the job queue is per server). The sweep's server reads and
    writes its run directory after the lock is released; the other server's job runs meanwhile."""
    from mcp import Client

    (R.WS / "evil" / "TARGET").write_text(str(R.OUTSIDE))
    (R.WS / "evil" / "WANT").write_text("sweep.csv")
    (R.WS / "sweeper" / "COPIES").write_text("800")
    print("outside before:", outside())
    res = {}
    async with Client(R.params(os.environ.get("KPROBE6_USER") or None)) as c2:
        p2 = R.Probe(c2)
        print("second server up:", R.server_pid())
        await anyio.sleep(8)  # its warm workers ready

        async def batch():
            t0 = time.monotonic()
            r = await p.call("sweep", {"kernel": "./sweeper", "param": "n", "values": [1024, 2048], "wait_s": 50}, timeout=400)
            err, t = await p.settle(*r, 300)
            res["batch"] = (err, t[:300], round(time.monotonic() - t0, 1), time.strftime("%H:%M:%S"))

        async def racer():
            await anyio.sleep(2)
            t0 = time.monotonic()
            err, t = await p2.kernel("race_batch", wait_s=300, timeout_s=200)
            res["racer"] = (err, t[:300], round(time.monotonic() - t0, 1), time.strftime("%H:%M:%S"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(batch)
            tg.start_soon(racer)
    print("sweep (server 1) answered at", res["batch"][3], "error", res["batch"][0], "after", res["batch"][2], "s:", res["batch"][1][:200])
    print("racer (server 2) answered at", res["racer"][3], "error", res["racer"][0], "after", res["racer"][2], "s:", res["racer"][1][:200])
    print("racer log:\n" + p.out("race_batch"))
    print("outside after:", outside())
    for f in sorted(R.OUTSIDE.iterdir()):
        if f.name != "victim.txt":
            print("  ", f.name, "first bytes:", f.read_bytes()[:120])


@variant
async def k_forge_ready(p):
    """P6-3: a forged @@KPROF-READY line that is no JSON object, then device_info while the job runs."""
    res = {}

    async def job():
        t0 = time.monotonic()
        err, t = await p.kernel("forge_ready", wait_s=120, timeout_s=45)
        res["job"] = (err, t[:400], round(time.monotonic() - t0, 1))

    async def info():
        await anyio.sleep(8)
        for i in range(3):
            try:
                err, t, sc = await p.call("device_info", {}, timeout=60)
                ww = (sc or {}).get("info", {}).get("warm_workers") if isinstance(sc, dict) else None
                print(f"device_info {i} during the job: error {err}:", t[:300].replace("\n", " "), "| warm_workers:", str(ww)[:300])
            except Exception as e:  # noqa: BLE001
                print(f"device_info {i} raised", type(e).__name__, e)
            await anyio.sleep(4)

    async with anyio.create_task_group() as tg:
        tg.start_soon(job)
        tg.start_soon(info)
    print("job answered: error", res["job"][0], "after", res["job"][2], "s:", res["job"][1])
    print(p.out("forge_ready"))
    err, t, sc = await p.call("device_info", {}, timeout=60)
    print("device_info after the job: error", err, str((sc or {}).get("info", {}).get("warm_workers"))[:300])
    err, t = await p.kernel("", wait_s=60) if False else (None, "")
    r = await p.call("profile_kernel", {"kernel": "vector_add", "mode": "event", "wait_s": 50})
    print("a later vector_add: error", r[0], r[1][:120])


async def _two_servers(p, tool: str, args: dict, want: str, copies: int, plant: dict | None = None):
    from mcp import Client

    (R.WS / "evil" / "TARGET").write_text(str(R.OUTSIDE))
    (R.WS / "evil" / "WANT").write_text(want)
    (R.WS / "sweeper" / "COPIES").write_text(str(copies))
    for name, text in (plant or {}).items():  # another workspace's file where the link will point
        (R.OUTSIDE / name).write_text(text)
    print("outside before:", outside())
    res = {}
    async with Client(R.params(os.environ.get("KPROBE6_USER") or None)) as c2:
        p2 = R.Probe(c2)
        await anyio.sleep(8)

        async def batch():
            t0 = time.monotonic()
            r = await p.call(tool, {**args, "wait_s": 50}, timeout=400)
            err, t = await p.settle(*r, 300)
            res["batch"] = (err, t[:700], round(time.monotonic() - t0, 1), time.strftime("%H:%M:%S"))

        async def racer():
            await anyio.sleep(2)
            t0 = time.monotonic()
            err, t = await p2.kernel("race_batch", wait_s=300, timeout_s=200)
            res["racer"] = (err, t[:300], round(time.monotonic() - t0, 1), time.strftime("%H:%M:%S"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(batch)
            tg.start_soon(racer)
    print(tool, "(server 1) answered at", res["batch"][3], "error", res["batch"][0], "after", res["batch"][2], "s:", res["batch"][1])
    print("racer (server 2) answered at", res["racer"][3], "error", res["racer"][0], "after", res["racer"][2], "s:", res["racer"][1][:100])
    print("racer log:\n" + p.out("race_batch"))
    print("outside after:", outside())
    for f in sorted(R.OUTSIDE.iterdir()):
        if f.name != "victim.txt":
            print("  ", f.name, "first bytes:", f.read_bytes()[:160])


@variant
async def k_race_sweep_2servers_plain(p):
    """P6-2 with no inflation (the sweep's own post-processing window): a built-in kernel's sweep."""
    await _two_servers(p, "sweep", {"kernel": "vector_add", "param": "n", "values": [1024, 2048]}, "sweep.csv", 1)


@variant
async def k_race_compare_2servers(p):
    """P6-2b on compare_versions of a built-in kernel: swapped once the child's compare.json is there (the
    racer runs when the lock is free, before the server reads it): the server READS the outside
    compare.json (another workspace's, planted there by its owner) and writes compare.md beside it."""
    import json as _j

    other = {"kernel": "OTHER-WORKSPACE-424242"}
    await _two_servers(p, "compare_versions", {"kernel": "vector_add", "versions": ["v0", "v1"], "params": {"n": 4096}},
                       "compare.json", 1, None)


@variant
async def k_hopper(p):
    """P6-4: a fork chain that hops to a new pid every ~1 ms from its job's end outlives kill_tree and killpg."""
    err, t = await p.kernel("hopper", wait_s=120, timeout_s=60)
    print("job error:", err, t[:150].replace("\n", " "))
    print(p.out("hopper"))
    time.sleep(6)
    hl = R.WS / "out" / "profiles" / "kprobe6" / "hopper.log"
    print("hopper log so far:\n" + (hl.read_text()[-1500:] if hl.exists() else "(none)"))
    print("processes running the hopper now:", procs("import ctypes, os, select") or "(none)")
    r = await p.call("profile_kernel", {"kernel": "vector_add", "mode": "event", "wait_s": 50})
    print("a later job (vector_add): error", r[0])
    time.sleep(3)
    print("after it:", procs("import ctypes, os, select") or "(none)")
    print("hopper log tail:\n" + (hl.read_text()[-600:] if hl.exists() else "(none)"))


@variant
async def k_forge_ready_listing(p):
    """P6-3b: the forged READY line from a kernels/ package's import: list_kernels alone."""
    import shutil

    (R.WS / "kernels").mkdir(exist_ok=True)
    shutil.copy(R.HERE / "imp_ready.py", R.WS / "kernels" / "impready.py")
    res = {}

    async def listing():
        t0 = time.monotonic()
        try:
            err, t, sc = await p.call("list_kernels", {}, timeout=200)
            res["list"] = (err, t[:300].replace("\n", " "), round(time.monotonic() - t0, 1))
        except Exception as e:  # noqa: BLE001
            res["list"] = ("raised", f"{type(e).__name__} {e}", round(time.monotonic() - t0, 1))

    async def info():
        await anyio.sleep(6)
        for i in range(2):
            err, t, sc = await p.call("device_info", {}, timeout=60)
            print(f"device_info {i} while list_kernels runs: error {err}:", t[:250].replace("\n", " "))
            await anyio.sleep(4)

    async with anyio.create_task_group() as tg:
        tg.start_soon(listing)
        tg.start_soon(info)
    print("list_kernels answered: error", res["list"][0], "after", res["list"][2], "s:", res["list"][1])
    err, t, sc = await p.call("device_info", {}, timeout=60)
    print("device_info after: error", err)


@variant
async def k_forge_done_list(p):
    """P6-5: '@@KPROF-DONE [1]' (no JSON object): the job fails past the worker's retirement; its thread runs on into later jobs."""
    err, t = await p.kernel("forge_done_list", wait_s=60, timeout_s=40)
    print("job error:", err, t[:400].replace("\n", " "))
    print(p.out("forge_done_list"))
    print(R.ps_tree())
    for i in range(2):
        r = await p.call("profile_kernel", {"kernel": "vector_add", "mode": "event", "wait_s": 50, "params": {"n": 3000 + i}})
        err, t = await p.settle(*r, 60)
        print(f"later job {i} (vector_add) error {err}:", t[:160].replace("\n", " "))
    b = R.WS / "out" / "profiles" / "kprobe6" / "forge_done_list.beat"
    lines = b.read_text().splitlines() if b.exists() else []
    print("beat lines:", len(lines))
    for ln in lines:
        if "vector_add" in ln or ln is lines[-1]:
            print("  ", ln[:300])
    print(R.ps_tree())


@variant
async def k_forge_done_listing(p):
    """P6-5b: the malformed end line from a kernels/ package's import: list_kernels (the describing worker)."""
    import shutil

    (R.WS / "kernels").mkdir(exist_ok=True)
    shutil.copy(R.HERE / "imp_done.py", R.WS / "kernels" / "impdone.py")
    for i in range(2):
        try:
            err, t, sc = await p.call("list_kernels", {}, timeout=200)
            print(f"list_kernels {i}: error {err}:", t[:300].replace("\n", " "))
        except Exception as e:  # noqa: BLE001
            print(f"list_kernels {i} raised", type(e).__name__, e)
    print(R.ps_tree())


@variant
async def k_forged_description(p):
    """P6-6: the describing child's ok line carries a description that is no object: list_kernels, profile_kernel."""
    import shutil

    (R.WS / "kernels").mkdir(exist_ok=True)
    shutil.copy(R.HERE / "imp_desc.py", R.WS / "kernels" / "impdesc.py")
    for i in range(2):
        err, t, sc = await p.call("list_kernels", {}, timeout=200)
        print(f"list_kernels {i}: error {err}:", t[:300].replace("\n", " "))
    r = await p.call("profile_kernel", {"kernel": "impdesc", "mode": "event", "wait_s": 50}, timeout=200)
    print("profile_kernel impdesc: error", r[0], r[1][:300].replace("\n", " "))
    r = await p.call("profile_kernel", {"kernel": "vector_add", "mode": "event", "wait_s": 50}, timeout=200)
    print("profile_kernel vector_add: error", r[0], r[1][:100].replace("\n", " "))


@variant
async def k_forge_record(p):
    """P6-7: the job's record forged as an error record whose detail is no object."""
    err, t = await p.kernel("forge_record", wait_s=60, timeout_s=40)
    print("job error:", err, t[:400].replace("\n", " "))
    print(p.out("forge_record"))
    r = await p.call("profile_kernel", {"kernel": "vector_add", "mode": "event", "wait_s": 50})
    print("a later vector_add: error", r[0], r[1][:80].replace("\n", " "))


@variant
async def k_race_compare_2servers_inflated(p):
    """P6-2b: compare_versions of the planted `sweeper` (v0, v1; its compare.json inflated) on server 1, the
    racer on server 2 swapping once compare.json is there: the server reads it and writes compare.md there."""
    await _two_servers(p, "compare_versions", {"kernel": "./sweeper", "versions": ["v0", "v1"]}, "compare.json", 400)

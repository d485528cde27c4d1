"""(probe4's fuzz4.py, names changed) The load and fuzz figures again, with more calls than the tests make: ``stdio N`` drives one SDK
client over stdio against the documented launcher (.venv/bin/kprof-mcp --allow-commands), ``http N``
thirty SDK clients at once over streamable HTTP with a bearer token plus the raw-socket misbehaviours
of tests/e2e/test_fuzz_http.py (4 rounds each). The calls, the judging (Tally: a result or a bounded
reason naming no outside path) and the outside directory's check are the tests' own (tests/e2e/
fuzzing.py); only the counts and the launcher differ. Run in a memory cgroup by the caller.

    .venv/bin/python docs/evidence/sandbox/probe5/fuzz5.py stdio 2200
    .venv/bin/python docs/evidence/sandbox/probe5/fuzz5.py http 2150
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]
sys.path[:0] = [str(REPO / "tests" / "e2e"), str(REPO / "tests")]
os.environ.setdefault("KPROF_LOCK_DIR", tempfile.mkdtemp(prefix="kprobe5-locks-", dir="/tmp"))

import anyio  # noqa: E402
from fuzzing import Tally, draw_calls, job_to_cancel, prepare_workspace, untouched  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

VENV = REPO / ".venv" / "bin"


def env(extra=None):
    return {"PATH": f"{VENV}:/usr/bin:/bin", "KPROF_FORCE_CPU": "1", "HOME": os.environ.get("HOME", "/root"),
            "KPROF_LOCK_DIR": os.environ["KPROF_LOCK_DIR"], **(extra or {})}


async def stdio(n: int) -> None:
    ws = Path(tempfile.mkdtemp(prefix="kprobe5-fuzz-")) / "ws"
    ws.mkdir()
    outside = prepare_workspace(ws)
    calls = draw_calls(n)
    tally = Tally(ws)
    server = StdioServerParameters(command=str(VENV / "kprof-mcp"),
                                   args=["--workspace", str(ws), "--timeout", "60", "--allow-commands"], env=env())
    t0 = time.monotonic()
    async with Client(server) as c:
        tally.publish((await c.call_tool("list_kernels", {})).structured_content)

        async def one(name, args):
            try:
                with anyio.fail_after(120):
                    r = await c.call_tool(name, args)
            except MCPError as e:
                tally.protocol_error(name, args, e)
                return
            except Exception as e:  # noqa: BLE001 — a dead server or a hang
                tally.transport_error(name, args, e)
                return
            tally.answer(name, args, r)
            job = job_to_cancel(r)
            if job:
                await one("cancel_profile", {"job_id": job})

        for name, args in calls:
            await one(name, args)
        r = await c.call_tool("classify_bottleneck", {"tc_pct": 70, "dram_pct": 10})
        final = r.structured_content["bottleneck"]
    print(f"stdio fuzz figures: {tally.stats}; {time.monotonic() - t0:.1f} s; final call: {final}; "
          f"outside untouched: {untouched(outside)}; failures: {len(tally.failures)}")
    for f in tally.failures[:10]:
        print("  FAILURE", f[:400])


def http(n: int) -> None:
    import test_fuzz_http as h
    from conftest import free_port

    ws = Path(tempfile.mkdtemp(prefix="kprobe5-fuzzhttp-")) / "ws"
    ws.mkdir()
    outside = prepare_workspace(ws)
    port = free_port()
    proc = subprocess.Popen(
        [str(VENV / "kprof-mcp"), "--transport", "streamable-http", "--port", str(port), "--workspace", str(ws),
         "--timeout", "60", "--allow-commands"],
        env=env({"KPROF_MCP_TOKEN": h.TOKEN}), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import socket

    for _ in range(150):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.2)
    calls = draw_calls(n)
    tally = Tally(ws)
    figures = {"dropped": 0}
    t0 = time.monotonic()

    async def main():
        http_, client = h._client(port)
        async with http_, client as c:
            tally.publish((await c.call_tool("list_kernels", {})).structured_content)
        async with anyio.create_task_group() as tg:
            for i in range(h.N_CLIENTS):
                tg.start_soon(h._calls, port, tally, calls[i::h.N_CLIENTS])
            for kind in h.RAW_KINDS:
                for round_ in range(h.N_RAW_ROUNDS):
                    tg.start_soon(h._misbehave, port, kind, round_, figures)
        http_, client = h._client(port)
        async with http_, client as c:
            r = await c.call_tool("classify_bottleneck", {"tc_pct": 70, "dram_pct": 10})
            return r.structured_content["bottleneck"]

    try:
        final = anyio.run(main)
        raw = len(h.RAW_KINDS) * h.N_RAW_ROUNDS
        print(f"http fuzz figures: {({**tally.stats, **figures})} + {raw} raw-socket requests, {h.N_CLIENTS} "
              f"clients at once; {time.monotonic() - t0:.1f} s; final call: {final}; server alive: "
              f"{proc.poll() is None}; outside untouched: {untouched(outside)}; failures: {len(tally.failures)}")
        for f in tally.failures[:10]:
            print("  FAILURE", f[:400])
    finally:
        proc.terminate()
        proc.wait(30)


if __name__ == "__main__":
    kind, n = sys.argv[1], int(sys.argv[2])
    if kind == "stdio":
        anyio.run(stdio, n)
    else:
        http(n)

"""Jobs through the real MCP client over stdio: the GPU queue (one slot on this machine), places
in the queue, get_profile / cancel_profile, client cancellation (notifications/cancelled) killing
the whole process tree, and progress notifications only while a request is open."""

import time
from pathlib import Path

import anyio
from conftest import PY, process_gone, server_env, write_scale
from mcp import Client, StdioServerParameters


def _server(workspace, extra_env=None):
    return StdioServerParameters(
        command=PY,
        args=["-m", "kprof_mcp.server", "--workspace", str(workspace)],
        env={**server_env(), "KPROF_FORCE_CPU": "1", **(extra_env or {})},
    )


def _broken(workspace: Path, mode: str) -> str:
    return str(write_scale(workspace / "mykernels" / f"scale_{mode}.py", mode).relative_to(workspace))


def test_queue_places_get_profile_and_cancel(workspace):
    slow = _broken(workspace, "slow")  # ~0.25 s per launch: a few seconds per profile on the CPU

    async def main():
        async with Client(_server(workspace)) as c:
            subs = []
            for _ in range(3):
                r = await c.call_tool(
                    "profile_kernel", {"kernel": slow, "params": {"n": 64}, "mode": "event", "wait_s": 0}
                )
                assert not r.is_error, r.content[0].text
                subs.append(r.structured_content)
            assert [s["status"] for s in subs][1:] == ["queued", "queued"]
            assert subs[0]["status"] in ("queued", "running")
            assert subs[2]["queue_position"] == subs[1]["queue_position"] + 1
            assert "get_profile(job_id=" in r.content[0].text and subs[2]["job_id"] in r.content[0].text
            # the third leaves the queue when cancelled
            cancelled = await c.call_tool("cancel_profile", {"job_id": subs[2]["job_id"]})
            assert cancelled.structured_content["status"] == "cancelled"
            # the first two finish, in order, with their contracts
            first = await c.call_tool("get_profile", {"job_id": subs[0]["job_id"], "wait_s": 50})
            assert (
                first.structured_content["status"] == "done"
                and "## Profile: scale v0" in first.content[0].text
            )
            second = await c.call_tool("get_profile", {"job_id": subs[1]["job_id"], "wait_s": 50})
            assert second.structured_content["status"] == "done"
            assert second.structured_content["profile_dir"] != first.structured_content["profile_dir"]
            gone = await c.call_tool("get_profile", {"job_id": subs[2]["job_id"]})
            assert gone.is_error and "was cancelled" in gone.content[0].text
            unknown = await c.call_tool("get_profile", {"job_id": "nope"})
            assert unknown.is_error and "unknown job_id 'nope'" in unknown.content[0].text

    anyio.run(main)


def test_client_cancellation_kills_the_process_tree_and_the_server_keeps_answering(workspace, tmp_path):
    pidfile = workspace / "out" / "profiles" / "pids"  # a kernel child writes only there (issue 38)
    orphan = _broken(workspace, "orphan")

    async def main():
        async with Client(_server(workspace, {"KPROF_TEST_PIDFILE": str(pidfile)})) as c:

            async def call():
                await c.call_tool(
                    "profile_kernel", {"kernel": orphan, "params": {"n": 64}, "mode": "event", "wait_s": 50}
                )

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                with anyio.fail_after(60):
                    while not pidfile.exists():
                        await anyio.sleep(0.1)
                tg.cancel_scope.cancel()  # the client sends notifications/cancelled
            worker, grandchild = map(int, pidfile.read_text().split())
            with anyio.fail_after(20):
                while not (process_gone(worker) and process_gone(grandchild)):
                    await anyio.sleep(0.2)
            r = await c.call_tool("classify_bottleneck", {"tc_pct": 70, "dram_pct": 10})
            assert r.structured_content["bottleneck"] == "Compute-bound"

    anyio.run(main)


def test_progress_arrives_only_while_the_request_is_open(workspace):
    events = []

    async def main():
        async with Client(_server(workspace)) as c:

            async def progress(p, total, message):
                events.append(("progress", time.monotonic(), p, message))

            r = await c.call_tool(
                "profile_kernel",
                {
                    "kernel": "vector_add",
                    "version": "v0",
                    "params": {"n": 256},
                    "mode": "event",
                    "wait_s": 50,
                },
                progress_callback=progress,
            )
            events.append(("result", time.monotonic(), None, r.structured_content["status"]))
            await anyio.sleep(1.0)  # anything sent after the result would arrive here

    anyio.run(main)
    kinds = [e[0] for e in events]
    assert kinds.count("progress") >= 2 and kinds[-1] == "result", kinds
    assert events[-1][3] == "done"
    fractions = [e[2] for e in events if e[0] == "progress"]
    assert fractions == sorted(fractions)

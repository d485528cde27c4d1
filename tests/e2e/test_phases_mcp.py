"""Issue 40: where a profile's wall time goes, through the MCP SDK's client over stdio on the CPU — every
profile's result.json has ``timings``: its phases (the server's and the profiling process's), their sum
and what no phase covers equal to the wall time from the request's submission, that wall time within
what the client waited, and report.md's table; a re-profile in the warm worker has them too."""

import json
import sys
import time
from pathlib import Path

import anyio
from conftest import server_env
from mcp import Client, StdioServerParameters

SERVER_SIDE = ("request_checks", "queue_wait", "device_lock_wait", "clock_lock", "checks_and_setup", "runner")
SERVER_SIDE += ("worker_start_handoff_and_write", "mode_after_run", "clock_unlock")
SERVER_SIDE += ("result_load_and_noise_floor", "analysis", "rendering")
IN_CHILD = ("device_init_inputs_build", "first_run_jit_autotune", "correctness", "warmup", "timing_window")
IN_CHILD += ("integrity_checks",)


def test_every_profile_says_where_its_time_went(workspace, tmp_path):
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kprof_mcp.server", "--workspace", str(workspace)],
        env={**server_env(), "XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
    args = {
        "kernel": "vector_add",
        "version": "v0",
        "params": {"n": 4096, "dtype": "float32"},
        "mode": "event",
    }

    async def main():
        got = []
        async with Client(server) as c:
            for _ in range(2):  # the first profile, then a re-profile in the warm worker
                t = time.perf_counter()
                r = await c.call_tool("profile_kernel", args)
                waited = time.perf_counter() - t
                assert not r.is_error, r.content[0].text
                got.append((waited, Path(r.structured_content["profile_dir"])))
        return got

    for waited, d in anyio.run(main):
        t = json.loads((d / "result.json").read_text())["timings"]
        phases = t["phases"]
        assert set(SERVER_SIDE) <= set(phases) and set(IN_CHILD) <= set(phases), sorted(phases)
        assert set(IN_CHILD) <= set(t["in_child"]) and not set(SERVER_SIDE) & set(t["in_child"])
        assert all(v >= 0 for v in phases.values())
        # the phases and what no phase covers make the wall time; nearly all of it is covered
        assert abs(sum(phases.values()) + t["unaccounted_s"] - t["wall_s"]) < 0.02
        assert abs(t["unaccounted_s"]) < 0.05 * t["wall_s"] + 0.02
        # the wall time is the request's, as the client waited for it (less the answer's transport)
        assert t["wall_s"] <= waited + 0.01 and waited - t["wall_s"] < 2.0, (waited, t["wall_s"])
        assert phases["timing_window"] > 0 and t["stopping"]["rule"] and t["stopping"]["min_runs"] >= 1
        report = (d / "report.md").read_text()
        assert "### Where the time went" in report and "| timing_window | timed runs" in report
        assert "Stopping rule of the timing:" in report

"""The quick subset (issue 40): ``pytest -m quick`` runs every tool once through the MCP SDK's own client
over stdio, at sizes the CPU profiles in seconds — the check to run after an edit, before the full suite."""

import sys

import anyio
import pytest
from conftest import server_env
from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.quick

TOOLS = {
    "list_kernels",
    "profile_kernel",
    "read_params",
    "classify_bottleneck",
    "update_devlog",
    "device_info",
    "get_profile",
    "cancel_profile",
    "compare_versions",
    "sweep",
    "measure_noise",
    "profile_command",
}


def test_every_tool_once_over_stdio(workspace, tmp_path):
    (workspace / "step.py").write_text(
        "import kprof\nfor _ in range(3):\n    with kprof.range('step'):\n        sum(i * i for i in range(20000))\n"
    )
    env = {**server_env(), "XDG_CACHE_HOME": str(tmp_path / "cache")}  # measure_noise stores its floor there
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kprof_mcp.server", "--workspace", str(workspace), "--allow-commands"],
        env=env,
    )
    small = {"n": 4096, "dtype": "float32"}

    async def main():
        async with Client(server) as c:
            assert {t.name for t in (await c.list_tools()).tools} == TOOLS
            calls = {
                "list_kernels": {},
                "device_info": {},
                "classify_bottleneck": {"tc_pct": 80, "dram_pct": 10},
                "profile_kernel": {"kernel": "vector_add", "version": "v0", "params": small, "mode": "event"},
            }
            got = {}
            for tool, args in calls.items():
                r = await c.call_tool(tool, args)
                assert not r.is_error, (tool, r.content[0].text)
                got[tool] = r.structured_content
            pdir = got["profile_kernel"]["profile_dir"]
            followups = {
                "read_params": {"profile_dir": pdir},
                "update_devlog": {"kernel": "vector_add", "profile_dir": pdir, "issues": ["none"]},
                "compare_versions": {
                    "kernel": "vector_add",
                    "versions": ["v0", "v1"],
                    "params": small,
                    "budget_ms": 300,
                    "rounds": 3,
                },
                "sweep": {
                    "kernel": "vector_add",
                    "param": "n",
                    "values": [1024, 4096],
                    "versions": ["v0"],
                    "params": {"dtype": "float32"},
                    "budget_ms": 20,
                },
                "measure_noise": {
                    "cases": [{"kernel": "vector_add", "version": "v0", "params": small}],
                    "rounds": 2,
                    "clock_control": "none",
                },
                "profile_command": {"command": ["python", "step.py"], "mode": "event"},
            }
            for tool, args in followups.items():
                r = await c.call_tool(tool, args)
                assert not r.is_error, (tool, r.content[0].text[:2000])
                got[tool] = r.structured_content
            assert got["read_params"]["params"]["n"] == 4096
            assert [s["name"] for s in got["profile_command"]["stages"]] == ["step"]
            # A job asked to answer at once: get_profile follows it, cancel_profile ends one.
            q = await c.call_tool(
                "profile_kernel",
                {"kernel": "vector_add", "version": "v1", "params": small, "mode": "event", "wait_s": 0},
            )
            assert not q.is_error and q.structured_content["job_id"], q.content[0].text
            g = await c.call_tool("get_profile", {"job_id": q.structured_content["job_id"], "wait_s": 50})
            assert not g.is_error and g.structured_content["profile_dir"], g.content[0].text
            x = await c.call_tool(
                "profile_kernel",
                {"kernel": "vector_add", "version": "v1", "params": small, "mode": "event", "wait_s": 0},
            )
            k = await c.call_tool("cancel_profile", {"job_id": x.structured_content["job_id"]})
            assert not k.is_error, k.content[0].text

    anyio.run(main)

"""Issue 41: without a GPU, the MCP tool profile_kernel profiles a package at its CPU-sized defaults
(each parameter's ``cpu_default``) for the parameters the caller did not give, and says so in one line
of its answer — the CLI's announcement; what the caller gives always wins. Through the MCP SDK's own
client over stdio, against the real server."""

import sys

import anyio
from conftest import server_env
from mcp import Client, StdioServerParameters


def test_profile_kernel_uses_the_cpu_sized_defaults_and_says_so(workspace):
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kprof_mcp.server", "--workspace", str(workspace)],
        env={**server_env(), "KPROF_FORCE_CPU": "1"},
    )

    async def main():
        async with Client(server) as c:
            out = {}
            for key, args in {
                "none": {"kernel": "vector_add", "version": "v0", "mode": "event"},
                "some": {"kernel": "softmax", "version": "v1", "mode": "event", "params": {"M": 8}},
                "all": {"kernel": "vector_add", "version": "v0", "mode": "event", "params": {"n": 4096}},
            }.items():
                r = await c.call_tool("profile_kernel", {**args, "wait_s": 55})
                assert not r.is_error, (key, r.content[0].text)
                out[key] = (r.content[0].text, r.structured_content)
            return out

    out = anyio.run(main)

    text, data = out["none"]
    line = "no GPU: CPU-sized defaults n=65536; pass params n to change"
    assert data["status"] == "done" and data["params"]["n"] == 65536, data["params"]
    assert text.startswith("## Profile:") and text.rstrip().endswith(line), text[-500:]
    assert text.count("CPU-sized defaults") == 1 and data["message"] == line, data["message"]

    text, data = out["some"]  # the caller's M wins; N and dtype sized for the CPU
    assert (data["params"]["M"], data["params"]["N"], data["params"]["dtype"]) == (8, 512, "float32")
    assert data["message"] == "no GPU: CPU-sized defaults N=512, dtype=float32; pass params N/dtype to change"
    assert text.rstrip().endswith(data["message"]), text[-500:]

    text, data = out["all"]  # nothing left to size: no line
    assert data["params"]["n"] == 4096 and "CPU-sized" not in text and not data.get("message"), data

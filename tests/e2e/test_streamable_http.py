"""The server over streamable HTTP (127.0.0.1), driven by the SDK's client."""

import socket
import subprocess
import sys
import time

import anyio
from mcp import Client

from conftest import server_env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_streamable_http_lists_and_calls(workspace):
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "kprof_mcp.server", "--transport", "streamable-http",
                             "--port", str(port), "--workspace", str(workspace)],
                            env={**server_env(), "PATH": "/usr/bin:/bin"}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.2)

        async def main():
            async with Client(f"http://127.0.0.1:{port}/mcp") as c:
                names = {t.name for t in (await c.list_tools()).tools}
                assert "profile_kernel" in names
                r = await c.call_tool("classify_bottleneck", {"tc_pct": 70, "dram_pct": 10})
                assert r.structured_content["bottleneck"] == "Compute-bound"
                bad = await c.call_tool("read_params", {"profile_dir": "/etc"})
                assert bad.is_error and "outside the workspace" in bad.content[0].text

        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(10)

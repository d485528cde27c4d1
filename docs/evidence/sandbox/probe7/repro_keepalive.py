"""P7-2 reproduction (robustness, not the boundary): the HTTP server runs uvicorn with its default
keep-alive of 5 s, the SDK client's httpx pool keeps idle connections 5 s too; a client that calls a tool
about 5 s after its last answer can have its request sent on a connection the server is closing
(httpx ReadError), which the SDK raises out of its task group: the client dies. Prints SUCCEEDED (a
ReadError seen) or BLOCKED. Usage: .venv/bin/python docs/evidence/sandbox/probe7/repro_keepalive.py [TRIES]"""

import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

REPO = Path(__file__).resolve().parents[4]
TOKEN = "kprobe7-keepalive-token-0123456789"


def main(tries: int) -> None:
    ws = Path(tempfile.mkdtemp(prefix="kprobe7-ka-")) / "ws"
    ws.mkdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "KPROF_MCP_TOKEN": TOKEN, "KPROF_FORCE_CPU": "1"}
    proc = subprocess.Popen(
        [
            str(REPO / ".venv/bin/kprof-mcp"),
            "--transport",
            "streamable-http",
            "--port",
            str(port),
            "--workspace",
            str(ws),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(150):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.2)
    errors, calls = [], 0

    async def session(n: int) -> None:
        nonlocal calls
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        async with (
            http,
            Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c,
        ):
            for _ in range(n):
                await c.call_tool("device_info", {})
                calls += 1
                await anyio.sleep(random.uniform(4.95, 5.05))

    try:
        left = tries
        while left > 0:
            try:
                anyio.run(session, min(left, 10))
            except BaseException as e:  # noqa: BLE001 — the SDK raises a group out of its task group
                text = repr(e)
                while hasattr(e, "exceptions"):
                    e = e.exceptions[0]
                errors.append(f"{type(e).__module__}.{type(e).__name__}")
                if "ReadError" not in text and "RemoteProtocolError" not in text:
                    print("other error:", text[:300])
            left -= 10
    finally:
        proc.terminate()
        proc.wait(20)
        subprocess.run(["rm", "-rf", str(ws.parent)])
    print(f"calls answered {calls}, client sessions killed by a transport error: {len(errors)} {errors[:5]}")
    print(
        "RESULT P7-2:",
        "SUCCEEDED (a client died of a dropped keep-alive connection)" if errors else "BLOCKED",
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)

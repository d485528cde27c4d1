"""The server over streamable HTTP (127.0.0.1), driven by the SDK's client."""

import socket
import subprocess
import sys
import time

import anyio
from conftest import free_port, server_env
from mcp import Client


def test_streamable_http_lists_and_calls(workspace):
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kprof_mcp.server",
            "--transport",
            "streamable-http",
            "--port",
            str(port),
            "--workspace",
            str(workspace),
        ],
        env={**server_env(), "PATH": "/usr/bin:/bin"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
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


def _start(workspace, args, env_extra=None):
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kprof_mcp.server",
            "--transport",
            "streamable-http",
            "--port",
            str(port),
            "--workspace",
            str(workspace),
            *args,
        ],
        env={**server_env(), "PATH": "/usr/bin:/bin", **(env_extra or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 30
    while time.time() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.2)
    return proc, port


def _post(port, headers):
    import json
    import urllib.error
    import urllib.request

    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        }
    ).encode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_dns_rebinding_protection_on_loopback(workspace):
    proc, port = _start(workspace, [])
    try:
        assert _post(port, {}) == 200
        assert _post(port, {"Host": "evil.example:80"}) in (400, 421)  # rebinding: foreign Host
        assert _post(port, {"Origin": "http://evil.example"}) == 403  # a web page elsewhere
        assert _post(port, {"Origin": f"http://localhost:{port}"}) == 200
    finally:
        proc.terminate()
        proc.wait(10)


def test_any_other_bind_address_needs_a_bearer_token(workspace, tmp_path):
    proc, _ = _start(workspace, ["--host", "0.0.0.0"])
    out, err = proc.communicate(timeout=30)
    assert proc.returncode != 0 and "requires a bearer token" in err
    proc, _ = _start(
        workspace, ["--host", "0.0.0.0"], {"KPROF_MCP_TOKEN": ""}
    )  # empty: an error, never "no auth"
    out, err = proc.communicate(timeout=30)
    assert proc.returncode != 0 and "KPROF_MCP_TOKEN is empty" in err
    token = "s3cret-" + "x" * 24
    proc, port = _start(
        workspace, ["--host", "0.0.0.0", "--allowed-host", "127.0.0.1:*"], {"KPROF_MCP_TOKEN": token}
    )
    try:
        assert _post(port, {}) == 401
        assert _post(port, {"Authorization": "Bearer wrong"}) == 401
        assert _post(port, {"Authorization": f"Bearer {token}"}) == 200
        assert _post(port, {"Authorization": f"Bearer {token}", "Host": "evil.example:80"}) in (400, 421)
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_server_prints_the_url_it_serves_on_stderr(workspace):
    """Issue 29: one line on stderr, before serving, with the URL a client connects to."""
    proc, port = _start(workspace, [])
    try:
        assert proc.poll() is None
        line = proc.stderr.readline()
        assert line == f"kprof-mcp: serving MCP over streamable HTTP at http://127.0.0.1:{port}/mcp\n"
    finally:
        proc.terminate()
        proc.wait(10)

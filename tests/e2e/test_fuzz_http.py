"""Fuzzing the server over streamable HTTP on 127.0.0.1, many clients at once.

The server runs with a bearer token (KPROF_MCP_TOKEN) and ``--allow-commands``, on the CPU.
Thirty SDK clients, each with its own connection and session, make a share of the calls drawn
from the same strategies as the stdio fuzz (:mod:`fuzzing`, derandomized: the same calls every
run) concurrently; valid calls queue jobs, cancelled at once. Beside them, raw-socket clients
misbehave: a request whose body stops short, headers that never end, bytes that are not HTTP, a
tool call whose connection is dropped while the server waits for its job, a request without the
token, and a 5,000-digit JSON number (past what the SDK's JSON parser takes). Every SDK call must
be answered with a result or a reason (bounded, naming no path outside the workspace), and at the
end the server still answers a normal call. The figures are printed.
"""

import json
import socket
import subprocess
import sys
import time

import anyio
import pytest
from conftest import free_port, server_env
from fuzzing import Tally, draw_calls, job_to_cancel, prepare_workspace, untouched
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

TOKEN = "kprof-fuzz-token-" + "f" * 24
N_CLIENTS = 30
N_CALLS = 1000
N_RAW_ROUNDS = 4  # each raw misbehaviour, this many times
CALL_TIMEOUT_S = 60


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    ws = tmp_path_factory.mktemp("fuzzhttpws")
    outside = prepare_workspace(ws)
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
            str(ws),
            "--timeout",
            "60",
            "--allow-commands",
        ],
        env={**server_env(), "PATH": "/usr/bin:/bin", "KPROF_FORCE_CPU": "1", "KPROF_MCP_TOKEN": TOKEN},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 30
    while time.time() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.2)
    try:
        yield ws, outside, port, proc
    finally:
        proc.terminate()
        proc.wait(20)


def _client(port: int):
    """An SDK client with its own HTTP connection pool and the bearer token."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    return http, Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http))


async def _calls(port: int, tally: Tally, share) -> None:
    """One SDK client making its share of the calls, one after the other."""
    http, client = _client(port)
    async with http, client as c:
        for name, args in share:
            await _call(c, tally, name, args)


async def _call(c, tally: Tally, name: str, args) -> None:
    try:
        with anyio.fail_after(CALL_TIMEOUT_S):
            r = await c.call_tool(name, args)
    except MCPError as e:
        tally.protocol_error(name, args, e)
        return
    except Exception as e:  # noqa: BLE001 — no answer: a broken connection or a hung server
        tally.transport_error(name, args, e)
        return
    tally.answer(name, args, r)
    job_id = job_to_cancel(r)
    if job_id:
        await _call(c, tally, "cancel_profile", {"job_id": job_id})


# ------------------------------------------------------------------ raw sockets
def _request(
    port: int, body: bytes, session: str | None = None, token: bool = True, length: int | None = None
) -> bytes:
    headers = [
        b"POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}".encode(),
        b"Content-Type: application/json",
        b"Accept: application/json, text/event-stream",
        f"Content-Length: {length or len(body)}".encode(),
        b"Connection: close",
    ]
    if token:
        headers.append(f"Authorization: Bearer {TOKEN}".encode())
    if session:
        headers += [f"mcp-session-id: {session}".encode(), b"mcp-protocol-version: 2025-06-18"]
    return b"\r\n".join(headers) + b"\r\n\r\n" + body


def _rpc(method: str, params: dict | None = None, id_: int | None = 1) -> bytes:
    msg = {"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})}
    return json.dumps({**msg, "id": id_} if id_ is not None else msg).encode()


async def _exchange(port: int, data: bytes) -> bytes:
    """Send ``data`` on a fresh connection and read the whole answer (the server closes)."""
    async with await anyio.connect_tcp("127.0.0.1", port) as s:
        await s.send(data)
        out = b""
        with anyio.move_on_after(CALL_TIMEOUT_S):
            while True:
                try:
                    out += await s.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    break
        return out


async def _session(port: int) -> str:
    """A raw MCP session: initialize, then the initialized notification; its id."""
    init = await _exchange(
        port,
        _request(
            port,
            _rpc(
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            ),
        ),
    )
    (sid,) = [
        line.split(b":", 1)[1].strip().decode()
        for line in init.split(b"\r\n")
        if line.lower().startswith(b"mcp-session-id:")
    ]
    await _exchange(port, _request(port, _rpc("notifications/initialized", id_=None), sid))
    return sid


async def _drop(port: int, data: bytes, after_s: float) -> None:
    """Send ``data`` and close the connection ``after_s`` later, unanswered."""
    async with await anyio.connect_tcp("127.0.0.1", port) as s:
        await s.send(data)
        await anyio.sleep(after_s)


async def _misbehave(port: int, kind: str, round_: int, figures: dict) -> None:
    """One raw-socket client doing one kind of misbehaviour."""
    if kind == "partial body":  # the body stops far short of its Content-Length
        body = _rpc("tools/call", {"name": "classify_bottleneck", "arguments": {"tc_pct": 1, "dram_pct": 1}})
        await _drop(port, _request(port, body[: len(body) // 2], length=len(body) + 4096), 0.3)
    elif kind == "partial headers":  # the header block never ends
        await _drop(port, _request(port, b"")[: 60 + 7 * round_], 0.3)
    elif kind == "not http":
        await _drop(port, bytes(range(256)) * 4, 0.1)
    elif kind == "dropped mid-call":  # a valid profile the server is waiting on; the client goes away
        sid = await _session(port)
        call = _rpc(
            "tools/call",
            {
                "name": "profile_kernel",
                "arguments": {
                    "kernel": "vector_add",
                    "version": "v0",
                    "mode": "event",
                    "params": {"n": 1024 + round_},
                    "wait_s": 30,
                },
            },
            id_=2,
        )
        await _drop(port, _request(port, call, sid), 0.5 + 0.3 * round_)
    elif kind == "no token":
        answer = await _exchange(port, _request(port, _rpc("initialize", {}), token=False))
        assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
        return
    elif kind == "5000-digit number":  # the SDK's JSON parser refuses it: a parse error, not silence
        sid = await _session(port)
        body = (
            b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "classify_bottleneck", '
            b'"arguments": {"tc_pct": ' + b"9" * 5000 + b', "dram_pct": 1}}}'
        )
        answer = await _exchange(port, _request(port, body, sid))
        assert answer.startswith(b"HTTP/1.1 400") and b"Parse error" in answer, answer[:300]
        return
    figures["dropped"] += 1


RAW_KINDS = (
    "partial body",
    "partial headers",
    "not http",
    "dropped mid-call",
    "no token",
    "5000-digit number",
)


def test_http_fuzz_many_clients_at_once(served, capsys):
    ws, outside, port, proc = served
    calls = draw_calls(N_CALLS)
    tally = Tally(ws)
    figures = {"dropped": 0}
    t0 = time.monotonic()

    async def main():
        http, client = _client(port)
        async with http, client as c:
            tally.publish((await c.call_tool("list_kernels", {})).structured_content)
        async with anyio.create_task_group() as tg:
            for i in range(N_CLIENTS):
                tg.start_soon(_calls, port, tally, calls[i::N_CLIENTS])
            for kind in RAW_KINDS:
                for round_ in range(N_RAW_ROUNDS):
                    tg.start_soon(_misbehave, port, kind, round_, figures)
        http, client = _client(port)  # after all that, a new client's normal call
        async with http, client as c:
            r = await c.call_tool("classify_bottleneck", {"tc_pct": 70, "dram_pct": 10})
            assert r.structured_content["bottleneck"] == "Compute-bound"

    anyio.run(main)
    with capsys.disabled():  # the figures show in every run's log, not only with -s
        print(
            f"\nhttp fuzz figures: { ({**tally.stats, **figures}) } with {N_CLIENTS} clients at once "
            f"({time.monotonic() - t0:.1f} s)"
        )
    assert proc.poll() is None, "the server exited"
    assert tally.stats["calls"] >= N_CALLS and figures["dropped"] >= 4 * N_RAW_ROUNDS, (tally.stats, figures)
    assert not tally.failures, f"{len(tally.failures)} failures: {tally.failures[:10]}"
    assert untouched(outside), sorted(p.name for p in outside.iterdir())

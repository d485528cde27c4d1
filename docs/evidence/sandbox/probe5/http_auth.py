"""Streamable HTTP with a bearer token: header variants an attacker on the machine would try (raw sockets,
so duplicate and malformed headers go out as written). Each line: the variant, the HTTP status, and
whether the request reached the MCP layer (an initialize answered). Usage: http_auth.py"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]
TOKEN = "kprobe5-http-token-" + "q" * 24
port = 18000 + os.getpid() % 1000
ws = Path(tempfile.mkdtemp(prefix="kprobe5-http-")) / "ws"
ws.mkdir()
env = {"PATH": os.environ["PATH"], "KPROF_FORCE_CPU": "1", "HOME": str(ws.parent), "KPROF_MCP_TOKEN": TOKEN,
       "KPROF_LOCK_DIR": str(ws.parent / "locks")}
proc = subprocess.Popen([str(REPO / ".venv/bin/kprof-mcp"), "--transport", "streamable-http", "--port", str(port),
                         "--workspace", str(ws), "--allow-commands"], env=env, stdout=subprocess.DEVNULL,
                        stderr=open(ws.parent / "server.err", "w"))
for _ in range(150):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        break
    except OSError:
        time.sleep(0.2)
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "kprobe5", "version": "0"}}})


def raw(headers: list[str], body: str = INIT, path: str = "/mcp", host: str | None = None) -> str:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    hs = [f"POST {path} HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}", "Content-Type: application/json",
          "Accept: application/json, text/event-stream", f"Content-Length: {len(body.encode())}", *headers, "", ""]
    s.sendall("\r\n".join(hs).encode() + body.encode())
    data = b""
    try:
        while b"\r\n\r\n" not in data or len(data) < 4096:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if b"protocolVersion" in data or b"error" in data:
                break
    except socket.timeout:
        pass
    s.close()
    status = data.split(b"\r\n", 1)[0].decode(errors="replace")
    return f"{status!s:28} reached MCP: {b'protocolVersion' in data}"


good = f"Authorization: Bearer {TOKEN}"
cases = [
    ("the token (control)", [good]),
    ("no token", []),
    ("wrong token", ["Authorization: Bearer " + "x" * 43]),
    ("token + trailing space/tab", [good + " \t"]),
    ("lower-case scheme", [f"Authorization: bearer {TOKEN}"]),
    ("two headers: wrong then right", ["Authorization: Bearer wrong-wrong-wrong-wrong", good]),
    ("two headers: right then wrong", [good, "Authorization: Bearer wrong-wrong-wrong-wrong"]),
    ("token's prefix", [f"Authorization: Bearer {TOKEN[:-1]}"]),
    ("token + suffix", [f"Authorization: Bearer {TOKEN}x"]),
    ("token in the query", []),
    ("Basic with the token", [f"Authorization: Basic {TOKEN}"]),
    ("1 MiB header", ["Authorization: Bearer " + "a" * (1 << 20)]),
    ("Origin null", [good, "Origin: null"]),
    ("Origin 127.0.0.1.evil.example", [good, f"Origin: http://127.0.0.1.evil.example:{port}"]),
    ("Origin with userinfo", [good, f"Origin: http://127.0.0.1:{port}@evil.example"]),
    ("Host evil", [good]),
    ("Host 127.0.0.1 with a trailing dot", [good]),
    ("Host localhost:port@evil", [good]),
    ("unicode token (fullwidth)", ["Authorization: Bearer " + TOKEN.replace("q", "\uff51")]),
]
for name, hs in cases:
    host = None
    path = "/mcp"
    if name == "token in the query":
        path = f"/mcp?token={TOKEN}&access_token={TOKEN}"
    if name == "Host evil":
        host = "evil.example"
    if name == "Host 127.0.0.1 with a trailing dot":
        host = f"127.0.0.1.:{port}"
    if name == "Host localhost:port@evil":
        host = f"localhost:{port}@evil.example"
    try:
        hs2 = [h.encode("utf-8").decode("latin-1") for h in hs]
        print(f"{name:40} {raw(hs2, path=path, host=host)}", flush=True)
    except Exception as e:  # noqa: BLE001
        print(f"{name:40} client error {type(e).__name__}: {e}", flush=True)
print("server alive:", proc.poll() is None)
proc.terminate()
proc.wait(20)

"""Issue 38, the re-run probe's gap 2 (docs/evidence/sandbox/probe-2026-11-26-after.md, row 8): a confined
command reached a listener outside its sandbox over TCP on loopback and listened on a port. Now Landlock
(ABI 4) refuses a command TCP bind and connect unless the operator passed ``--commands-network``, and a
kernel child always; as root the command also has a network namespace of its own (no UDP out either).
A pathname unix socket outside stays reachable below Landlock ABI 9 (README's Security section says so).
Real commands through the real pipeline on the CPU."""

import json
import os
import socket

import pytest
from conftest import FIXTURES

from kprof_mcp import sandbox, server
from kprof_mcp.engine import Config, Engine, KprofError

needs_net = pytest.mark.skipif(sandbox.abi() < 4, reason="no Landlock TCP control (ABI 4+) on this kernel")

NET = """
import json, os, socket, sys
port, unix_path, udp_port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
report = {}
def attempt(name, f):
    try:
        f()
        report[name] = "done"
    except OSError as e:
        report[name] = type(e).__name__
def tcp_connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"from-the-sandbox")
    s.close()
def tcp_listen():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
def unix_connect():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(unix_path)
    s.close()
def udp_send():
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"from-the-sandbox", ("127.0.0.1", udp_port))
attempt("tcp_connect", tcp_connect)
attempt("tcp_listen", tcp_listen)
attempt("unix_connect", unix_connect)
attempt("udp_send", udp_send)
os.makedirs("results", exist_ok=True)
json.dump(report, open("results/net.json", "w"))
"""


@pytest.fixture
def listeners(tmp_path):
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(4)
    tcp.setblocking(False)
    unix = socket.socket(socket.AF_UNIX)
    (tmp_path / "outside").mkdir()
    path = str(tmp_path / "outside" / "listen.sock")
    unix.bind(path)
    unix.listen(4)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.setblocking(False)
    yield tcp, path, udp
    for s in (tcp, unix, udp):
        s.close()


def _received(tcp: socket.socket, udp: socket.socket) -> list[str]:
    got = []
    try:
        c, _ = tcp.accept()
        c.close()
        got.append("tcp")
    except BlockingIOError:
        pass
    try:
        udp.recv(100)
        got.append("udp")
    except BlockingIOError:
        pass
    return got


def _run(tmp_path, listeners) -> dict:
    tcp, path, udp = listeners
    ws = tmp_path / "ws"
    (ws / "results").mkdir(parents=True)
    (ws / "net.py").write_text(NET)
    engine = Engine(Config(workspace=ws, timeout_s=120, force_cpu=True, warm=False))
    try:
        argv = ["python", "net.py", str(tcp.getsockname()[1]), path, str(udp.getsockname()[1])]
        with pytest.raises(KprofError, match="entered no range"):  # it ran to its end, recording nothing
            engine.profile_command(argv, mode="event")
    finally:
        engine.close()
    return json.loads((ws / "results" / "net.json").read_text())


@needs_net
def test_a_command_has_no_tcp_unless_the_operator_allows_it(tmp_path, listeners, monkeypatch):
    monkeypatch.setattr(sandbox.policy, "_commands_network", False)
    report = _run(tmp_path, listeners)
    root_user = os.geteuid() == 0  # a network namespace of its own: nothing but a loopback that is down
    assert report == {
        "tcp_connect": "PermissionError",
        "tcp_listen": "PermissionError",
        "unix_connect": "PermissionError" if sandbox.abi() >= 9 else "done",  # README: not protected below 9
        "udp_send": "OSError" if root_user else "done",  # ENETUNREACH in its namespace
    }
    assert _received(listeners[0], listeners[2]) == ([] if root_user else ["udp"])


@needs_net
def test_with_commands_network_a_command_may_use_tcp(tmp_path, listeners, monkeypatch):
    monkeypatch.setattr(sandbox.policy, "_commands_network", True)
    report = _run(tmp_path, listeners)
    assert report["tcp_connect"] == "done" and report["tcp_listen"] == "done"
    assert "tcp" in _received(listeners[0], listeners[2])


@needs_net
def test_a_kernel_child_has_no_tcp_even_with_commands_network(tmp_path, listeners, monkeypatch):
    monkeypatch.setattr(sandbox.policy, "_commands_network", True)
    tcp, _, _ = listeners
    ws = tmp_path / "ws"
    ws.mkdir()
    probe = f"""
import socket
try:
    socket.create_connection(("127.0.0.1", {tcp.getsockname()[1]}), timeout=5).close()
    REPORT = "tcp_connect done"
except OSError as e:
    REPORT = "tcp_connect " + type(e).__name__
"""
    src = (FIXTURES / "user_kernels" / "scale.py").read_text()
    (ws / "probed.py").write_text(src + probe + "\nraise SystemExit(REPORT)\n")
    engine = Engine(Config(workspace=ws, timeout_s=120, force_cpu=True, warm=False))
    try:
        with pytest.raises(KprofError, match="tcp_connect PermissionError"):
            engine.profile("probed.py", params={"n": 256}, mode="event")
    finally:
        engine.close()
    assert _received(tcp, listeners[2]) == []


@pytest.mark.skipif(not sandbox.available(), reason="no Landlock (ABI 3+) on this kernel")
def test_the_server_says_at_start_whether_commands_get_tcp(monkeypatch, capsys):
    class Started(Exception):
        pass

    def started(*a, **k):
        raise Started

    monkeypatch.setattr(server, "build_server", started)
    monkeypatch.setattr(sandbox.policy, "_commands_network", False)
    with pytest.raises(Started):
        server.main(["--allow-commands"])
    assert (
        "TCP: refused (pass --commands-network" in capsys.readouterr().err and not sandbox.commands_network()
    )
    with pytest.raises(Started):
        server.main(["--allow-commands", "--commands-network"])
    err = capsys.readouterr().err
    assert "TCP: allowed" in err and sandbox.commands_network()
    assert "tasks per job: " in err  # and how they are limited (kprof_mcp.sandbox.limits)
    assert "; memory: " in err  # and the jobs' memory (kprof_mcp.sandbox.memory)

"""Issue 38 items 1 and 4: a user's command (profile_command) confined by Landlock
(kprof_mcp.sandbox), and every process it starts, one in a session of its own included, dead when
its job ends, times out or the server dies. Real commands through the real pipeline on the CPU."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kprof_mcp import lifeline, sandbox
from kprof_mcp.engine import Config, Engine, KprofError

ROOT = Path(__file__).resolve().parents[2]
needs_landlock = pytest.mark.skipif(not sandbox.available(), reason="no Landlock (ABI 3+) on this kernel")

# Run as the workspace's script: tries what an attacker would, reports into cwd (always writable).
PROBE = """
import json, os, sys
victim, secret = sys.argv[1], sys.argv[2]
report = {}
def attempt(name, f):
    try:
        f()
        report[name] = "done"
    except OSError as e:
        report[name] = type(e).__name__
attempt("write_outside", lambda: open(victim, "w").write("owned"))
attempt("truncate_outside", lambda: os.truncate(victim, 0))
attempt("read_outside", lambda: open(secret).read())
attempt("list_home", lambda: os.listdir(os.path.expanduser("~")))
attempt("signal_parent", lambda: os.kill(os.getppid(), 0))
attempt("write_tmp", lambda: open(os.path.join(os.environ["TMPDIR"], "t"), "w").write("x"))
attempt("write_cwd", lambda: open("in_cwd.txt", "w").write("x"))
# cuInit names its threads: the command's own /proc/<pid> is writable, nothing else of /proc.
attempt("name_own_thread", lambda: open(f"/proc/{os.getpid()}/task/{os.getpid()}/comm", "w").write("probe"))
attempt("proc_of_parent", lambda: open(f"/proc/{os.getppid()}/oom_score_adj", "w").write("1000"))
import socket
attempt("abstract_socket", lambda: socket.socket(socket.AF_UNIX).connect(sys.argv[3]))
report["token_seen"] = "KPROF_MCP_TOKEN" in os.environ or "AWS_SECRET_ACCESS_KEY" in os.environ
report["path_kept"] = "PATH" in os.environ
json.dump(report, open("report.json", "w"))
"""

# Starts a grandchild in a session of its own, writes its pid, then (argv[1] == "hang") sleeps.
SPAWN = """
import os, subprocess, sys, time
p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
open("grandchild.pid", "w").write(str(p.pid))
print("started", flush=True)
if sys.argv[1:] == ["hang"]:
    time.sleep(600)
"""


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "elsewhere"  # another directory beside the workspace (another workspace, $HOME)
    outside.mkdir()
    (outside / "victim.txt").write_text("precious")
    (outside / "secret.txt").write_text("s3cret")
    cfg = Config.from_options(str(root), force_cpu=True)
    cfg.warm = False
    return root, outside, Engine(cfg)


def _gone(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@needs_landlock
def test_a_command_writes_and_reads_only_where_it_may(ws, monkeypatch):
    import socket

    root, outside, engine = ws
    (root / "probe.py").write_text(PROBE)
    # The server's secrets (its bearer token, a cloud key) stay out of the command's environment, and an
    # abstract unix socket of a process outside its sandbox is out of its reach (Landlock's scope, ABI 6).
    monkeypatch.setenv("KPROF_MCP_TOKEN", "server-token")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "cloud-key")
    name = f"\0kprof-probe-{os.getpid()}"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(name)
    listener.listen(1)
    argv = ["python", "probe.py", str(outside / "victim.txt"), str(outside / "secret.txt"), name]
    try:
        with pytest.raises(KprofError, match="entered no range"):  # it ran to its end, recording nothing
            engine.profile_command(argv, mode="event")
    finally:
        listener.close()
    report = json.loads((root / "report.json").read_text())
    assert report == {
        "write_outside": "PermissionError",
        "truncate_outside": "PermissionError",
        "read_outside": "PermissionError",
        "list_home": "PermissionError",
        "signal_parent": "PermissionError" if sandbox.abi() >= 6 else "done",
        "write_tmp": "done",
        "write_cwd": "done",
        "name_own_thread": "done",
        "proc_of_parent": "PermissionError",
        "abstract_socket": "PermissionError" if sandbox.abi() >= 6 else "done",
        "token_seen": False,
        "path_kept": True,
    }
    assert (outside / "victim.txt").read_text() == "precious"


@pytest.mark.parametrize("how", ["ends", "times out"])
def test_a_grandchild_in_its_own_session_dies_with_the_job(ws, how):
    root, _, engine = ws
    (root / "spawn.py").write_text(SPAWN)
    argv = ["python", "spawn.py"] + (["hang"] if how == "times out" else [])
    with pytest.raises(
        KprofError, match="did not finish within" if how == "times out" else "entered no range"
    ):
        engine.profile_command(argv, mode="event", timeout_s=20 if how == "times out" else None)
    pid = int((root / "grandchild.pid").read_text())
    try:
        assert _gone(pid), f"the grandchild {pid} outlived its job ({how})"
    finally:
        _kill(pid)


SERVER = """
import subprocess, sys
from kprof_mcp import lifeline, sandbox
env, fds = lifeline.for_child(dict(__import__("os").environ))
argv = sandbox.wrap(None, [sys.executable, "spawn.py", "hang"])
subprocess.Popen(argv, env=env, pass_fds=fds, start_new_session=True, cwd=sys.argv[1])
print("up", flush=True)
import time; time.sleep(600)
"""


def test_a_grandchild_in_its_own_session_dies_with_a_killed_server(tmp_path):
    """kill -9 of the process that started the command (the server): the supervisor's lifeline
    kills its whole subtree, the grandchild that left the session included."""
    (tmp_path / "spawn.py").write_text(SPAWN)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(tmp_path)], env=env, stdout=subprocess.PIPE)
    pid_file = tmp_path / "grandchild.pid"
    try:
        deadline = time.monotonic() + 30
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline, "the command never started"
            time.sleep(0.05)
        pid = int(pid_file.read_text())
        assert not _gone(pid, 0.2)
        server.kill()
        server.wait()
        assert _gone(pid), "the grandchild outlived the killed server"
    finally:
        server.kill()
        if pid_file.exists() and pid_file.read_text():
            _kill(int(pid_file.read_text()))


def test_kill_tree_finds_descendants_in_other_sessions():
    code = textwrap.dedent(
        """
        import subprocess, sys, time
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
        print(p.pid, flush=True)
        time.sleep(600)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    grandchild = int(parent.stdout.readline())
    try:
        assert grandchild in lifeline.descendants(parent.pid)
        assert lifeline.kill_tree(parent.pid) == 1
        assert _gone(grandchild)
        assert parent.poll() is None  # the root itself is left to its owner
    finally:
        parent.kill()
        parent.wait()
        _kill(grandchild)


@needs_landlock
def test_the_supervisor_confines_a_command_by_its_policy(tmp_path):
    """python -m kprof_mcp.sandbox POLICY -- ARGV, without torch: writes only under `write`,
    reads only under `read`; the command's exit status comes back."""
    allowed, other = tmp_path / "allowed", tmp_path / "other"
    allowed.mkdir()
    other.mkdir()
    (other / "f").write_text("x")
    policy = sandbox.command_policy(allowed, allowed, allowed / "runs", allowed / "tmp")
    pf = tmp_path / "policy.json"
    pf.write_text(policy.to_json())
    code = textwrap.dedent(
        f"""
        import sys
        open({str(allowed / "ok")!r}, "w").write("x")
        try:
            open({str(other / "f")!r})
        except PermissionError:
            sys.exit(7)
        """
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cp = subprocess.run(sandbox.wrap(pf, [sys.executable, "-c", code]), env=env, cwd=allowed, timeout=60)
    assert cp.returncode == 7 and (allowed / "ok").exists()
    assert "/root" not in policy.read and str(Path.home()) not in policy.read


def test_allow_commands_refuses_to_start_without_landlock(monkeypatch, capsys):
    from kprof_mcp import server

    monkeypatch.setattr(sandbox, "_abi", 0)
    with pytest.raises(SystemExit):
        server.main(["--allow-commands"])
    assert "--unconfined-commands" in capsys.readouterr().err

    class Started(Exception):
        pass

    def started(*a, **k):
        raise Started

    monkeypatch.setattr(server, "build_server", started)
    with pytest.raises(Started):
        server.main(["--allow-commands", "--unconfined-commands"])
    assert "run unconfined" in capsys.readouterr().err

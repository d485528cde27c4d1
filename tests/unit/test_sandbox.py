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

# Run as the workspace's script: tries what an attacker would, reports into results/ (a directory of the
# workspace root: the root itself only takes writes to what is already there, see test_out_and_git_...).
PROBE = """
import json, os, stat, sys
victim, secret, sock, other_pid, shm, profile = sys.argv[1:7]
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
attempt("write_cwd_subdir", lambda: open("results/in_cwd.txt", "w").write("x"))
attempt("create_at_cwd_root", lambda: open("new_at_root.txt", "w").write("x"))
attempt("append_other_profile", lambda: open(profile, "a").write("TAMPERED"))
# cuInit names its threads: the process's own /proc/<pid> is writable, nothing else of /proc.
attempt("name_own_thread", lambda: open(f"/proc/{os.getpid()}/task/{os.getpid()}/comm", "w").write("probe"))
attempt("proc_of_parent", lambda: open(f"/proc/{os.getppid()}/oom_score_adj", "w").write("1000"))
attempt("environ_of_other", lambda: open(f"/proc/{other_pid}/environ", "rb").read())
attempt("append_other_shm", lambda: open(shm, "r+").write("TAMPERED"))
attempt("own_shm", lambda: open(f"/dev/shm/probe-{os.getpid()}", "w").write("x"))
attempt("mknod", lambda: os.mknod("results/node", stat.S_IFCHR | 0o600, os.makedev(1, 3)))
attempt("chown", lambda: os.chown("results/in_cwd.txt", 12345, 12345))
attempt("chroot", lambda: os.chroot("results"))
import socket
attempt("abstract_socket", lambda: socket.socket(socket.AF_UNIX).connect(sock))
report["token_seen"] = "KPROF_MCP_TOKEN" in os.environ or "AWS_SECRET_ACCESS_KEY" in os.environ
report["path_kept"] = "PATH" in os.environ
json.dump(report, open("results/report.json", "w"))
"""

# Starts a grandchild in a session of its own (tagged by argv[1] on its command line: in a PID namespace the
# command does not know its pid as seen from here), writes its pid, then (argv[2] == "hang") sleeps.
SPAWN = """
import os, subprocess, sys, time
p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", sys.argv[1]], start_new_session=True)
os.makedirs("results", exist_ok=True)
open("results/grandchild.pid", "w").write(str(p.pid))
print("started", flush=True)
if sys.argv[2:] == ["hang"]:
    time.sleep(600)
"""


def _tagged(tag: str) -> list[int]:
    """Live processes whose command line holds ``tag``."""
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != os.getpid():
            try:
                if tag.encode() in Path(f"/proc/{d}/cmdline").read_bytes().split(b"\0"):
                    if Path(f"/proc/{d}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
                        found.append(int(d))
            except OSError:
                pass
    return found


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
    """Issue 38 and its probe (docs/evidence/sandbox/probe-2026-11-26.md): rows 3-6 — another process's
    environment, /dev/shm of others, out/ under the default cwd, device nodes and capabilities as root."""
    import socket

    root, outside, engine = ws
    (root / "probe.py").write_text(PROBE)
    (root / "results").mkdir()
    profile = root / "out" / "profiles" / "event" / "vector_add" / "n=1" / "run-v0" / "params.json"
    profile.parent.mkdir(parents=True)
    profile.write_text("{}")
    shm = Path(f"/dev/shm/kprof-test-other-{os.getpid()}")
    shm.write_text("another job's\n")
    # The server's secrets (its bearer token, a cloud key) stay out of the command's environment, and an
    # abstract unix socket of a process outside its sandbox is out of its reach (Landlock's scope, ABI 6).
    monkeypatch.setenv("KPROF_MCP_TOKEN", "server-token")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "cloud-key")
    name = f"\0kprof-probe-{os.getpid()}"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(name)
    listener.listen(1)
    other = subprocess.Popen(["sleep", "60"], env={"OTHER_SECRET": "x"})
    argv = ["python", "probe.py", str(outside / "victim.txt"), str(outside / "secret.txt"), name]
    argv += [str(other.pid), str(shm), str(profile)]
    try:
        with pytest.raises(KprofError, match="entered no range"):  # it ran to its end, recording nothing
            engine.profile_command(argv, mode="event")
    finally:
        listener.close()
        other.kill()
        other.wait()
        shm_text = shm.read_text()
        shm.unlink()
    report = json.loads((root / "results" / "report.json").read_text())
    root_user = os.geteuid() == 0  # the supervisor gives it a PID and mount namespace of its own
    assert report == {
        "write_outside": "PermissionError",
        "truncate_outside": "PermissionError",
        "read_outside": "PermissionError",
        "list_home": "PermissionError",
        "signal_parent": "PermissionError" if sandbox.abi() >= 6 else "done",
        "write_tmp": "done",
        "write_cwd_subdir": "done",
        "create_at_cwd_root": "PermissionError",
        "append_other_profile": "PermissionError",
        "name_own_thread": "done",
        "proc_of_parent": "PermissionError",
        # without a PID namespace (not root) Landlock's ptrace scope refuses it (PTRACE_MODE_READ)
        "environ_of_other": "FileNotFoundError" if root_user else "PermissionError",
        "append_other_shm": "FileNotFoundError" if root_user else "PermissionError",
        "own_shm": "done" if root_user else "PermissionError",
        "mknod": "PermissionError",
        "chown": "PermissionError",
        "chroot": "PermissionError",
        # as root in a network namespace of its own (abstract names are per namespace): no such name
        "abstract_socket": "ConnectionRefusedError"
        if root_user
        else "PermissionError"
        if sandbox.abi() >= 6
        else "done",
        "token_seen": False,
        "path_kept": True,
    }
    assert (outside / "victim.txt").read_text() == "precious"
    assert profile.read_text() == "{}" and shm_text == "another job's\n"
    assert not (root / "new_at_root.txt").exists()


@pytest.mark.parametrize("how", ["ends", "times out"])
def test_a_grandchild_in_its_own_session_dies_with_the_job(ws, how):
    root, _, engine = ws
    (root / "spawn.py").write_text(SPAWN)
    (root / "results").mkdir()
    tag = f"kprof-test-tag-{os.getpid()}-{how.replace(' ', '')}"
    argv = ["python", "spawn.py", tag] + (["hang"] if how == "times out" else [])
    with pytest.raises(
        KprofError, match="did not finish within" if how == "times out" else "entered no range"
    ):
        engine.profile_command(argv, mode="event", timeout_s=20 if how == "times out" else None)
    assert (root / "results" / "grandchild.pid").read_text()  # it was started
    deadline = time.monotonic() + 5
    while _tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = _tagged(tag)
    for pid in left:
        _kill(pid)
    assert not left, f"the grandchild {left} outlived its job ({how})"


SERVER = """
import subprocess, sys
from kprof_mcp import lifeline, sandbox
env, fds = lifeline.for_child(dict(__import__("os").environ))
argv = sandbox.wrap(None, [sys.executable, "spawn.py", "kprof-test-server-tag", "hang"])
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
    pid_file = tmp_path / "results" / "grandchild.pid"
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
    (allowed / "sub").mkdir()
    policy = sandbox.command_policy(allowed, allowed, allowed / "out" / "event" / "command", allowed / "tmp")
    pf = tmp_path / "policy.json"
    pf.write_text(policy.to_json())
    code = textwrap.dedent(
        f"""
        import sys
        open({str(allowed / "sub" / "ok")!r}, "w").write("x")
        try:
            open({str(other / "f")!r})
        except PermissionError:
            sys.exit(7)
        """
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cp = subprocess.run(sandbox.wrap(pf, [sys.executable, "-c", code]), env=env, cwd=allowed, timeout=60)
    assert cp.returncode == 7 and (allowed / "sub" / "ok").exists()
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


# Moves its own run directory away and plants a link to `outside` under its name (probe row "run dir
# swapped"), then prints and ends.
SWAP = """
import glob, os, sys
(partial,) = glob.glob("out/profiles/event/command/**/*.partial", recursive=True)
os.rename(partial, partial + ".moved")
os.symlink(sys.argv[1], partial)
print("swapped")
"""


@needs_landlock
def test_a_run_dir_swapped_for_a_link_is_a_clear_error_and_nothing_goes_through_it(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "swap.py").write_text(SWAP)
    (ws / "fails.py").write_text("print('about to fail')\nraise SystemExit(3)\n")
    cfg = Config.from_options(str(ws), force_cpu=True)
    cfg.warm = False
    engine = Engine(cfg)
    (ws / "out" / "profiles" / "event" / "command").mkdir(parents=True)
    with pytest.raises(KprofError, match="was moved, removed or replaced while the command ran"):
        engine.profile_command(["python", "swap.py", str(outside)], mode="event")
    assert list(outside.iterdir()) == []
    with pytest.raises(KprofError, match="about to fail") as e:
        engine.profile_command(["python", "fails.py"], mode="event")
    assert "kept in" not in str(e.value)
    runs = ws / "out" / "profiles" / "event" / "command"
    left = [p for p in runs.rglob("*.partial") if not p.is_symlink()]  # the link is the swap's own
    assert left == [], "a failed run left its *.partial directory"

"""Issue 38, the tenth probe's other findings (docs/evidence/sandbox/probe-2026-11-27-tenth.md):

- P10-1d: ``KPROF_NSYS`` (or ``KPROF_NCU``) naming a copy in the workspace: a command rewrote it and the server
  ran it unconfined (``device_info``: ``nsys --version``). The tools the server runs, by those variables or on
  ``PATH``, and their install directories are the server's own paths now (kprof_mcp.sandbox.selfpaths).
- P10-2: as another user than root (no IPC namespace of its own) a job's SysV segment outlived it, pinning memory
  no OOM kill frees. A job without its own IPC namespace can make no SysV object now (seccomp: shmget, semget,
  msgget refused); one with its own (root, isolated) keeps them, and they die with it.
- P10-3: the command's write rule on ``out/profiles/<mode>/command`` followed a link that a concurrent kernel job
  swapped in for ``out/profiles/<mode>`` after the server's check. The server now resolves every write path when
  it writes the policy, and the supervisor opens each component without following links: a rule with a link on
  its way is not granted (and it says so)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kprof_mcp import sandbox
from kprof_mcp.sandbox import selfpaths

needs_landlock = pytest.mark.skipif(not sandbox.available(), reason="no Landlock (ABI 3+) on this kernel")
PYTHONPATH = os.pathsep.join(sys.path)


def _supervise(policy_file: Path, code: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=PYTHONPATH)
    return subprocess.run(
        sandbox.wrap(policy_file, [sys.executable, "-c", code]),
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_profiler_named_by_kprof_nsys_or_ncu_in_the_workspace_is_protected(tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    nsys = ws / "tools" / "nsight" / "bin" / "nsys"
    ncu = ws / "vendor" / "ncu-2025" / "ncu"
    for exe in (nsys, ncu):
        exe.parent.mkdir(parents=True)
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    monkeypatch.setenv("KPROF_NSYS", str(nsys))
    monkeypatch.setenv("KPROF_NCU", str(ncu))
    protected, _ = selfpaths.protected_paths(ws, ws / "out")
    for d in (nsys.parent, nsys.parent.parent, ncu.parent):
        assert d in protected, d
    grants = selfpaths.writable_under(ws, protected)
    assert not [g for g in grants if g.startswith(str(ws / "tools")) or g.startswith(str(ws / "vendor"))]


@needs_landlock
def test_no_sysv_object_for_a_job_without_an_ipc_namespace_of_its_own(tmp_path):
    code = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "out = []\n"
        "for name, args in (('shmget', (0, 1 << 20, 0o1600)), ('semget', (0, 1, 0o1600)), ('msgget', (0, 0o1600))):\n"
        "    r = getattr(libc, name)(*args)\n"
        "    out.append(name + '=' + ('ok' if r >= 0 else os.strerror(ctypes.get_errno())))\n"
        "    if name == 'shmget' and r >= 0:\n"
        "        libc.shmctl(r, 0, None)  # IPC_RMID\n"
        "print('|'.join(out))\n"
    )
    work = tmp_path / "w"
    work.mkdir()
    policy = sandbox.command_policy(tmp_path, work, tmp_path / "out" / "event" / "runs", work / "tmp")
    policy.isolate, policy.private_proc = False, False  # no namespace at all: as another user than root
    pf = tmp_path / "plain.json"
    pf.write_text(policy.to_json())
    cp = _supervise(pf, code, work)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.strip().split('|') == [
        "shmget=Operation not permitted",
        "semget=Operation not permitted",
        "msgget=Operation not permitted",
    ], cp.stdout
    if os.geteuid() == 0:  # root, isolated: an IPC namespace of its own, where they are allowed
        policy.isolate = True
        pf.write_text(policy.to_json())
        cp = _supervise(pf, code, work)
        assert cp.returncode == 0, cp.stderr
        assert cp.stdout.strip().split('|') == ["shmget=ok", "semget=ok", "msgget=ok"], cp.stdout


@needs_landlock
@pytest.mark.parametrize("swap", [False, True])
def test_a_write_rule_with_a_link_swapped_onto_its_way_is_not_granted(tmp_path, swap):
    ws, outside = tmp_path / "ws", tmp_path / "outside" / "evdir"
    out_root = ws / "out" / "profiles"
    for d in (out_root / "event" / "command", ws / "cmd", outside / "command", tmp_path / "req"):
        d.mkdir(parents=True)
    req = {"out_root": str(out_root), "mode": "event", "command_cwd": str(ws / "cmd")}
    conf = sandbox.command_confinement(json.dumps(req), tmp_path / "req", ws, None)  # the server's check
    runs = json.loads(conf.policy_file.read_text())["write"]
    assert str(out_root / "event" / "command") in runs or any(
        r.startswith(str(out_root / "event" / "command")) for r in runs
    )
    if swap:  # what a concurrent kernel job may do: out/profiles is its to write
        (out_root / "event").rename(out_root / "event.real")
        (out_root / "event").symlink_to(outside)
    inside, beyond = out_root / "event.real" / "command" / "x", outside / "command" / "PWNED"
    target = beyond if swap else out_root / "event" / "command" / "x"
    code = (
        f"try:\n open({str(target)!r}, 'w').write('x'); print('wrote')\n"
        "except OSError as e:\n print('refused', type(e).__name__)"
    )
    cp = _supervise(conf.policy_file, code, ws / "cmd")
    if swap:
        assert cp.stdout.strip() == "refused PermissionError", cp.stdout + cp.stderr
        assert not beyond.exists()
        assert "a link on its path" in cp.stderr
    else:
        assert cp.stdout.strip() == "wrote", cp.stdout + cp.stderr  # the control: the rule works
        assert not inside.exists()


def test_kprofs_cache_and_lock_directory_in_the_workspace_are_protected(tmp_path, monkeypatch):
    """P10-1e: with XDG_CACHE_HOME in the project a command swapped locks/cpu.holder for a link to an
    outside file, and the server wrote its holder id through it at the next job."""
    ws = tmp_path / "ws"
    (ws / ".cache" / "kprof-mcp" / "locks").mkdir(parents=True)
    (ws / "locks2").mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(ws / ".cache"))
    monkeypatch.setenv("KPROF_LOCK_DIR", str(ws / "locks2"))
    protected, _ = selfpaths.protected_paths(ws, ws / "out")
    assert ws / ".cache" / "kprof-mcp" in protected and ws / "locks2" in protected
    grants = selfpaths.writable_under(ws, protected)
    assert str(ws / ".cache") not in grants and str(ws / "locks2") not in grants


def test_the_lock_holder_is_never_written_through_a_link(tmp_path, monkeypatch):
    from kprof_mcp import locks

    victim = tmp_path / "victim.txt"
    victim.write_text("outside\n")
    monkeypatch.setenv("KPROF_LOCK_DIR", str(tmp_path / "locks"))
    (tmp_path / "locks").mkdir()
    (tmp_path / "locks" / "cpu.holder").symlink_to(victim)
    with locks.device_lock("cpu"):
        pass
    assert victim.read_text() == "outside\n"
    holder = tmp_path / "locks" / "cpu.holder"
    assert not holder.is_symlink() and holder.read_text() == locks.HOLDER  # the link replaced by the file


def test_allow_commands_refuses_the_home_directory_as_workspace(tmp_path):
    home = Path.home()
    cp = subprocess.run(
        [sys.executable, "-m", "kprof_mcp", "--workspace", str(home), "--allow-commands"],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=PYTHONPATH),
        stdin=subprocess.DEVNULL,
    )
    assert cp.returncode == 2 and "holds the home directory" in cp.stderr, cp.stderr[-500:]

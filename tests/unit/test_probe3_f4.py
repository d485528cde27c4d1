"""Issue 38, the fresh probe's F4: ``/dev`` was a read rule, so a confined command run as another user
than root (no private /dev/shm) read another same-user process's 0600 /dev/shm file. The policies now
grant of /dev only the device files a Python/CUDA program opens (and the supervisor the job's own
/dev/shm). On the CPU: the real policies' rules, and a confined read of a /dev/shm file outside the job
with no private /dev/shm (as the probe's uid 65534 had) refused while /dev/null, /dev/urandom work."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kprof_mcp import sandbox
from kprof_mcp.sandbox.policy import KernelScope, command_policy, kernel_policy

ROOT = Path(__file__).resolve().parents[2]


def _policies(tmp_path):
    ws = tmp_path / "ws"
    for d in (ws / "out" / "profiles" / "command", tmp_path / "priv", tmp_path / "jobs"):
        d.mkdir(parents=True)
    cmd = command_policy(ws, ws, ws / "out" / "profiles" / "command", tmp_path / "priv")
    kern = kernel_policy(KernelScope(ws, ws / "out" / "profiles"), tmp_path / "jobs")
    return cmd, kern


def test_no_policy_reads_dev_as_a_whole(tmp_path):
    for p in _policies(tmp_path):
        assert not [r for r in p.read if r == "/dev" or r.startswith("/dev/")], p.read
        assert "/dev/null" in p.devices and "/dev/urandom" in p.devices
        assert not [d for d in p.devices if d.startswith(("/dev/shm", "/dev/pts"))]


@pytest.mark.skipif(not sandbox.available(), reason="no Landlock (ABI 3+) on this kernel")
@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm")
@pytest.mark.parametrize("which", ["command", "kernel"])
def test_a_confined_process_cannot_read_another_processes_shm(tmp_path, which):
    secret = Path(f"/dev/shm/kprof-test-f4-{os.getpid()}-{which}")
    secret.write_text("shm-secret")
    os.chmod(secret, 0o600)
    try:
        cmd, kern = _policies(tmp_path)
        policy = cmd if which == "command" else kern
        # as the probe's uid 65534: no namespace, so no private /dev/shm hides the file
        policy.isolate, policy.private_proc = False, False
        pf = tmp_path / "policy.json"
        pf.write_text(policy.to_json())
        code = textwrap.dedent(
            f"""
            def attempt(name, f):
                try:
                    f()
                    print(name, "done")
                except OSError as e:
                    print(name, type(e).__name__)
            attempt("shm", lambda: open({str(secret)!r}).read())
            attempt("null", lambda: open("/dev/null", "w").write("x"))
            attempt("urandom", lambda: open("/dev/urandom", "rb").read(8))
            attempt("fd", lambda: open("/dev/fd/1", "w").write(""))
            """
        )
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        cp = subprocess.run(
            sandbox.wrap(pf, [sys.executable, "-c", code]),
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        got = dict(ln.split() for ln in cp.stdout.splitlines() if len(ln.split()) == 2)
        assert got == {"shm": "PermissionError", "null": "done", "urandom": "done", "fd": "done"}, (
            cp.stdout + cp.stderr
        )
    finally:
        secret.unlink()

"""Issue 38, the independent probe (row 6): a confined command attached another root process's 0600
SysV shared-memory segment and wrote it, and sent to its 0600 message queue (Landlock does not cover
SysV IPC). As root the supervisor now gives the job an IPC namespace of its own: the outside segment
and queue are not there. Through the real supervisor (python -m kprof_mcp.sandbox), on the CPU."""

import ctypes
import ctypes.util
import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kprof_mcp import sandbox

ROOT = Path(__file__).resolve().parents[2]
needs_root_landlock = pytest.mark.skipif(
    not sandbox.available() or os.geteuid() != 0, reason="namespaces need root; Landlock ABI 3+"
)
_IPC_CREAT, _IPC_RMID = 0o1000, 0

PROBE = """
import ctypes, ctypes.util, sys
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.shmat.restype = ctypes.c_void_p
out = []
sid = libc.shmget({shm_key}, 0, 0o600)
if sid >= 0:
    addr = libc.shmat(sid, None, 0)
    if addr not in (None, ctypes.c_void_p(-1).value):
        ctypes.memmove(addr, b"TAMPERED", 8)
        out.append("shm-written")
qid = libc.msgget({msg_key}, 0o600)
if qid >= 0:
    buf = ctypes.create_string_buffer((1).to_bytes(8, "little") + b"from-sandbox")
    if libc.msgsnd(qid, buf, 12, 0o4000) == 0:
        out.append("msg-sent")
sys.exit(3 if out else 0)
"""


@needs_root_landlock
@pytest.mark.parametrize("which", ["command", "kernel"])
def test_sysv_ipc_outside_the_job_is_out_of_reach(tmp_path, which):
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    shm_key, msg_key = 0x6B700000 + os.getpid() % 0xFFFF, 0x6B710000 + os.getpid() % 0xFFFF
    sid = libc.shmget(shm_key, 4096, _IPC_CREAT | 0o600)
    qid = libc.msgget(msg_key, _IPC_CREAT | 0o600)
    assert sid >= 0 and qid >= 0
    addr = libc.shmat(sid, None, 0)
    try:
        allowed = tmp_path / "allowed"
        (allowed / "tmp").mkdir(parents=True)
        policy = sandbox.command_policy(
            allowed, allowed, allowed / "out" / "event" / "command", allowed / "tmp"
        )
        if which == "kernel":  # as a kernel child: no PID namespace, a /proc and mounts of its own
            policy = dataclasses.replace(policy, isolate=False, private_proc=True)
        pf = tmp_path / "policy.json"
        pf.write_text(policy.to_json())
        code = textwrap.dedent(PROBE.format(shm_key=shm_key, msg_key=msg_key))
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        cp = subprocess.run(sandbox.wrap(pf, [sys.executable, "-c", code]), env=env, cwd=allowed, timeout=60)
        assert ctypes.string_at(addr, 8) != b"TAMPERED"
        buf = ctypes.create_string_buffer(64)
        assert libc.msgrcv(qid, buf, 48, 0, 0o4000) < 0  # IPC_NOWAIT: nothing was sent
        assert cp.returncode == 0
    finally:
        libc.shmdt(ctypes.c_void_p(addr))
        libc.shmctl(sid, _IPC_RMID, None)
        libc.msgctl(qid, _IPC_RMID, None)

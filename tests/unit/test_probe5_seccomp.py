"""Issue 38, the fifth probe (docs/evidence/sandbox/probe-2026-11-26-fifth.md): P5-1, a job set the
server's RLIMIT_CPU by prlimit(2) on its pid (only the uids are checked; Landlock has no hook there) and
the kernel killed the server; P5-2, a job wrote keys into the user's keyring (shared by every process of
the uid, outliving the job) and could read what is kept there; P5-4, a raw clone(CLONE_PARENT) made the
job's child a child of the sandbox's supervisor, out of the warm worker's reach. The seccomp filter now
refuses add_key/request_key/keyctl, answers clone3 with ENOSYS (glibc then uses clone, whose flags it
sees) and refuses clone with CLONE_PARENT, and allows the calls that name another process by an argument
(prlimit64, setpriority, sched_set*, ioprio_set, migrate_pages) only on the caller itself. Each case runs
confined as a command is, through the real supervisor (``python -m kprof_mcp.sandbox``)."""

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kprof_mcp import sandbox
from kprof_mcp.sandbox import seccomp

ROOT = Path(__file__).resolve().parents[2]
needs_landlock = pytest.mark.skipif(not sandbox.available(), reason="no Landlock (ABI 3+) on this kernel")

ATTACK = textwrap.dedent(
    r"""
    import ctypes, errno, json, os, resource, subprocess, sys, threading
    libc = ctypes.CDLL(None, use_errno=True)
    target = int(sys.argv[1])  # a process outside the job (the test, standing for the server)
    out = {}

    def call(name, *args):
        ctypes.set_errno(0)
        rc = libc.syscall(*args)
        out[name] = 0 if rc >= 0 else -ctypes.get_errno()

    class RL(ctypes.Structure):
        _fields_ = [("cur", ctypes.c_uint64), ("max", ctypes.c_uint64)]

    one = RL(1, 1)
    call("prlimit_other", 302, target, resource.RLIMIT_CPU, ctypes.byref(one), None)
    mine = RL(resource.RLIM_INFINITY, resource.RLIM_INFINITY)
    call("prlimit_self_read", 302, 0, resource.RLIMIT_CPU, None, ctypes.byref(mine))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))  # glibc: prlimit64(0, ...)
    out["setrlimit_self"] = 0
    call("setpriority_other", 141, 0, target, 19)
    call("setpriority_user", 141, 2, 0, 19)  # PRIO_USER, the caller's uid: every process of the user
    call("sched_setscheduler_other", 144, target, 5, ctypes.byref(ctypes.c_int(0)))  # SCHED_IDLE
    call("ioprio_set_other", 251, 1, target, (3 << 13))
    one_cpu = ctypes.c_ulong(1)
    call("sched_setaffinity_other", 203, target, ctypes.sizeof(one_cpu), ctypes.byref(one_cpu))
    out["sched_setaffinity_self"] = 0 if libc.sched_getaffinity(0, 8, ctypes.byref(ctypes.c_ulong())) == 0 else -1
    call("ioprio_set_user", 251, 3, 0, (3 << 13))
    os.nice(1)  # setpriority(PRIO_PROCESS, 0): on itself
    out["nice_self"] = 0
    call("add_key", 248, b"user", b"kprobe5-test", b"x", 1, ctypes.c_int(-4))  # KEY_SPEC_USER_KEYRING
    call("keyctl", 250, 11, ctypes.c_int(-4), None, 0)  # KEYCTL_READ @u
    call("request_key", 249, b"user", b"kprobe5-test", None, 0)
    call("clone3", 435, None, 0)
    pid = libc.syscall(56, 0x8000 | 17, None, None, None, None)  # clone(CLONE_PARENT | SIGCHLD)
    if pid == 0:
        os._exit(0)
    out["clone_parent"] = -ctypes.get_errno() if pid < 0 else pid
    t = threading.Thread(target=lambda: out.__setitem__("thread", 0))
    t.start(); t.join()
    out["subprocess"] = subprocess.run([sys.executable, "-c", "print(1)"], capture_output=True).returncode
    print("KPROBE5 " + json.dumps(out))
    """
)


def _policy_file(kind: str, ws: Path, tmp_path: Path) -> Path:
    if kind == "kernel":  # a warm worker's: the machine's pids (P5-1 and P5-4 were there)
        from kprof_mcp.sandbox.confine import kernel_confinement
        from kprof_mcp.sandbox.policy import KernelScope

        return kernel_confinement(KernelScope(ws, ws / "out")).policy_file
    policy = sandbox.command_policy(ws, ws, ws / "out" / "event" / "command", ws / "tmp")
    pf = tmp_path / "policy.json"
    pf.write_text(policy.to_json())
    return pf


@needs_landlock
@pytest.mark.parametrize("kind", ["kernel", "command"])
def test_calls_on_another_process_keyrings_and_clone_parent_are_refused(tmp_path, kind, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ws = tmp_path / "ws"
    (ws / "tmp").mkdir(parents=True)
    (ws / "out").mkdir()
    (ws / "attack.py").write_text(ATTACK)
    pf = _policy_file(kind, ws, tmp_path)
    # the server's stand-in: a process outside the job, of the same user
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        before = resource.prlimit(victim.pid, resource.RLIMIT_CPU)
        cp = subprocess.run(
            sandbox.wrap(pf, [sys.executable, "attack.py", str(victim.pid)]),
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            cwd=ws,
            timeout=60,
            capture_output=True,
            text=True,
        )
        after = resource.prlimit(victim.pid, resource.RLIMIT_CPU)
        nice = os.getpriority(os.PRIO_PROCESS, victim.pid)
        cpus = os.sched_getaffinity(victim.pid)
    finally:
        victim.kill()
        victim.wait()
    assert cp.returncode == 0, (cp.stdout, cp.stderr)
    assert after == before and nice < 19 and cpus == os.sched_getaffinity(0)
    out = json.loads(next(x for x in cp.stdout.splitlines() if x.startswith("KPROBE5 "))[8:])
    # refused before the kernel looks the pid up (a command's PID namespace alone answered ESRCH)
    refused = ["prlimit_other", "setpriority_other", "sched_setscheduler_other", "ioprio_set_other"]
    refused += ["setpriority_user", "sched_setaffinity_other"]
    refused += ["ioprio_set_user", "add_key", "keyctl", "request_key", "clone_parent"]
    assert {k: out[k] for k in refused} == {k: -1 for k in refused}, out  # EPERM
    assert out["clone3"] == -38  # ENOSYS: glibc falls back to clone
    assert {
        k: out[k] for k in ("prlimit_self_read", "setrlimit_self", "nice_self", "thread", "subprocess")
    } == {
        "prlimit_self_read": 0,
        "setrlimit_self": 0,
        "nice_self": 0,
        "thread": 0,
        "subprocess": 0,
    }, out


def test_the_bound_checks_jump_forward_to_the_allow_or_the_deny():
    for machine in ("x86_64", "aarch64"):
        prog = seccomp.program(machine)
        allow, deny = len(prog) - 2, len(prog) - 1
        col = 0 if machine == "x86_64" else 1
        for name, v in seccomp.BOUND.items():
            at = next(i for i, x in enumerate(prog) if i > 3 and x[0] == 0x15 and x[3] == v[col] and x[1] > 0)
            block = at + 1 + prog[at][1]
            checks = [x for x in prog[block:] if x[0] == 0x15][: len(v[2])]
            assert all(x[2] > 0 for x in checks)  # a false check: to the deny
            loads = [x[3] for x in prog[block:] if x[0] == 0x20][: len(v[2])]
            assert loads == [16 + 8 * a for a, _, _ in v[2]]
        assert prog[allow] == (0x06, 0, 0, 0x7FFF0000) and prog[deny] == (0x06, 0, 0, 0x00050001)


@needs_landlock
def test_a_command_killed_by_sigkill_ends_the_supervisor_by_sigkill_without_a_traceback(tmp_path):
    """P5-3: the supervisor mirrored the command's signal with ``signal.signal(SIGKILL, SIG_DFL)``,
    which raises: the tool's answer was kprof's own traceback, the command's end (signal 9) lost."""
    ws = tmp_path / "ws"
    (ws / "tmp").mkdir(parents=True)
    pf = _policy_file("command", ws, tmp_path)
    cp = subprocess.run(
        sandbox.wrap(pf, [sys.executable, "-c", "import os; os.kill(os.getpid(), 9)"]),
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        cwd=ws,
        timeout=60,
        capture_output=True,
        text=True,
    )
    assert cp.returncode == -9 and "Traceback" not in cp.stderr, (cp.returncode, cp.stderr)


def test_a_describing_child_cannot_write_the_profiles_root(tmp_path, monkeypatch):
    """P5-6c: list_kernels planted a thread through the worker that describes packages, which later swapped
    a profile job's run directory for a link. Describing writes no profile: its policy leaves the
    profiles' root out; a profiling child's keeps it."""
    from kprof_mcp.sandbox.confine import kernel_confinement
    from kprof_mcp.sandbox.policy import KernelScope

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ws = tmp_path / "ws"
    (ws / "out").mkdir(parents=True)
    scope = KernelScope(ws, ws / "out")
    if not sandbox.available():
        assert kernel_confinement(scope, outputs=False) is None
        return
    writes = lambda c: json.loads(c.policy_file.read_text())["write"]  # noqa: E731
    assert str(ws / "out") in writes(kernel_confinement(scope))
    assert str(ws / "out") not in writes(kernel_confinement(scope, outputs=False))

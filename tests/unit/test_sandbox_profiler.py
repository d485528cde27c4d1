"""Issue 38: a kernel child or a command behind a profiler (Nsight Compute; Nsight Systems where the job can
have a /tmp of its own) is confined like the others, the profiler with it. The profiled process is the profiler's child (another pid than the confined one) and
must write its own /proc/<pid> (CUDA fails with error 304 otherwise: docs/evidence/sandbox/
ncu-probe-h200-2026-11-26.log); write beneath /proc is granted only on a /proc of the job's own whose
entries but the processes' are read-only, in a network namespace of its own (as root), or to another
user than root. On the CPU, with a stand-in profiler that starts its target as a child."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kprof_mcp import runner, sandbox
from kprof_mcp.sandbox import OUTPUT_RIGHTS, READ, TRUNCATE, WRITE_FILE
from kprof_mcp.sandbox.__main__ import View, proc_rights
from kprof_mcp.sandbox.policy import KernelScope, Policy, profiler_outputs

ROOT = Path(__file__).resolve().parents[2]
needs_landlock = pytest.mark.skipif(not sandbox.available(), reason="no Landlock (ABI 3+) on this kernel")
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="namespaces and a /proc of its own need root")

# The stand-in profiler: ``fakeprof --export BASE ARGV...`` writes BASE.rep (as ncu and nsys write their
# report), tries a write outside, then runs ARGV as its child and exits as it did.
FAKEPROF = """
import os, subprocess, sys
base = sys.argv[2]
open(base + ".rep", "w").write("report")
try:
    open(sys.argv[3], "w").write("profiler escaped")
    print("PROFILER outside done", flush=True)
except OSError as e:
    print("PROFILER outside", type(e).__name__, flush=True)
sys.exit(subprocess.run(sys.argv[4:]).returncode)
"""

# The target (the profiler's child): what CUDA's initialisation writes, and what it must not.
TARGET = """
import errno, os, sys, threading
server = int(sys.argv[1])
def attempt(name, f):
    try:
        f()
        print("TARGET", name, "done", flush=True)
    except OSError as e:
        print("TARGET", name, errno.errorcode.get(e.errno, e.errno), flush=True)
tid = threading.get_native_id()
attempt("own_comm", lambda: open(f"/proc/self/task/{tid}/comm", "w").write("kprof-target"))
ratio = open("/proc/sys/vm/overcommit_ratio").read()  # written back unchanged, if ever allowed
attempt("sysctl", lambda: open("/proc/sys/vm/overcommit_ratio", "w").write(ratio))
# every other file at /proc's top that its owner may write (sysrq-trigger, mtrr...): opened, never written
top = set()
for name in os.listdir("/proc"):
    path = "/proc/" + name
    if name.isdigit() or os.path.islink(path) or not os.path.isfile(path) or not os.stat(path).st_mode & 0o200:
        continue
    try:
        os.close(os.open(path, os.O_WRONLY))
        top.add("done")
    except OSError as e:
        top.add(errno.errorcode.get(e.errno, str(e.errno)))
print("TARGET top_files", ",".join(sorted(top)) or "none", flush=True)
attempt("server_oom", lambda: open(f"/proc/{server}/oom_score_adj", "w").close())
print("TARGET server_listed", str(server) in os.listdir("/proc"), "ppid", os.getppid(), flush=True)
"""


def _lines(out: str, who: str) -> dict[str, str]:
    return {ln.split()[1]: ln.split()[2] for ln in out.splitlines() if ln.startswith(who + " ")}


def test_policies_behind_a_profiler_grant_its_report_and_proc_but_no_tcp_or_shm(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox.policy, "_commands_network", False)
    ws, scratch = tmp_path / "ws", tmp_path / "kprof-run-x"
    (ws / "out").mkdir(parents=True)
    scratch.mkdir()
    prefix = ["/usr/local/cuda/bin/ncu", "--clock-control", "base", "--export", str(scratch / "profile")]
    scope = KernelScope(ws, ws / "out")
    k = sandbox.kernel_policy(scope, tmp_path / "jobs", prefix)
    c = sandbox.command_policy(ws, ws, ws / "out" / "c", tmp_path / "tmp", prefix, out_root=ws / "out")
    for p in (k, c):
        assert p.outputs == [str(scratch)] and str(scratch) not in p.write and p.proc_write
        assert not p.network and "/dev/shm" not in p.write and "/proc" not in p.write
    assert c.isolate and not k.isolate and k.private_proc
    plain_k = sandbox.kernel_policy(scope, tmp_path / "jobs")
    plain_c = sandbox.command_policy(ws, ws, ws / "out" / "c", tmp_path / "tmp", out_root=ws / "out")
    assert not (plain_k.proc_write or plain_c.proc_write or plain_k.outputs or plain_c.outputs)
    assert Policy.from_json(c.to_json()) == c
    # the operator's --commands-network reaches a command behind a profiler, never a kernel child
    monkeypatch.setattr(sandbox.policy, "_commands_network", True)
    assert sandbox.command_policy(ws, ws, ws / "o", tmp_path / "t", prefix, out_root=ws / "out").network
    assert not sandbox.kernel_policy(scope, tmp_path / "jobs", prefix).network


def test_a_report_directory_is_granted_only_where_it_is_a_run_of_its_own(tmp_path):
    ws, scratch = tmp_path / "ws", tmp_path / "scratch"
    (ws / "sub").mkdir(parents=True)
    scratch.mkdir()
    (tmp_path / "link").symlink_to(scratch)
    nsys = ["nsys", "profile", "-t", "cuda", "-o"]
    assert profiler_outputs([*nsys, str(scratch / "timeline")], (ws,)) == [str(scratch)]
    assert profiler_outputs(["ncu", f"--export={scratch / 'p'}"], (ws,)) == [str(scratch)]
    for base in ("/x", "/tmp/x", str(Path.home() / "x"), str(ws / "x"), str(ws / "sub" / ".." / "x")):
        assert profiler_outputs([*nsys, base], (ws,)) == [], base
    for base in (str(tmp_path / "link" / "x"), str(tmp_path / "missing" / "x"), "relative/x"):
        assert profiler_outputs([*nsys, base], (ws,)) == [], base
    assert profiler_outputs(None) == [] and profiler_outputs(["ncu", "-o"]) == []
    # the directory holding the workspace is not granted either
    assert profiler_outputs([*nsys, str(ws / "x")], (ws / "sub",)) == []


def test_proc_write_is_granted_only_where_it_is_safe():
    p = Policy(proc_write=True)
    write = READ | WRITE_FILE | TRUNCATE
    assert proc_rights(p, View(proc_locked=True, own_net=True), 0) == (write, None)
    # Another user: the machine's /proc, where the user's other processes are (the server's: P9-1).
    for view in (View(), View(proc_locked=True, own_net=True)):
        rights, note = proc_rights(p, view, 1000)
        assert rights == READ and "another user than root" in note and "--commands-network" not in note
    for view in (View(), View(own_net=True), View(proc_locked=True)):
        rights, note = proc_rights(p, view, 0)
        assert rights == READ and "not writable behind the profiler" in note
    assert "--commands-network" in proc_rights(p, View(proc_locked=True), 0)[1]
    assert proc_rights(Policy(), View(proc_locked=True, own_net=True), 0) == (READ, None)
    assert not OUTPUT_RIGHTS & (sandbox.MAKE_SYM | sandbox.MAKE_FIFO | sandbox.MAKE_SOCK | sandbox.REFER)


def _run(tmp_path: Path, policy: Policy, outside: Path) -> subprocess.CompletedProcess:
    (tmp_path / "fakeprof.py").write_text(FAKEPROF)
    (tmp_path / "target.py").write_text(TARGET)
    pf = tmp_path / "policy.json"
    pf.write_text(policy.to_json())
    argv = [sys.executable, str(tmp_path / "fakeprof.py"), "--export", str(tmp_path / "scratch" / "profile")]
    argv += [str(outside), sys.executable, str(tmp_path / "target.py"), str(os.getpid())]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(sandbox.wrap(pf, argv), env=env, capture_output=True, text=True, timeout=60)


@needs_landlock
@root_only
@pytest.mark.parametrize("who", ["kernel", "command"])
def test_behind_a_profiler_the_target_writes_its_own_proc_and_nothing_of_the_system(
    tmp_path, who, monkeypatch
):
    """As root: the profiler's child writes its own /proc/<pid> (another pid than the confined process);
    /proc/sys and every other file at /proc's top are read-only (EROFS), the server is not there; the profiler
    writes its report and nothing outside."""
    monkeypatch.setattr(sandbox.policy, "_commands_network", False)
    scratch, outside = tmp_path / "scratch", tmp_path / "outside"
    (tmp_path / "out").mkdir()
    scratch.mkdir()
    prefix = ["ncu", "--export", str(scratch / "profile")]
    if who == "kernel":
        policy = sandbox.kernel_policy(KernelScope(tmp_path, tmp_path / "out"), tmp_path / "jobs", prefix)
    else:
        policy = sandbox.command_policy(
            tmp_path, tmp_path / "out" / "c", tmp_path / "out" / "r", tmp_path / "t", prefix
        )
    cp = _run(tmp_path, policy, outside)
    got = _lines(cp.stdout, "TARGET")
    assert cp.returncode == 0 and got["own_comm"] == "done", cp.stdout + cp.stderr
    assert got["sysctl"] == got["top_files"] == "EROFS", got
    assert got["server_oom"] in ("ENOENT", "EPERM") and got["server_listed"] == "False", got
    assert _lines(cp.stdout, "PROFILER")["outside"] == "PermissionError" and not outside.exists()
    assert (scratch / "profile.rep").read_text() == "report"
    assert "not writable behind the profiler" not in cp.stderr


@needs_landlock
@root_only
def test_without_proc_write_or_with_the_machines_network_the_profilers_child_may_not_write_proc(tmp_path):
    """What the grant is for: without it the profiler's child cannot write its own /proc/<pid>; as root
    in the machine's network namespace (``/proc/<pid>/net`` would be the machine's) it is not made."""
    (tmp_path / "out").mkdir()
    (tmp_path / "scratch").mkdir()
    prefix = ["ncu", "--export", str(tmp_path / "scratch" / "profile")]
    base = sandbox.kernel_policy(KernelScope(tmp_path, tmp_path / "out"), tmp_path / "jobs", prefix)
    for change in ({"proc_write": False}, {"network": True}):
        policy = Policy.from_json(base.to_json())
        for k, v in change.items():
            setattr(policy, k, v)
        cp = _run(tmp_path, policy, tmp_path / "outside")
        got = _lines(cp.stdout, "TARGET")
        assert got["own_comm"] == "EACCES", (change, cp.stdout, cp.stderr)
        assert got["sysctl"] in ("EACCES", "EROFS") and got["top_files"] in ("EACCES", "EROFS"), got
        assert ("not writable behind the profiler" in cp.stderr) == ("network" in change), cp.stderr


@needs_landlock
def test_a_report_directory_takes_files_and_directories_but_no_link_fifo_or_socket(tmp_path):
    out = tmp_path / "scratch"
    out.mkdir()
    policy = Policy(
        read=[str(tmp_path), "/usr", "/lib", "/lib64", "/etc", sys.prefix, sys.base_prefix],
        outputs=[str(out)],
    )
    policy.read += [p for p in sys.path if p.startswith("/")]
    pf = tmp_path / "policy.json"
    pf.write_text(policy.to_json())
    code = textwrap.dedent(
        f"""
        import os, socket
        d = {str(out)!r}
        def attempt(name, f):
            try:
                f()
                print(name, "done")
            except OSError as e:
                print(name, type(e).__name__)
        attempt("file", lambda: open(d + "/r.rep", "w").write("x"))
        attempt("rename", lambda: os.rename(d + "/r.rep", d + "/s.rep"))
        attempt("dir", lambda: os.mkdir(d + "/sub"))
        attempt("link", lambda: os.symlink("/etc/passwd", d + "/timeline.sqlite"))
        attempt("fifo", lambda: os.mkfifo(d + "/fifo"))
        attempt("sock", lambda: socket.socket(socket.AF_UNIX).bind(d + "/sock"))
        attempt("hardlink", lambda: os.link(d + "/s.rep", d + "/t.rep"))
        """
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cp = subprocess.run(
        sandbox.wrap(pf, [sys.executable, "-c", code]), env=env, capture_output=True, text=True
    )
    got = dict(ln.split() for ln in cp.stdout.splitlines())
    assert got == {
        "file": "done",
        "rename": "done",
        "dir": "done",
        "link": "PermissionError",
        "fifo": "PermissionError",
        "sock": "PermissionError",
        "hardlink": "done",
    }, cp.stdout + cp.stderr


@needs_landlock
def test_the_runner_confines_the_profiler_with_its_child(tmp_path, monkeypatch):
    """runner._run_once with a profiler prefix and a kernel scope: the supervisor is outermost, the
    profiler and its child inside the same confinement (neither writes outside; the report is written)."""
    ws, scratch = tmp_path / "ws", tmp_path / "scratch"
    (ws / "out").mkdir(parents=True)
    scratch.mkdir()
    ncu = ws / "ncu"  # a stand-in named as the profiler kprof confines with its target
    ncu.write_text(f"#!{sys.executable}\n" + FAKEPROF)
    ncu.chmod(0o755)
    outside = tmp_path / "outside.txt"
    child = "import sys\ntry:\n    open(sys.argv[1], 'w')\n    print('CHILD done')\nexcept OSError as e:\n    print('CHILD', type(e).__name__)\n"
    monkeypatch.setattr(runner, "child_command", lambda *a: [sys.executable, "-c", child, str(outside)])
    prefix = [str(ncu), "--export", str(scratch / "profile"), str(outside)]
    ended = runner._run_once(["run"], 60, prefix=prefix, scope=KernelScope(ws, ws / "out"))
    out = ended.out + ended.err
    assert ended.rc == 0 and "PROFILER outside PermissionError" in out and "CHILD PermissionError" in out, out
    assert (scratch / "profile.rep").read_text() == "report" and not outside.exists()


@needs_landlock
def test_nsys_is_confined_with_its_target_where_a_job_has_a_mount_namespace(tmp_path, monkeypatch):
    """On an H100 (docs/evidence/sandbox/nsys-confined-h100-2026-11-26.log, its last two calls) Nsight Systems
    ran confined with its target and recorded what an unconfined run records once the job had a /tmp of its
    own and the seccomp filter let its chmod through (refused, or made a no-op, it recorded nothing). Its
    policies: the kernel child confined with nsys (the report's directory, /proc, TCP in its own network
    namespace, /tmp covered, the chmod family allowed) and so a command (namespaces, no TCP out, no
    machine's /dev/shm); where a job can have no mount namespace (another user than root, a container
    without CAP_SYS_ADMIN) nsys stays outside (a kernel child unconfined, a command confined without
    namespaces, with TCP and /dev/shm)."""
    assert sandbox.policy.CONFINED_PROFILERS == ("ncu", "nsys")
    monkeypatch.setattr(sandbox.policy, "_commands_network", False)
    monkeypatch.setattr(sandbox.policy, "_own_mounts", True)
    ws, scratch = tmp_path / "ws", tmp_path / "kprof-run-x"
    (ws / "out").mkdir(parents=True)
    scratch.mkdir()
    scope = KernelScope(ws, ws / "out")
    nsys = ["/opt/nvidia/nsight-systems/bin/nsys", "profile", "-o", str(scratch / "timeline")]
    k = sandbox.kernel_confinement(scope, nsys)
    assert k.profiler_inside and k.policy_file is not None
    kp = Policy.from_json(k.policy_file.read_text())
    c = sandbox.command_policy(ws, ws, ws / "out" / "c", tmp_path / "t", nsys, out_root=ws / "out")
    for p in (kp, c):
        assert p.outputs == [str(scratch)] and p.proc_write and p.tcp_inside and p.tmp_mounts == ["/tmp"]
        assert p.chmod_allowed
        assert not p.network and "/dev/shm" not in p.write and not {"/tmp", "/proc"} & set(p.write)
    assert c.isolate and kp.private_proc and not kp.isolate
    monkeypatch.setattr(sandbox.policy, "_own_mounts", False)
    assert sandbox.kernel_confinement(scope, nsys) is None
    c = sandbox.command_policy(ws, ws, ws / "out" / "c", tmp_path / "t", nsys, out_root=ws / "out")
    assert (
        not c.isolate
        and c.network
        and "/dev/shm" in c.write
        and not (c.proc_write or c.outputs or c.tmp_mounts or c.chmod_allowed)
    )
    ncu = ["/usr/local/cuda/bin/ncu", "--export", str(tmp_path / "profile")]
    assert sandbox.kernel_confinement(scope, ncu).profiler_inside  # ncu needs no /tmp: inside regardless


def test_own_mounts_needs_root_and_a_mount_namespace(monkeypatch):
    import subprocess as sp

    monkeypatch.setattr(sandbox.policy, "_own_mounts", None)
    monkeypatch.setattr(sandbox.policy.os, "geteuid", lambda: 1000)
    assert sandbox.policy.own_mounts() is False  # another user: no namespace
    monkeypatch.setattr(sandbox.policy, "_own_mounts", None)
    monkeypatch.setattr(sandbox.policy.os, "geteuid", lambda: 0)
    monkeypatch.setattr(sp, "run", lambda *a, **k: sp.CompletedProcess(a, 1))  # unshare refused
    assert sandbox.policy.own_mounts() is False
    monkeypatch.setattr(sandbox.policy, "_own_mounts", None)
    monkeypatch.setattr(sp, "run", lambda *a, **k: sp.CompletedProcess(a, 0))
    assert sandbox.policy.own_mounts() is True


def test_only_nsys_talks_to_its_target_over_tcp(tmp_path):
    ws = tmp_path / "ws"
    (ws / "out").mkdir(parents=True)
    scope = KernelScope(ws, ws / "out")
    nsys = ["/opt/nvidia/nsight-systems/bin/nsys", "profile", "-o", str(tmp_path / "timeline")]
    ncu = ["/usr/local/cuda/bin/ncu", "--export", str(tmp_path / "profile")]
    assert sandbox.kernel_policy(scope, tmp_path / "j", nsys).tcp_inside
    assert not sandbox.kernel_policy(scope, tmp_path / "j", ncu).tcp_inside
    assert not sandbox.kernel_policy(scope, tmp_path / "j").tcp_inside
    assert sandbox.command_policy(
        ws, ws, ws / "o", tmp_path / "t", nsys, out_root=ws / "out", inside=True
    ).tcp_inside
    assert sandbox._handled_net(7, Policy(tcp_inside=True)) == 0  # the namespace bounds it, not Landlock


TCP_PROBE = """
import socket, sys
def attempt(name, f):
    try:
        f()
        print(name, "done", flush=True)
    except OSError as e:
        print(name, type(e).__name__, flush=True)
def inside():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    socket.create_connection(srv.getsockname(), timeout=2).close()
attempt("inside", inside)
attempt("host", lambda: socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close())
"""


@needs_landlock
@root_only
@pytest.mark.parametrize("who", ["kernel", "command"])
def test_behind_nsys_tcp_stays_inside_the_jobs_own_network_namespace(tmp_path, who, monkeypatch):
    """As root: a loopback TCP connection between the job's own processes works (nsys binds one); a
    listener of the machine's is out of reach."""
    monkeypatch.setattr(sandbox.policy, "_commands_network", False)
    (tmp_path / "out").mkdir()
    prefix = ["nsys", "profile", "-o", str(tmp_path / "timeline")]
    if who == "kernel":
        policy = sandbox.kernel_policy(KernelScope(tmp_path, tmp_path / "out"), tmp_path / "jobs", prefix)
    else:
        policy = sandbox.command_policy(
            tmp_path, tmp_path / "c", tmp_path / "out" / "r", tmp_path / "t", prefix, inside=True
        )
    pf = tmp_path / "policy.json"
    pf.write_text(policy.to_json())
    (tmp_path / "tcp.py").write_text(TCP_PROBE)
    import socket

    with socket.socket() as host:
        host.bind(("127.0.0.1", 0))
        host.listen()
        argv = [sys.executable, str(tmp_path / "tcp.py"), str(host.getsockname()[1])]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        cp = subprocess.run(sandbox.wrap(pf, argv), env=env, capture_output=True, text=True, timeout=60)
    got = dict(ln.split() for ln in cp.stdout.splitlines())
    assert got["inside"] == "done" and got["host"] == "ConnectionRefusedError", cp.stdout + cp.stderr


@needs_landlock
def test_the_no_tcp_layer_refuses_tcp_on_top_of_a_ruleset_that_allowed_it(tmp_path):
    code = "from kprof_mcp.sandbox import no_tcp_layer\nno_tcp_layer()\n" + TCP_PROBE
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cp = subprocess.run(
        [sys.executable, "-c", code, "9"], env=env, capture_output=True, text=True, timeout=60
    )
    got = dict(ln.split() for ln in cp.stdout.splitlines())
    assert got == {"inside": "PermissionError", "host": "PermissionError"}, cp.stdout + cp.stderr

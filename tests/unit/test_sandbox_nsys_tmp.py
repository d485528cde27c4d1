"""Issue 38: Nsight Systems confined with its target writes beneath the machine's /tmp whatever TMPDIR says
(/tmp/injection_config_*, /tmp/nsys-RunShellCommand-*: "Cannot create CUDA config file" otherwise,
docs/evidence/sandbox/nsys-confined-h100-2026-11-26.log). As root the job's mount namespace gets a tmpfs of
its own over /tmp, the policy's paths beneath it bound back (read-only where only read): the profiler writes
its files there, other jobs' files beneath the real /tmp are out of sight, nothing beneath a read-only path
becomes writable; without a mount namespace nothing (and a note). On the CPU, with /tmp stood in for by a
directory of the test's (the machine's /tmp is left alone) and a stand-in for the profiler."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kprof_mcp import runner, sandbox
from kprof_mcp.sandbox import seccomp
from kprof_mcp.sandbox.mounts import _shown_again, tmp_rights
from kprof_mcp.sandbox.policy import PROFILER_TMP, KernelScope, Policy

ROOT = Path(__file__).resolve().parents[2]
needs_landlock = pytest.mark.skipif(not sandbox.available(), reason="no Landlock (ABI 3+) on this kernel")
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="a mount namespace of its own needs root")
NSYS = "/opt/nvidia/nsight-systems/bin/nsys"

# What nsys does beneath /tmp, and what the job must not (argv[1]: the stand-in /tmp, argv[2]: its workspace).
WRITER = """
import os, sys
tmp, ws = sys.argv[1], sys.argv[2]
def attempt(name, f):
    try:
        f()
        print(name, "done", flush=True)
    except OSError as e:
        print(name, type(e).__name__, e.errno, flush=True)
attempt("config", lambda: open(tmp + "/injection_config_1234", "w").write("config"))
attempt("remove", lambda: os.remove(tmp + "/injection_config_1234"))
attempt("state", lambda: os.makedirs(tmp + "/nvidia/nsight_systems", exist_ok=True))
attempt("link", lambda: os.symlink("/etc/passwd", tmp + "/planted"))
attempt("fifo", lambda: os.mkfifo(tmp + "/fifo"))
attempt("ws_write", lambda: open(ws + "/planted.py", "w").write("x"))
attempt("out_write", lambda: open(ws + "/out/written", "w").write("x"))
try:
    print("listed", ",".join(sorted(os.listdir(tmp))) or "-", flush=True)
except OSError as e:
    print("listed", type(e).__name__, flush=True)
print("link_shown", os.path.exists(tmp + "/shortcut"), flush=True)
"""


def _got(out: str) -> dict[str, str]:
    return {ln.split()[0]: ln.split()[1] for ln in out.splitlines() if len(ln.split()) >= 2}


@pytest.fixture
def fake_tmp(tmp_path, monkeypatch):
    """The machine's /tmp stood in for by ``tmp_path/tmp``: another job's directory and a file there, a
    workspace beneath it (so that its paths are bound back), a link to /etc among the read paths."""
    tmp = tmp_path / "tmp"
    (tmp / "other-job").mkdir(parents=True)
    (tmp / "other-job" / "secret").write_text("another job's")
    (tmp / "host-file").write_text("the machine's")
    (tmp / "ws" / "out").mkdir(parents=True)
    (tmp / "ws" / "writer.py").write_text(WRITER)
    (tmp / "shortcut").symlink_to("/etc")
    monkeypatch.setitem(PROFILER_TMP, "nsys", str(tmp))
    monkeypatch.setattr(sandbox.policy, "_commands_network", False)
    return tmp


def test_policies_behind_nsys_cover_tmp_with_one_of_the_jobs_own(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox.policy, "_commands_network", False)
    assert PROFILER_TMP == {"nsys": "/tmp"}
    ws = tmp_path / "ws"
    (ws / "out").mkdir(parents=True)
    scope, jobs, private = KernelScope(ws, ws / "out"), tmp_path / "jobs", tmp_path / "t"
    nsys = [NSYS, "profile", "-o", str(tmp_path / "timeline")]
    k = sandbox.kernel_policy(scope, jobs, nsys)
    c = sandbox.command_policy(ws, ws, ws / "out" / "c", private, nsys, out_root=ws / "out", inside=True)
    for p in (k, c):
        assert p.tmp_mounts == ["/tmp"] and p.tcp_inside and p.proc_write
        assert not {"/tmp", "/"} & set(p.write)  # nothing of the machine's /tmp granted
        assert Policy.from_json(p.to_json()) == p
    ncu = ["/usr/local/cuda/bin/ncu", "--export", str(tmp_path / "profile")]
    assert (
        not sandbox.kernel_policy(scope, jobs, ncu).tmp_mounts
        and not sandbox.kernel_policy(scope, jobs).tmp_mounts
    )
    # nsys outside (no mount namespace for the job): the command has no cover, as before
    assert not sandbox.command_policy(
        ws, ws, ws / "o", private, nsys, out_root=ws / "out", inside=False
    ).tmp_mounts


def test_the_paths_shown_again_beneath_the_cover_keep_their_rights():
    p = Policy(
        read=["/t/ws", "/t/ws/out/x", "/t/site", "/t/jobs/r", "/usr", "/t"],
        write=["/t/ws/out", "/t/jobs", "/work/out"],
        outputs=["/t/run"],
    )
    assert _shown_again(p, "/t") == [
        ("/t/jobs", True),  # its read path beneath comes with it
        ("/t/run", True),
        ("/t/site", False),
        ("/t/ws", False),
        ("/t/ws/out", True),  # writable on top of a read-only one
    ]


def test_tmp_is_granted_only_on_a_tmpfs_of_the_jobs_own():
    p = Policy(tmp_mounts=["/tmp"])
    assert tmp_rights(p, True) == (["/tmp"], None)
    paths, note = tmp_rights(p, False)
    assert paths == [] and "/tmp not writable behind the profiler" in note
    assert tmp_rights(Policy(), False) == tmp_rights(Policy(), True) == ([], None)


def _run(tmp_path: Path, policy: Policy, fake: Path) -> subprocess.CompletedProcess:
    pf = tmp_path / "policy.json"
    pf.write_text(policy.to_json())
    argv = [sys.executable, str(fake / "ws" / "writer.py"), str(fake), str(fake / "ws")]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(sandbox.wrap(pf, argv), env=env, capture_output=True, text=True, timeout=60)


def _policy(who: str, fake: Path, tmp_path: Path) -> Policy:
    ws, prefix = fake / "ws", ["nsys", "profile", "-o", str(tmp_path / "timeline")]
    if who == "kernel":
        p = sandbox.kernel_policy(KernelScope(ws, ws / "out"), tmp_path / "jobs", prefix)
    else:
        (ws / "c").mkdir(exist_ok=True)
        p = sandbox.command_policy(
            ws, ws / "c", ws / "out", tmp_path / "t", prefix, out_root=ws / "out", inside=True
        )
    p.read.append(str(fake / "shortcut"))  # a link among its read paths: not shown
    return p


@needs_landlock
@root_only
@pytest.mark.parametrize("who", ["kernel", "command"])
def test_behind_nsys_the_job_has_a_tmp_of_its_own(tmp_path, who, fake_tmp):
    """As root: nsys's files land in the job's own tmpfs (gone with it), another job's files and the
    machine's are out of sight, the workspace beneath it stays read-only and its out/ writable, no link or
    FIFO is made there."""
    cp = _run(tmp_path, _policy(who, fake_tmp, tmp_path), fake_tmp)
    got = _got(cp.stdout)
    assert cp.returncode == 0 and got["config"] == got["remove"] == got["state"] == "done", (
        cp.stdout + cp.stderr
    )
    assert got["link"] == got["fifo"] == "PermissionError", got
    assert got["ws_write"] in ("OSError", "PermissionError") and got["out_write"] == "done", cp.stdout
    assert "30" in cp.stdout.split("ws_write", 1)[1].split("\n")[0]  # EROFS: the workspace bound read-only
    listed = set(got["listed"].split(","))
    assert {"ws", "nvidia"} <= listed and not {"other-job", "host-file", "shortcut"} & listed, listed
    assert got["link_shown"] == "False" and "not writable" not in cp.stderr
    assert sorted(os.listdir(fake_tmp)) == [
        "host-file",
        "other-job",
        "shortcut",
        "ws",
    ]  # the machine's untouched
    assert (fake_tmp / "ws" / "out" / "written").exists() and not (fake_tmp / "ws" / "planted.py").exists()


@needs_landlock
@root_only
def test_without_a_mount_namespace_or_the_cover_nothing_of_tmp_is_writable(tmp_path, fake_tmp):
    """What the cover is for: without the policy's tmp_mounts the write is refused (Landlock), and as root
    without a mount namespace nothing is granted there either, and the note says so."""
    base = _policy("kernel", fake_tmp, tmp_path)
    no_mount = Policy.from_json(base.to_json())
    no_mount.tmp_mounts = []
    no_ns = Policy.from_json(base.to_json())
    no_ns.private_proc = False  # no mount namespace: the machine's /tmp as root
    for label, policy, note in (("no mount", no_mount, False), ("no namespace", no_ns, True)):
        cp = _run(tmp_path, policy, fake_tmp)
        got = _got(cp.stdout)
        assert got["config"] == got["state"] == "PermissionError", (label, cp.stdout, cp.stderr)
        assert ("not writable behind the profiler" in cp.stderr) == note, (label, cp.stderr)
    assert sorted(os.listdir(fake_tmp)) == ["host-file", "other-job", "shortcut", "ws"]


# A stand-in nsys: ``nsys --export BASE OUTSIDE TMP ARGV...`` writes BASE.rep, its config beneath TMP,
# tries OUTSIDE, then runs ARGV as its child and exits as it did.
STAND_IN = """
import os, subprocess, sys
base, outside, tmp = sys.argv[2:5]
open(base + ".rep", "w").write("report")
for name, f in (("tmp", lambda: open(tmp + "/injection_config_1", "w").write("x")),
                ("outside", lambda: open(outside, "w").write("escaped"))):
    try:
        f()
        print("NSYS", name, "done", flush=True)
    except OSError as e:
        print("NSYS", name, type(e).__name__, flush=True)
sys.exit(subprocess.run(sys.argv[5:]).returncode)
"""


@needs_landlock
@root_only
def test_the_runner_confines_nsys_with_its_kernel_child(tmp_path, monkeypatch, fake_tmp):
    """With "nsys" in CONFINED_PROFILERS the runner wraps ``nsys ... child`` as a whole: the stand-in profiler writes its report and its
    config beneath /tmp (its own), neither it nor its child writes outside."""
    monkeypatch.setattr(sandbox.policy, "_own_mounts", True)
    monkeypatch.setattr(sandbox.policy, "CONFINED_PROFILERS", ("ncu", "nsys"))
    ws, scratch = tmp_path / "ws", tmp_path / "scratch"
    (ws / "out").mkdir(parents=True)
    scratch.mkdir()
    nsys = ws / "nsys"
    nsys.write_text(f"#!{sys.executable}\n" + STAND_IN)
    nsys.chmod(0o755)
    outside = tmp_path / "outside.txt"
    child = "import sys\ntry:\n    open(sys.argv[1], 'w')\n    print('CHILD done')\nexcept OSError as e:\n    print('CHILD', type(e).__name__)\n"
    monkeypatch.setattr(runner, "child_command", lambda *a: [sys.executable, "-c", child, str(outside)])
    prefix = [str(nsys), "--export", str(scratch / "profile"), str(outside), str(fake_tmp)]
    scope = KernelScope(ws, ws / "out")
    assert sandbox.kernel_confinement(scope, prefix).profiler_inside
    ended = runner._run_once(["run"], 60, prefix=prefix, scope=scope)
    out = ended.out + ended.err
    assert ended.rc == 0 and "NSYS outside PermissionError" in out and "CHILD PermissionError" in out, out
    assert "NSYS tmp done" in out and (scratch / "profile.rep").read_text() == "report", out
    assert not outside.exists() and sorted(os.listdir(fake_tmp)) == [
        "host-file",
        "other-job",
        "shortcut",
        "ws",
    ]


def test_the_filter_behind_nsys_lets_chmod_through_and_refuses_the_rest():
    for machine in ("x86_64", "aarch64"):
        prog = seccomp.program(machine, allow=seccomp.CHMOD)
        allow, deny = len(prog) - 2, len(prog) - 1
        assert prog[allow] == (0x06, 0, 0, 0x7FFF0000) and prog[deny] == (0x06, 0, 0, 0x00050000 | 1)
        _, calls = seccomp._ARCHES[machine]
        chmods = {calls[c] for c in seccomp.CHMOD if c in calls}
        jumps = [(i, x) for i, x in enumerate(prog) if x[0] == 0x15 and i > 1]
        assert chmods and not chmods & {x[3] for _, x in jumps}  # not named: they pass
        refused = set(calls.values()) - chmods | set(seccomp.IOCTLS.values())  # and the ioctl requests
        assert {x[3] for i, x in jumps if i + 1 + x[1] == deny} == refused
        assert seccomp.program(machine) == seccomp.program(machine, allow=())


METADATA = """
import os, sys
f = sys.argv[1]
for name, call in (("chmod", lambda: os.chmod(f, 0o777)), ("chown", lambda: os.chown(f, 0, 0)),
                   ("utime", lambda: os.utime(f, (0, 0)))):
    try:
        call()
        print(name, "done", flush=True)
    except OSError as e:
        print(name, type(e).__name__, flush=True)
"""


@needs_landlock
@pytest.mark.parametrize("allowed", [True, False])
def test_behind_nsys_a_chmod_passes_and_chown_utime_stay_refused(tmp_path, allowed):
    (tmp_path / "out").mkdir()
    f = tmp_path / "out" / "f"
    f.write_text("x")
    f.chmod(0o600)
    prefix = ["nsys", "profile", "-o", str(tmp_path / "timeline")]
    policy = sandbox.kernel_policy(KernelScope(tmp_path, tmp_path / "out"), tmp_path / "jobs", prefix)
    assert policy.chmod_allowed
    policy.chmod_allowed = allowed
    pf = tmp_path / "policy.json"
    pf.write_text(policy.to_json())
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    argv = [sys.executable, "-c", METADATA, str(f)]
    cp = subprocess.run(sandbox.wrap(pf, argv), env=env, capture_output=True, text=True, timeout=60)
    assert _got(cp.stdout) == {
        "chmod": "done" if allowed else "PermissionError",
        "chown": "PermissionError",
        "utime": "PermissionError",
    }, cp.stdout + cp.stderr
    assert f.stat().st_mode & 0o777 == (0o777 if allowed else 0o600)

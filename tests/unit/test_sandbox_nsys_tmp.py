"""Issue 38: Nsight Systems confined with its target must write beneath the machine's /tmp whatever TMPDIR
says ("Cannot create CUDA config file" otherwise: docs/evidence/sandbox/nsys-probe-h200-2026-11-26.log).
Its policies bind the job's own directory over /tmp/nvidia (root, in the job's mount namespace) and
grant nothing else of /tmp; another user than root gets /tmp/nvidia itself; root without a mount
namespace nothing (and a note). On the CPU, with the path beneath /tmp moved into the test's directory
(the machine's /tmp/nvidia is left alone) and a stand-in for the profiler."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kprof_mcp import runner, sandbox
from kprof_mcp.sandbox.__main__ import View, tmp_rights
from kprof_mcp.sandbox.policy import PROFILER_TMP, KernelScope, Policy

ROOT = Path(__file__).resolve().parents[2]
needs_landlock = pytest.mark.skipif(not sandbox.available(), reason="no Landlock (ABI 3+) on this kernel")
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="a mount namespace of its own needs root")
NSYS = "/opt/nvidia/nsight-systems/bin/nsys"

# What nsys does beneath /tmp (argv[1]: the path it writes, argv[2]: a sibling of it in the same /tmp).
WRITER = """
import os, sys
target, sibling = sys.argv[1], sys.argv[2]
def attempt(name, f):
    try:
        f()
        print(name, "done", flush=True)
    except OSError as e:
        print(name, type(e).__name__, flush=True)
def state():
    os.makedirs(target + "/nsight_systems/streams", exist_ok=True)
    open(target + "/nsight_systems/cuda.cfg", "w").write("config")
attempt("state", state)
attempt("sibling", lambda: open(sibling + "/planted", "w").write("x"))
print("host_marker", os.path.exists(target + "/host-marker"), flush=True)
"""


def _got(out: str) -> dict[str, str]:
    return dict(ln.split()[:2] for ln in out.splitlines() if len(ln.split()) >= 2)


@pytest.fixture
def fake_tmp(tmp_path, monkeypatch):
    """The machine's /tmp stood in for by ``tmp_path/tmp`` (its /tmp/nvidia holds another run's file)."""
    tmp = tmp_path / "tmp"
    (tmp / "nvidia").mkdir(parents=True)
    (tmp / "nvidia" / "host-marker").write_text("another run's")
    (tmp / "other-job").mkdir()
    monkeypatch.setitem(PROFILER_TMP, "nsys", str(tmp / "nvidia"))
    monkeypatch.setattr(sandbox.policy, "_commands_network", False)
    return tmp


def test_policies_behind_nsys_bind_a_directory_of_the_jobs_own_over_tmp_nvidia(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox.policy, "_commands_network", False)
    assert PROFILER_TMP == {"nsys": "/tmp/nvidia"}
    ws = tmp_path / "ws"
    (ws / "out").mkdir(parents=True)
    scope, jobs, private = KernelScope(ws, ws / "out"), tmp_path / "jobs", tmp_path / "t"
    nsys = [NSYS, "profile", "-o", str(tmp_path / "timeline")]
    k = sandbox.kernel_policy(scope, jobs, nsys)
    c = sandbox.command_policy(ws, ws, ws / "out" / "c", private, nsys, out_root=ws / "out", inside=True)
    assert k.tmp_mounts == {"/tmp/nvidia": str(jobs / "nvidia")}
    assert c.tmp_mounts == {"/tmp/nvidia": str(private / "nvidia")}
    for p in (k, c):
        assert list(p.tmp_mounts.values())[0] in p.write and p.tcp_inside
        assert not {"/tmp", "/tmp/nvidia", "/"} & set(p.write)
    assert Policy.from_json(c.to_json()) == c and Policy.from_json(k.to_json()) == k
    ncu = ["/usr/local/cuda/bin/ncu", "--export", str(tmp_path / "profile")]
    assert (
        not sandbox.kernel_policy(scope, jobs, ncu).tmp_mounts
        and not sandbox.kernel_policy(scope, jobs).tmp_mounts
    )
    # nsys outside (not in CONFINED_PROFILERS): the command has no mount, as before
    assert not sandbox.command_policy(
        ws, ws, ws / "o", private, nsys, out_root=ws / "out", inside=False
    ).tmp_mounts


def test_tmp_nvidia_is_granted_as_bound_for_root_as_itself_for_another_user_else_not():
    p = Policy(tmp_mounts={"/tmp/nvidia": "/tmp/kprof-x/nvidia"})
    assert tmp_rights(p, View(own_tmp=True), 0) == ([], None)  # its own directory, granted by the rules
    assert tmp_rights(p, View(), 1000) == (["/tmp/nvidia"], None)  # shared with the user's other runs
    paths, note = tmp_rights(p, View(), 0)
    assert paths == [] and "/tmp/nvidia not writable behind the profiler" in note
    assert tmp_rights(Policy(), View(), 0) == tmp_rights(Policy(), View(), 1000) == ([], None)


def _run(tmp_path: Path, policy: Policy, fake: Path) -> subprocess.CompletedProcess:
    pf = tmp_path / "policy.json"
    pf.write_text(policy.to_json())
    (tmp_path / "writer.py").write_text(WRITER)
    argv = [sys.executable, str(tmp_path / "writer.py"), str(fake / "nvidia"), str(fake / "other-job")]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(sandbox.wrap(pf, argv), env=env, capture_output=True, text=True, timeout=60)


def _policy(who: str, tmp_path: Path) -> Policy:
    (tmp_path / "out").mkdir(exist_ok=True)
    prefix = ["nsys", "profile", "-o", str(tmp_path / "timeline")]
    if who == "kernel":
        return sandbox.kernel_policy(KernelScope(tmp_path, tmp_path / "out"), tmp_path / "jobs", prefix)
    return sandbox.command_policy(
        tmp_path, tmp_path / "c", tmp_path / "out" / "r", tmp_path / "t", prefix, inside=True
    )


@needs_landlock
@root_only
@pytest.mark.parametrize("who", ["kernel", "command"])
def test_behind_nsys_the_job_writes_its_own_tmp_nvidia_and_nothing_else_of_tmp(tmp_path, who, fake_tmp):
    """As root: what the job writes at /tmp/nvidia lands in its own directory (gone with it), another
    run's files there are out of sight, a sibling directory in /tmp is refused."""
    policy = _policy(who, tmp_path)
    cp = _run(tmp_path, policy, fake_tmp)
    got = _got(cp.stdout)
    assert cp.returncode == 0 and got["state"] == "done", cp.stdout + cp.stderr
    assert got["sibling"] == "PermissionError" and got["host_marker"] == "False", got
    own = Path(policy.tmp_mounts[str(fake_tmp / "nvidia")])
    assert (own / "nsight_systems" / "cuda.cfg").read_text() == "config"
    assert sorted(os.listdir(fake_tmp / "nvidia")) == ["host-marker"]  # the machine's untouched
    assert not (fake_tmp / "other-job" / "planted").exists() and "not writable" not in cp.stderr


@needs_landlock
@root_only
def test_without_the_mount_or_with_a_planted_link_tmp_nvidia_is_not_writable(tmp_path, fake_tmp):
    """What the mount is for: without the policy's tmp_mounts the write is refused; a link planted at
    the job's own directory (a kernel child writes the jobs' directory) is neither bound nor granted;
    root without a mount namespace gets nothing, and the note says so."""
    base = _policy("kernel", tmp_path)
    own = Path(base.tmp_mounts[str(fake_tmp / "nvidia")])
    no_mount = Policy.from_json(base.to_json())
    no_mount.tmp_mounts = {}
    no_ns = Policy.from_json(base.to_json())
    no_ns.private_proc = False  # no mount namespace: the machine's /tmp/nvidia as root
    for label, policy, note in (("no mount", no_mount, False), ("no namespace", no_ns, True)):
        cp = _run(tmp_path, policy, fake_tmp)
        assert _got(cp.stdout)["state"] == "PermissionError", (label, cp.stdout, cp.stderr)
        assert ("not writable behind the profiler" in cp.stderr) == note, (label, cp.stderr)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    own.rmdir()  # made by the supervisor for the run without a namespace (empty: nothing was granted)
    own.symlink_to(elsewhere)
    cp = _run(tmp_path, base, fake_tmp)
    assert _got(cp.stdout)["state"] == "PermissionError" and "not writable" in cp.stderr, (
        cp.stdout + cp.stderr
    )
    assert os.listdir(elsewhere) == [] and sorted(os.listdir(fake_tmp / "nvidia")) == ["host-marker"]


# A stand-in nsys: ``nsys --export BASE OUTSIDE TMP_NVIDIA ARGV...`` writes BASE.rep, its state beneath
# TMP_NVIDIA, tries OUTSIDE, then runs ARGV as its child and exits as it did.
STAND_IN = """
import os, subprocess, sys
base, outside, state = sys.argv[2:5]
open(base + ".rep", "w").write("report")
for name, f in (("tmp", lambda: os.makedirs(state + "/nsight_systems", exist_ok=True)),
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
def test_once_nsys_is_confined_the_runner_confines_it_with_its_kernel_child(tmp_path, monkeypatch, fake_tmp):
    """With "nsys" in CONFINED_PROFILERS the runner wraps ``nsys ... child`` as a whole: the stand-in
    profiler writes its report and /tmp/nvidia (its own), neither it nor its child writes outside."""
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
    prefix = [str(nsys), "--export", str(scratch / "profile"), str(outside), str(fake_tmp / "nvidia")]
    scope = KernelScope(ws, ws / "out")
    assert sandbox.kernel_confinement(scope, prefix).profiler_inside
    ended = runner._run_once(["run"], 60, prefix=prefix, scope=scope)
    out = ended.out + ended.err
    assert ended.rc == 0 and "NSYS outside PermissionError" in out and "CHILD PermissionError" in out, out
    assert "NSYS tmp done" in out and (scratch / "profile.rep").read_text() == "report", out
    assert not outside.exists() and sorted(os.listdir(fake_tmp / "nvidia")) == ["host-marker"]

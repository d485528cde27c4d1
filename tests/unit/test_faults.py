"""Fault-injection suite (CPU): deliberately broken kernel packages, each answered with a clear
error, nothing left that looks like a finished profile, and the engine still working after.

The broken packages are tests/fixtures/user_kernels/scale.py with another MODE (see its run()).
CUDA-only faults (a real illegal memory access, real GPU OOM) run on the H100 with
docs/evidence/gpu-reliability/device_reliability.py; here "illegal" is the CPU stand-in that
raises CUDA's error text.
"""

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import process_gone as gone
from conftest import write_scale

from kprof_mcp.engine import Config, Engine, KprofError
from kprof_mcp.runner import RunControl


def broken(workspace: Path, mode: str) -> str:
    return str(write_scale(workspace / "mykernels" / f"scale_{mode}.py", mode).relative_to(workspace))


def finished_profiles(workspace: Path) -> list[Path]:
    root = workspace / "out"
    return (
        [p.parent for p in root.rglob("result.json") if not p.parent.name.endswith(".partial")]
        if root.exists()
        else []
    )


@pytest.mark.parametrize(
    "mode,pattern",
    [
        ("oom", r"ran out of device memory .*Use smaller sizes"),
        ("illegal", r"CUDA error in the kernel .*illegal memory access.*server is unaffected"),
        ("abort", r"kernel process died with SIGABRT"),
        ("exit", r"kernel process failed \(exit code 7\)"),
    ],
)
def test_faults_get_a_clear_error_and_leave_no_profile(engine, workspace, mode, pattern):
    with pytest.raises(KprofError, match=pattern):
        engine.profile(broken(workspace, mode), None, {"n": 256}, mode="event")
    assert finished_profiles(workspace) == []
    assert engine.profile("vector_add", "v0", {"n": 256}, mode="event").profile_dir.is_dir()


@pytest.mark.parametrize("how", ["cancel", "timeout"])
def test_cancel_or_timeout_kills_the_whole_process_tree(workspace, tmp_path, monkeypatch, how):
    pidfile = workspace / "out" / "profiles" / "pids"  # a kernel child writes only there (issue 38)
    monkeypatch.setenv("KPROF_TEST_PIDFILE", str(pidfile))
    eng = Engine(Config(workspace=workspace, timeout_s=600))
    spec = eng.check_profile(
        broken(workspace, "orphan"), None, {"n": 256}, "event", timeout_s=600 if how == "cancel" else 8
    )
    control, errors = RunControl(), []

    def work():
        try:
            eng.run_checked(spec, None, control)
        except KprofError as e:
            errors.append(str(e))

    t = threading.Thread(target=work)
    t.start()
    deadline = time.time() + 60
    while not pidfile.exists() and time.time() < deadline:
        time.sleep(0.1)
    worker_pid, grandchild = map(int, pidfile.read_text().split())
    assert not gone(worker_pid) and not gone(grandchild)
    t0 = time.time()
    if how == "cancel":
        control.cancel()
    t.join(60)
    assert not t.is_alive()
    if how == "cancel":
        assert time.time() - t0 < 5, "cancellation must act within seconds"
        assert errors and "cancelled; the kernel process tree was killed" in errors[0]
    else:
        assert errors and "did not finish within 8 s; the kernel process tree was killed" in errors[0]
    time.sleep(0.5)
    assert gone(worker_pid) and gone(grandchild), "no orphans may remain"
    assert finished_profiles(workspace) == []


def test_disk_full_while_writing_artifacts_leaves_only_partial(workspace):
    # RLIMIT_FSIZE makes the kernel refuse writes past 4 KiB (result.json is ~4.7 KB) with EFBIG: the same OSError path as a
    # full disk (ENOSPC) for every file the worker and the engine write.
    code = f"""
import resource, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
from kprof_mcp.engine import Config, Engine, KprofError
eng = Engine(Config(workspace={str(workspace)!r}, timeout_s=300))
try:
    eng.profile("vector_add", "v0", {{"n": 200000}}, mode="event")
    print("NO ERROR")
except KprofError as e:
    print("KPROF:", e)
"""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    cp = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    assert "KPROF:" in cp.stdout, cp.stdout + cp.stderr[-2000:]
    assert "File too large" in cp.stdout and ".partial" in cp.stdout, cp.stdout
    assert finished_profiles(workspace) == []
    assert list((workspace / "out").rglob("*.partial")), (
        "the incomplete artifacts stay, under a .partial name"
    )
    # with the limit gone, the same request works
    assert Engine(Config(workspace=workspace)).profile("vector_add", "v0", {"n": 200000}, mode="event")


def test_corrupt_params_or_result_files_get_clear_errors(engine, workspace):
    o = engine.profile("vector_add", "v0", {"n": 256}, mode="event")
    (o.profile_dir / "params.json").write_text("{not json")
    with pytest.raises(KprofError, match=r"params.json .*(corrupt|not valid|cannot be read)"):
        engine.read_params(str(o.profile_dir))
    (o.profile_dir / "result.json").write_text('{"kernel": 3}')
    with pytest.raises(KprofError, match=r"result.json .*(corrupt|not valid|cannot be read)"):
        engine.profile("vector_add", "v0", {"n": 256}, mode="event", baseline=str(o.profile_dir))


def _one_devlog_update(args):
    workspace, profile_dir, i = args
    eng = Engine(Config(workspace=Path(workspace)))
    eng.update_devlog("vector_add", profile_dir, [f"issue {i}"], [f"insight {i}"])
    return i


def test_fifty_concurrent_devlog_updates_lose_none(engine, workspace):
    from concurrent.futures import ProcessPoolExecutor

    o = engine.profile("vector_add", "v0", {"n": 256}, mode="event")
    with ProcessPoolExecutor(max_workers=10) as pool:
        done = list(
            pool.map(_one_devlog_update, [(str(workspace), str(o.profile_dir), i) for i in range(50)])
        )
    assert len(done) == 50
    log = (workspace / "docs" / "kernels" / "vector_add.md").read_text()
    assert log.count("### vector_add v0") == 50
    for i in range(50):
        assert f"- insight {i}\n" in log
    assert log.count("<!-- kprof-devlog") == 50 and all(
        json.loads(line.split("kprof-devlog", 1)[1].rsplit("-->", 1)[0])
        for line in log.splitlines()
        if "kprof-devlog" in line
    )


def test_two_kprof_processes_never_profile_on_one_device_at_once(workspace, tmp_path, monkeypatch):
    # Two job managers stand for two servers (or a server and the CLI): the device lock is a file lock,
    # so the second waits, says why, and runs after the first.
    from kprof_mcp.jobs import DONE, JobManager

    monkeypatch.setenv("KPROF_LOCK_DIR", str(tmp_path / "locks"))
    eng = Engine(Config(workspace=workspace, timeout_s=600, force_cpu=True))
    slow = broken(workspace, "slow")
    managers = [
        JobManager(lambda spec, progress, control: eng.run_checked(spec, progress, control), slots=[None])
        for _ in range(2)
    ]
    first = managers[0].submit(eng.check_profile(slow, None, {"n": 64}, "event"), "first")
    deadline = time.time() + 60
    while first.status != "running" and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    second = managers[1].submit(eng.check_profile(slow, None, {"n": 64}, "event"), "second")
    waited = False
    while not second.done.is_set() and time.time() < deadline + 60:
        if first.status == "running" and second.message.startswith("waiting for cpu"):
            waited = True
        time.sleep(0.05)
    assert first.done.wait(60) and second.done.wait(60)
    assert first.status == second.status == DONE, (first.error, second.error)
    assert waited and second.finished > first.finished

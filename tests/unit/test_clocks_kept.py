"""Issue 40: the SM clock kept locked between the jobs of a process with warm workers
(``clocks.hold(keep=True)``), on the CPU with the fake nvidia-smi of test_clocks: the first job
locks, the next reuses the lock without calling nvidia-smi, an idle period resets it, and so do a
failed job, a job that wants the clocks free, another process holding the device in between, the
engine's close and a kill -9 (through the marker, as before)."""

import os
import subprocess
import sys
import time

import pytest
from test_clocks import H100, smi  # noqa: F401  (the fixture)

from kprof_mcp import clocks
from kprof_mcp.locks import device_lock

NAME = "gpu-kept-test"


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    monkeypatch.setenv(clocks.KEEP_ENV, "30")
    yield
    clocks.release_kept(all_gpus=True)


def job(gpu="0", wanted=True, fail=False):
    with device_lock(NAME):
        with clocks.hold(gpu, H100, wanted, keep=True, lock_name=NAME) as st:
            if fail:
                raise RuntimeError("the job failed")
            return st


def test_the_lock_is_kept_for_the_next_job_and_reset_when_idle(smi, monkeypatch):  # noqa: F811
    first = job()
    assert first.locked_mhz == 1305 and not first.kept and "kept it locked between jobs" in first.note
    assert smi.calls() == ["-lgc 1305,1305 -i 0"] and clocks.read_marker("0")["pid"] == os.getpid()
    second = job()
    assert second.locked_mhz == 1305 and second.kept
    assert smi.calls() == ["-lgc 1305,1305 -i 0"]  # no nvidia-smi call for the second job
    monkeypatch.setenv(clocks.KEEP_ENV, "0.3")
    job()  # the idle period now 0.3 s
    deadline = time.monotonic() + 20
    while clocks.read_marker("0") is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert smi.calls() == ["-lgc 1305,1305 -i 0", "-rgc -i 0"] and clocks.read_marker("0") is None
    assert not job().kept  # locked again after the reset


def test_a_failed_job_and_a_free_clock_job_reset_at_once(smi):  # noqa: F811
    job()
    with pytest.raises(RuntimeError):
        job(fail=True)
    assert smi.calls() == ["-lgc 1305,1305 -i 0", "-rgc -i 0"] and clocks.read_marker("0") is None
    job()
    st = job(wanted=False)
    assert st.locked_mhz is None and smi.calls()[-1] == "-rgc -i 0" and clocks.read_marker("0") is None


def test_another_process_holding_the_device_in_between_means_a_new_lock(smi):  # noqa: F811
    job()
    code = f"from kprof_mcp.locks import device_lock\nwith device_lock({NAME!r}):\n    pass\n"
    subprocess.run([sys.executable, "-c", code], env=os.environ.copy(), check=True, timeout=60)
    st = job()
    assert not st.kept and smi.calls().count("-lgc 1305,1305 -i 0") == 2


def test_close_and_exit_reset_a_kept_lock_and_kill_9_leaves_it_to_recover(smi, tmp_path):  # noqa: F811
    job()
    assert clocks.release_kept(all_gpus=True) == ["0"]
    assert smi.calls()[-1] == "-rgc -i 0" and clocks.read_marker("0") is None
    # A normal exit (atexit) resets it ...
    code = (
        "from kprof_mcp import clocks\nfrom kprof_mcp.locks import device_lock\n"
        f"with device_lock({NAME!r}):\n"
        f"    with clocks.hold('5', {H100!r}, True, keep=True, lock_name={NAME!r}):\n        pass\n"
    )
    subprocess.run([sys.executable, "-c", code], env=os.environ.copy(), check=True, timeout=60)
    assert smi.calls()[-2:] == ["-lgc 1305,1305 -i 5", "-rgc -i 5"] and clocks.read_marker("5") is None
    # ... a kill -9 leaves the marker, and the next process's recover() resets it.
    kill = code.replace("pass\n", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)\n")
    kill = kill.replace("pass", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    subprocess.run([sys.executable, "-c", kill], env=os.environ.copy(), timeout=60)
    assert clocks.read_marker("5") is not None
    assert any("GPU 5" in n for n in clocks.recover()) and clocks.read_marker("5") is None

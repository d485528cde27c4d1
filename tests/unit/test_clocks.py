"""The clock protocol (kprof_mcp.clocks) on the CPU with a fake nvidia-smi on PATH: the lock is taken
at the device's sustained clock and reset on every way out of the block, a refused lock leaves the
clocks free and says why, a process that died holding a lock has its GPU reset by the next one, and
the child reads the lock into params.json."""

import os
import subprocess
import sys

import pytest

from kprof_mcp import clocks

FAKE = """#!/bin/sh
echo "$@" >> "{log}"
case "$*" in *-lgc*) [ -f "{refuse}" ] && {{ echo "Insufficient Permissions" >&2; exit 4; }} ;; esac
echo "All done."
"""


@pytest.fixture
def smi(tmp_path, monkeypatch):
    """A fake nvidia-smi that logs its arguments; touch ``refuse`` to make -lgc fail."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    log, refuse = tmp_path / "smi.log", tmp_path / "refuse"
    exe = bin_ / "nvidia-smi"
    exe.write_text(FAKE.format(log=log, refuse=refuse))
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(clocks.LOCK_ENV, raising=False)

    class S:
        def calls(self):
            return log.read_text().splitlines() if log.exists() else []

        def refuse(self):
            refuse.write_text("")

    return S()


H100 = "NVIDIA H100 80GB HBM3"


def test_locked_at_the_sustained_clock_and_reset_after(smi):
    with clocks.hold("0", H100, True) as st:
        assert st.locked_mhz == 1305 and "locked the SM clock at 1305 MHz" in st.note
        assert clocks.read_marker("0")["mhz"] == 1305  # what the child records in params.json
        assert smi.calls() == ["-lgc 1305,1305 -i 0"]
    assert smi.calls() == ["-lgc 1305,1305 -i 0", "-rgc -i 0"]
    assert clocks.read_marker("0") is None


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_reset_on_failure_cancellation_and_time_out(smi, exc):
    with pytest.raises(exc):
        with clocks.hold("1", H100, True):
            raise exc("the run failed, was cancelled or ran out of time")
    assert smi.calls()[-1] == "-rgc -i 1" and clocks.read_marker("1") is None


def test_opt_out_unknown_device_and_refusal_leave_clocks_free_and_say_why(smi):
    with clocks.hold("0", H100, False) as st:
        assert st.locked_mhz is None and "clock_control='none'" in st.note
    with clocks.hold("0", "Some Future GPU", True) as st:
        assert st.locked_mhz is None and "no sustained clock is known for Some Future GPU" in st.note
    assert smi.calls() == []  # nothing touched
    smi.refuse()
    with clocks.hold("0", H100, True) as st:
        assert st.locked_mhz is None and "was refused (Insufficient Permissions)" in st.note
    assert (
        smi.calls() == ["-lgc 1305,1305 -i 0"] and clocks.read_marker("0") is None
    )  # no reset of a lock never taken


def test_the_operator_can_choose_the_clock(smi, monkeypatch):
    monkeypatch.setenv(clocks.LOCK_ENV, "1200")
    with clocks.hold(None, "Some Future GPU", True) as st:
        assert st.locked_mhz == 1200
    assert smi.calls() == ["-lgc 1200,1200", "-rgc"]


def test_a_lock_left_by_a_killed_process_is_reset_by_the_next(smi, tmp_path):
    code = (
        "import os, signal\nfrom kprof_mcp import clocks\n"
        "with clocks.hold('2', 'NVIDIA H100 80GB HBM3', True):\n    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], env=os.environ.copy(), timeout=60)
    assert r.returncode == -9
    assert clocks.read_marker("2")["mhz"] == 1305  # killed holding the lock: its marker stays
    assert smi.calls() == ["-lgc 1305,1305 -i 2"]
    notes = clocks.recover()
    assert len(notes) == 1 and "GPU 2" in notes[0] and "clocks reset" in notes[0]
    assert smi.calls()[-1] == "-rgc -i 2" and clocks.read_marker("2") is None
    # A live holder's lock is left alone.
    with clocks.hold("3", H100, True):
        assert clocks.recover() == [] and clocks.read_marker("3") is not None

"""tests/conftest.py's parallel run (issue 40): without -n the suite runs on its xdist workers, each with a
lock directory of its own under the session's, and a test marked ``alone`` runs while no other test of the
session runs. Checked on a small suite with this conftest, in a session of its own."""

import itertools
import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT, WORKERS

pytest.importorskip("xdist")

SUITE = """
import os, time, pytest

def rec(name):
    t0 = time.time()
    time.sleep(0.5)
    with open("log.txt", "a") as f:
        f.write(f"{name} {t0} {time.time()} {os.environ.get('PYTEST_XDIST_WORKER')} {os.environ['KPROF_LOCK_DIR']}\\n")

@pytest.mark.parametrize("i", range(6))
def test_shared(i):
    rec(f"s{i}")

@pytest.mark.alone
def test_alone():
    rec("alone")

@pytest.mark.parametrize("i", range(6))
def test_shared_after(i):
    rec(f"t{i}")
"""


@pytest.mark.skipif(os.path.exists("/dev/nvidiactl"), reason="one process on a machine with an NVIDIA GPU")
def test_workers_have_their_own_locks_and_an_alone_test_runs_alone(tmp_path):
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    alone: x\n")
    (tmp_path / "test_s.py").write_text(SUITE)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "KPROF_TEST_")) and k != "KPROF_LOCK_DIR"  # a session of its own
    }
    env["PYTHONPATH"] = str(ROOT)
    cp = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--dist", "load", "test_s.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert cp.returncode == 0, cp.stdout + cp.stderr
    rows = [ln.split() for ln in (tmp_path / "log.txt").read_text().splitlines()]
    assert len(rows) == 13
    assert {r[3] for r in rows} == {f"gw{i}" for i in range(WORKERS)}, rows  # every worker took tests
    dirs = {r[3]: r[4] for r in rows}
    assert len(set(dirs.values())) == WORKERS and all(d.endswith("/" + w) for w, d in dirs.items()), dirs
    (alone,) = [(float(r[1]), float(r[2])) for r in rows if r[0] == "alone"]
    spans = [(float(r[1]), float(r[2])) for r in rows if r[0] != "alone"]
    assert not [s for s in spans if s[0] < alone[1] and s[1] > alone[0]], (alone, spans)
    # the others do run at once (else the check above would hold trivially)
    assert any(a[0] < b[1] and b[0] < a[1] for a, b in itertools.combinations(spans, 2)), spans

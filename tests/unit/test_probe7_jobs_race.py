"""Issue 38, the seventh probe (docs/evidence/sandbox/probe-2026-11-26-seventh.md, P7-1): every confined kernel
child of a server may write the server's jobs directory, where the server makes each job's scratch directory and
then wrote ``request.json`` (and ``finish``'s three files) with ``Path.write_text``, which follows a link. A
planted package's racer put a ``request.json`` link to an outside file into each new job directory and, when it
won the race, the server overwrote that file with the request (root 3 of 15 jobs, uid 65534 3 of 15). The race
is made certain here: the link is planted in the job's directory as soon as it is made, before the write."""

import contextlib
import os
import tempfile
from pathlib import Path

import pytest

from kprof_mcp import child_io, runner


def test_a_planted_link_or_file_is_never_followed_or_overwritten(tmp_path):
    outside = tmp_path / "victim.txt"
    outside.write_text("keep me")
    job = tmp_path / "job"
    job.mkdir()
    os.symlink(outside, job / "request.json")
    (job / "ncu.log").write_text("planted")
    with pytest.raises(child_io.Planted, match="request.json was already in the job's new scratch"):
        child_io.write_inputs({job / "request.json": '{"x": 1}'})
    with pytest.raises(child_io.Planted):
        child_io.write_inputs({job / "ncu.log": "log"})
    assert outside.read_text() == "keep me" and (job / "ncu.log").read_text() == "planted"
    child_io.write_inputs({job / "profiler.json": "{}"})  # a new name is written, private to the server
    assert (job / "profiler.json").read_text() == "{}" and (job / "profiler.json").stat().st_mode & 0o077 == 0


@pytest.fixture
def racer(tmp_path, monkeypatch):
    """Each job directory the runner makes gets links, named as its input files, to an outside file."""
    outside = tmp_path / "victim.txt"
    outside.write_text("keep me")

    @contextlib.contextmanager
    def planted(prefix, dir=None):
        d = tempfile.mkdtemp(prefix=prefix, dir=tmp_path)
        for name in ("request.json", "profiler.json", "ncu.log"):
            os.symlink(outside, Path(d) / name)
        yield d

    monkeypatch.setattr(runner, "temp_dir", planted)
    return outside


def test_a_profile_whose_request_link_was_planted_fails_clearly_and_writes_nothing_outside(racer):
    with pytest.raises(runner.WorkerError, match="scratch directory was tampered with"):
        runner.run_profile('{"kernel": "x"}', 30.0)
    assert racer.read_text() == "keep me"


def test_reading_a_report_whose_inputs_were_planted_fails_clearly_and_writes_nothing_outside(racer, tmp_path):
    with pytest.raises(runner.WorkerError, match="scratch directory was tampered with"):
        runner.finish('{"kernel": "x"}', tmp_path, "ncu log", {"name": "ncu"}, 30.0)
    assert racer.read_text() == "keep me"

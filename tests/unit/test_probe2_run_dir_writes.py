"""Issue 38, the independent probe's class of row 1 beyond sweep/compare: the server writes
params.json, samples.csv, result.json (capture.artifacts) and the Nsight artifacts (ncu/…) into a run
directory that the confined child could write first. A link the child planted there, at a file or at
a subdirectory, is replaced or refused, never written through. On the CPU, with an H100 record."""

from __future__ import annotations

import os

import pytest
from conftest import h100_result

from kprof_mcp import safefs
from kprof_mcp.capture.artifacts import write_params_and_samples
from kprof_mcp.modes.nsight_artifacts import _write_nsight_artifacts


def _dirs(tmp_path):
    work, victim = tmp_path / "run.partial", tmp_path / "victim"
    work.mkdir()
    victim.mkdir()
    (victim / "keep.txt").write_text("keep")
    return work, victim


def test_params_samples_and_result_replace_planted_links(tmp_path):
    work, victim = _dirs(tmp_path)
    for name in ("params.json", "samples.csv", "result.json"):
        os.symlink(victim / f"pwn-{name}", work / name)
    os.symlink(victim / "keep.txt", work / ".params.json.tmp")  # a guessable temporary name: not used
    write_params_and_samples(work, h100_result("vector_add", "v0"), "all")
    assert (
        sorted(p.name for p in victim.iterdir()) == ["keep.txt"]
        and (victim / "keep.txt").read_text() == "keep"
    )
    for name in ("params.json", "samples.csv", "result.json"):
        assert (work / name).is_file() and not (work / name).is_symlink()
    assert (work / "samples.csv").read_text().startswith("stage,run,time_ns,method")


def test_nsight_artifacts_refuse_a_planted_directory_link(tmp_path):
    work, victim = _dirs(tmp_path)
    os.symlink(victim, work / "ncu")
    with pytest.raises(safefs.UnsafePath, match="symbolic link"):
        _write_nsight_artifacts(work, h100_result("vector_add", "v0"), {}, False, None)
    assert sorted(p.name for p in victim.iterdir()) == ["keep.txt"]

"""Issue 38, the fourth probe's P4-1 and P4-2: a job that writes its own record (a command writing the
record file, a package patching the child's JSON at import) named another workspace's finished profile as
its run directory, and the server wrote report.md and contract.md there, renamed it and returned its
contract. The engine now takes a record's directories only if this run created them under its output
root (kprof_mcp.child_io.run_dirs)."""

import os
import time
from pathlib import Path

import pytest

from kprof_mcp import child_io
from kprof_mcp.engine import KprofError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _victim(tmp_path: Path) -> Path:
    v = tmp_path / "other-ws" / "out" / "profiles" / "event" / "vector_add" / "n=1" / "20260101T000000Z-v1"
    v.mkdir(parents=True)
    (v / "result.json").write_text('{"secret": "the other workspace\'s profile"}')
    return v


def test_a_record_naming_another_workspaces_profile_is_refused_and_nothing_is_written_there(
    engine, workspace, tmp_path
):
    victim = _victim(tmp_path)
    before = sorted(p.name for p in victim.iterdir())
    # a user's package (the fault suite's scale.py) with the probe's record-forging import appended
    (workspace / "pkg_forge.py").write_text(
        (FIXTURES / "user_kernels" / "scale.py").read_text()
        + "\n\n"
        + (FIXTURES / "probe4" / "forge_patch.py").read_text().split('"""', 2)[2]
    )
    (workspace / "kprobe4-victim.txt").write_text(str(victim))
    with pytest.raises(KprofError, match="did not create"):
        engine.profile("pkg_forge.py", None, {"n": 256}, mode="event")
    assert victim.is_dir() and sorted(p.name for p in victim.iterdir()) == before
    assert not (victim.parent / "PWNED-by-kprobe4-package").exists()


def test_run_dirs_takes_only_a_fresh_partial_directory_under_the_output_root(tmp_path):
    root = tmp_path / "out"
    final = root / "profiles" / "event" / "k" / "p" / "20261126T000000Z-v1"
    work = final.with_name(final.name + ".partial")
    started = time.time()
    work.mkdir(parents=True)
    assert child_io.run_dirs(str(work), str(final), str(root), started) == (work, final)
    bad = [
        (str(final), str(final)),  # not <profile>.partial
        (str(work), str(final.with_name("other"))),  # not its sibling
        (str(tmp_path / "elsewhere.partial"), str(tmp_path / "elsewhere")),  # outside the root
    ]
    for w, p in bad:
        with pytest.raises(child_io.ForgedRecord):
            child_io.run_dirs(w, p, str(root), started)
    old = final.with_name("old.partial")
    old.mkdir()
    os.utime(old, (started - 3600, started - 3600))  # mtime only: the ctime says when it was made
    with pytest.raises(child_io.ForgedRecord, match="before this run"):
        child_io.run_dirs(str(old), str(final.with_name("old")), str(root), time.time() + 5)
    outside = tmp_path / "victim.partial"
    outside.mkdir()
    link = final.parent / "link.partial"
    link.symlink_to(outside)
    with pytest.raises(child_io.ForgedRecord, match="is a link"):
        child_io.run_dirs(str(link), str(final.parent / "link"), str(root), started)

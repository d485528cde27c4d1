"""The fourth sandbox probe's P4-7..P4-10 and P4-12 (issue 38, docs/evidence/sandbox/probe-2026-11-26-fourth.md):
a child's output read with a bound on the server's memory (its stdout in chunks, a line of no end
included; its stderr's first and last bytes), in a fresh process and in a warm worker; a job's
temporary directory removed without recursion; progress lines that are no finite number dropped.

Real children on the CPU (``python -m kprof_mcp.child describe`` of a package that prints at import,
as the probe's ws/pkg_bigout.py; a user's command through the engine). 100 MB of output is enough
to show the byte cap (the kept part is a few MB); the memory is checked by what was kept, not RSS.
"""

from __future__ import annotations

import logging
import math
import os
import tempfile
from pathlib import Path

import pytest
from conftest import write_scale

from kprof_mcp import outcap, removal, runner
from kprof_mcp.protocol import parse_progress
from kprof_mcp.warm import WorkerPool

MB = 100  # megabytes a package prints
BOUND = outcap.HEAD + outcap.TAIL + 64 * 1024  # what may be kept of one stream, a note included


def bigout_package(path: Path, fd: int, mb: int = MB, lines: bool = False) -> Path:
    """A package whose import writes ``mb`` MiB on ``fd`` (one line without a newline, or lines of
    1 MiB), as the probe's ws/pkg_bigout.py."""
    chunk = "b'B' * ((1 << 20) - 1) + b'\\n'" if lines else "b'B' * (1 << 20)"
    extra = f"\nimport os\n_chunk = {chunk}\nfor _ in range({mb}):\n    os.write({fd}, _chunk)\n"
    return write_scale(path, "ok", extra + f"os.write({fd}, b'\\nthe last line\\n')\n")


def assert_bounded(text: str, mb: int = MB) -> None:
    assert len(text.encode(errors="replace")) < BOUND, len(text)
    assert "of output left out" in text or "of this line left out" in text
    assert "the last line" in text  # the end is kept


@pytest.mark.parametrize("lines", [False, True], ids=["one-line", "lines-under-the-line-cap"])
def test_a_fresh_childs_stdout_is_kept_bounded_p4_7(tmp_path, lines):
    src = bigout_package(tmp_path / "pkg_bigout.py", 1, lines=lines)
    ended = runner._run_once(["describe", "--source", str(src)], 120)
    assert not ended.stopped
    assert_bounded(ended.out)
    assert ("MB of output left out" in ended.out) or ("MB of this line left out" in ended.out)


def test_a_fresh_childs_stderr_is_kept_bounded_p4_8(tmp_path):
    src = bigout_package(tmp_path / "pkg_bigout.py", 2)
    ended = runner._run_once(["describe", "--source", str(src)], 120)
    assert ended.rc == 0 and not ended.stopped
    assert_bounded(ended.err)
    assert "MB of output left out" in ended.err
    assert runner.describe(src)["name"] == "scale"  # and the package still loads


@pytest.mark.parametrize("fd", [1, 2], ids=["stdout", "stderr"])
def test_a_warm_workers_output_is_kept_bounded_and_the_worker_freed_p4_9(tmp_path, fd):
    src = bigout_package(tmp_path / "pkg_bigout.py", fd)
    pool = WorkerPool(runner.child_env, force_cpu=True)
    try:
        ended = pool.run(["describe", "--source", str(src)], 120, describe=True)
        assert ended is not None and ended.warm and not ended.stopped
        assert_bounded(ended.out if fd == 1 else ended.err)
        (w,) = pool._workers.values() or [None]
        if w is not None:  # still serving (it succeeded): its lock was released
            assert w.try_acquire()
            w.release()
        again = pool.run(["describe", "--source", str(src)], 120, describe=True)
        assert again is not None and not again.stopped  # the next command is served, not queued forever
    finally:
        pool.close()


def test_read_lines_cuts_a_line_without_end_in_chunks():
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # a writer of 8 MiB without a newline, then two lines
        os.close(r)
        for _ in range(8):
            os.write(w, b"A" * (1 << 20))
        os.write(w, b"\nok\nend")
        os._exit(0)
    os.close(w)
    got = list(outcap.lines(r, max_line=1 << 16))
    os.close(r)
    os.waitpid(pid, 0)
    assert [n for _, n in got] == [8 * (1 << 20) + 1, 3, 3]
    assert got[0][0].startswith("A" * 100) and "7.9 MB of this line left out" in got[0][0]
    assert len(got[0][0]) < (1 << 16) + 100
    assert [t for t, _ in got[1:]] == ["ok\n", "end"]


def test_kept_keeps_head_and_tail_and_counts_what_it_left_out():
    kept = outcap.Kept(head=100, tail=1000, max_lines=5)
    for i in range(1000):
        kept.add(f"line {i:04d}\n")
    text = kept.text()
    assert text.startswith("line 0000\n") and text.endswith("line 0999\n")
    assert "(985 lines)" in text and kept.lines_left_out == 985
    assert text.count("\n") == 10 + 1 + 5


# ----------------------------------------------------------------------------- P4-10


def nest(root: Path, depth: int) -> None:
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        with open(os.open("f", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as f:
            f.write("x")
        nfd = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    os.close(fd)


def test_remove_tree_is_iterative_follows_no_link_and_fixes_modes(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    top = tmp_path / "job"
    top.mkdir()
    nest(top, 2000)  # deeper than the recursion limit
    (top / "link").symlink_to(outside)
    (top / "dirlink").symlink_to(outside, target_is_directory=True)
    for mode in (0, 0o500):
        d = top / f"mode{mode:o}"
        (d / "sub").mkdir(parents=True)
        (d / "sub" / "f").write_text("x")
        d.chmod(mode)
    assert removal.remove_tree(top) == []
    assert not top.exists()
    assert (outside / "keep.txt").read_text() == "keep"


def test_a_removal_that_fails_is_a_warning_not_an_error(tmp_path, monkeypatch, caplog):
    real = os.rmdir

    def refuse(path, *a, **kw):
        if os.fspath(path) == "stuck":
            raise PermissionError(13, "Permission denied")
        return real(path, *a, **kw)

    monkeypatch.setattr(removal.os, "rmdir", refuse)
    with caplog.at_level(logging.WARNING, logger="kprof_mcp.server"):
        with removal.temp_dir("kprof-", dir=tmp_path) as d:
            (Path(d) / "a" / "stuck").mkdir(parents=True)
            (Path(d) / "b").mkdir()
    assert "could not be removed whole" in caplog.text and "stuck" in caplog.text
    assert os.listdir(tmp_path) == [Path(d).name] and not (Path(d) / "b").exists()


def test_a_command_that_nests_1500_directories_in_its_tmp_leaves_nothing_p4_10(tmp_path, monkeypatch):
    from kprof_mcp.engine import Config, Engine, KprofError

    systmp = tmp_path / "systmp"
    systmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(systmp))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "deep.py").write_text(
        (Path(__file__).resolve().parents[2] / "docs/evidence/sandbox/probe4/ws/deep.py").read_text()
    )
    cfg = Config.from_options(str(ws), force_cpu=True)
    cfg.warm = False
    engine = Engine(cfg)
    try:
        with pytest.raises(KprofError) as e:  # it records no range: an error, but not RecursionError's
            engine.profile_command(["python", "deep.py", "1500"], mode="event")
    finally:
        engine.close()
    assert "recursion" not in str(e.value).lower(), e.value
    assert not [
        p for p in systmp.iterdir() if p.name.startswith("kprof-") and not p.name.startswith("kprof-policies")
    ]


# ----------------------------------------------------------------------------- P4-12


def test_progress_that_is_no_finite_number_is_dropped_and_others_clamped_p4_12():
    line = '@@KPROF {"progress": %s, "message": "m"}\n'
    for bad in ("NaN", "Infinity", "-Infinity", '"0.5"', "null", "true", "[1]"):
        assert parse_progress(line % bad) is None, bad
    assert parse_progress(line % "1e308") == (1.0, "m")
    assert parse_progress(line % "-1") == (0.0, "m")
    assert parse_progress(line % "12345678901234567890") == (1.0, "m")
    assert parse_progress(line % "0.25") == (0.25, "m")
    ansi = '@@KPROF {"progress": 0.5, "message": "\\u001b[2J\\u001b[31mFAKE\\u001b[0m' + "M" * 10_000 + '"}'
    frac, msg = parse_progress(ansi)
    assert frac == 0.5 and "\x1b" not in msg and msg.startswith("[2J[31mFAKE") and len(msg) <= 500


def test_a_childs_progress_bomb_reaches_the_sink_only_as_finite_fractions(tmp_path):
    bomb = Path(__file__).resolve().parents[2] / "docs/evidence/sandbox/probe4/ws/progress_bomb.py"
    src = tmp_path / "pkg_bomb.py"
    src.write_text(bomb.read_text() + "\nKERNEL = None\n")
    got: list[tuple[float, str]] = []
    ended = runner._run_once(
        ["describe", "--source", str(src)], 120, on_progress=lambda f, m: got.append((f, m))
    )
    assert not ended.stopped
    assert got and all(isinstance(f, float) and math.isfinite(f) and 0 <= f <= 1 for f, _ in got)
    assert all(len(m) <= 500 and "\x1b" not in m for _, m in got)
    assert "kprobe4 NaN" not in {m for _, m in got} and "kprobe4 1e308" in {m for _, m in got}
    assert len(ended.out) < BOUND  # the 50 MB message line was cut, not kept


def test_read_file_keeps_both_ends_and_cuts_at_a_near_line_end(tmp_path):
    f = tmp_path / "err"
    f.write_bytes(b"first line\n" + b"E" * (1 << 20) + b"\nlast line\n")
    with open(f, "rb") as fh:
        whole = outcap.read_file(fh.fileno())
        text = outcap.read_file(fh.fileno(), head=100, tail=10_000)
        later = outcap.read_file(fh.fileno(), start=11, head=100, tail=10_000)
    assert whole == f.read_text()
    assert text.startswith("first line\n[kprof: … ") and "1,014.2 KB of output left out" in text
    assert text.endswith("E" * 9000 + "\nlast line\n")  # the tail is kept, not dropped to its one line end
    assert later.startswith("E" * 100 + "\n[kprof: … ")


def test_a_package_tree_nested_1500_deep_is_refused_not_a_recursion_error(tmp_path):
    from kprof_mcp import safefs

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    nest(tmp_path / "pkg", 1500)  # what a command may leave in its working directory
    with pytest.raises(safefs.UnsafePath, match="nested over 64 directories deep"):
        safefs.check_tree(tmp_path, "pkg")
    removal.remove_tree(tmp_path / "pkg" / "d")
    (tmp_path / "pkg" / "a" / "b").mkdir(parents=True)
    (tmp_path / "pkg" / "a" / "b" / "link").symlink_to("/etc")
    with pytest.raises(safefs.UnsafePath, match="symbolic link inside the package"):
        safefs.check_tree(tmp_path, "pkg")


def test_no_recursive_rmtree_of_a_directory_a_job_writes():
    """Every directory a job (or a rank, or a cluster job) can write into is removed by
    :func:`removal.remove_tree`: ``shutil.rmtree`` recurses once a level (P4-10's RecursionError);
    left: the sandbox's own private temporary directory, which no job writes."""
    root = Path(removal.__file__).resolve().parent
    found = sorted(
        f"{p.relative_to(root)}:{i}"
        for p in root.rglob("*.py")
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if "shutil.rmtree" in line and not line.lstrip().startswith("#")
    )
    left = [f for f in found if not f.startswith("removal.py:")]  # removal.py: its docstring
    assert [f.split(":")[0] for f in left] == ["sandbox/policy.py"], found
    line = (root / left[0].split(":")[0]).read_text().splitlines()[int(left[0].split(":")[1]) - 1]
    assert "atexit.register(shutil.rmtree, d, True)" in line, line  # the private directory of _private_dir

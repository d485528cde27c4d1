"""Issue 38, the independent probe (docs/evidence/sandbox/probe-2026-11-26-independent.md, rows 1-3a):
the server's sweep/compare code reads and writes the run directory that the confined child could
write. The child is stood in for by ``run_child`` returning a directory prepared as the probe's
package left it (links and FIFOs planted after it wrote its result); everything after that is the
server's real code path (engine/batch.py, store.finish_profile)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from conftest import h100_dir

from kprof_mcp.engine import KprofError, batch
from kprof_mcp.models import ProfileResult, SweepResult

SECRET = "victim-secret-7f3a\n"


def _sweep_json() -> str:
    p = ProfileResult.model_validate_json((h100_dir("vector_add", "v0") / "result.json").read_text())
    r = SweepResult(
        kernel="vector_add",
        param="n",
        values=[p.params["n"]],
        versions=["v0"],
        points=[p],
        device=p.device,
        created_at="x",
    )
    return r.model_dump_json()


def _layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    runs = tmp_path / "out" / "sweep"
    work = runs / "20261126T000000Z-sweep.partial"
    work.mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "secret.txt").write_text(SECRET)
    return work, runs / "20261126T000000Z-sweep", victim


def _stand_in(work: Path, final: Path, kw: dict):
    """run_child's return: its ``post`` (the run directory finished under the device's lock) run on the
    prepared directories, as run_child does."""
    post = kw.get("post")
    return work, final, post(work, final, None) if post is not None else None


def _child(monkeypatch, work: Path, final: Path) -> None:
    monkeypatch.setattr(batch, "run_child", lambda *a, **k: _stand_in(work, final, k))


def _in_time(fn, seconds: float = 20.0):
    """Run ``fn`` in a thread; fail (not hang) when it blocks, as a FIFO made it do."""
    box: dict = {}

    def go() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001
            box["error"] = e

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "the server blocked on a file the child planted"
    return box


def test_sweep_never_writes_through_links_the_child_planted(tmp_path, monkeypatch):
    work, final, victim = _layout(tmp_path)
    (work / "sweep.json").write_text(_sweep_json())
    os.symlink(victim / "pwn.csv", work / "sweep.csv")
    os.symlink(victim / "pwn.png", work / "sweep.png")
    _child(monkeypatch, work, final)
    out = batch.run_sweep(None, None)  # type: ignore[arg-type]
    assert sorted(p.name for p in victim.iterdir()) == ["secret.txt"]
    assert (final / "sweep.csv").is_file() and not (final / "sweep.csv").is_symlink()
    assert (final / "sweep.png").read_bytes()[:4] == b"\x89PNG" and out.png == (
        final / "sweep.png"
    ).read_bytes()
    assert "vector_add" in (final / "sweep.md").read_text()


@pytest.mark.parametrize("name, fn", [("sweep.json", batch.run_sweep), ("compare.json", batch.run_compare)])
def test_a_result_swapped_for_a_link_is_refused_and_not_quoted(tmp_path, monkeypatch, name, fn):
    work, final, victim = _layout(tmp_path)
    os.symlink(victim / "secret.txt", work / name)
    _child(monkeypatch, work, final)
    spec = type("S", (), {"arm_specs": [], "req": None})()
    with pytest.raises(KprofError) as e:
        fn(None, spec)
    assert "victim-secret" not in str(e.value) and "symbolic link" in str(e.value)


@pytest.mark.parametrize("name, fn", [("sweep.json", batch.run_sweep), ("compare.json", batch.run_compare)])
def test_a_result_made_a_fifo_does_not_hang_the_job(tmp_path, monkeypatch, name, fn):
    work, final, _ = _layout(tmp_path)
    os.mkfifo(work / name)
    _child(monkeypatch, work, final)
    spec = type("S", (), {"arm_specs": [], "req": None})()
    box = _in_time(lambda: fn(None, spec))
    assert isinstance(box.get("error"), KprofError) and "not a regular file" in str(box["error"])


def test_an_invalid_result_is_reported_without_its_content(tmp_path, monkeypatch):
    work, final, _ = _layout(tmp_path)
    (work / "compare.json").write_text('"ws2-secret-91bc"')
    _child(monkeypatch, work, final)
    spec = type("S", (), {"arm_specs": [], "req": None})()
    with pytest.raises(KprofError) as e:
        batch.run_compare(None, spec)  # type: ignore[arg-type]
    assert "ws2-secret" not in str(e.value) and "not valid" in str(e.value)


def test_the_childs_record_is_read_without_following_or_blocking(tmp_path):
    """The record (result.json) lies in the child's private tmp, which a confined command may write:
    a FIFO there blocked the server's read, a link to /dev/zero would fill its memory."""
    from kprof_mcp import child_io

    victim = tmp_path / "victim.json"
    victim.write_text('{"secret": "victim-secret-7f3a"}')
    os.mkfifo(tmp_path / "fifo.json")
    os.symlink(victim, tmp_path / "link.json")
    os.symlink("/dev/zero", tmp_path / "zero.json")
    (tmp_path / "ok.json").write_text('{"ok": true}')
    for name in ("fifo.json", "link.json", "zero.json", "missing.json"):
        box = _in_time(lambda name=name: child_io.read_record(tmp_path / name))
        got = box.get("value")
        assert "error" not in box, name
        # missing: None; refused (issue 38, fresh probe F3): an error record that says why, no content
        assert (got is None) == (name == "missing.json"), (name, got)
        assert got is None or (got["status"] == "error" and "victim-secret" not in got["message"]), got
    assert child_io.read_record(tmp_path / "ok.json") == {"ok": True}


def test_a_sweep_or_comparison_is_finished_under_the_device_lock(tmp_path, monkeypatch):
    """The sixth probe's P6-2: the run directory was finished after the device's lock was released, so a
    job of a second server on the same workspace ran meanwhile and swapped it for a link (sweep.md written
    outside). ``post`` now runs before the lock is let go."""
    from contextlib import contextmanager

    events: list[str] = []

    @contextmanager
    def lock(*a, **k):
        events.append("lock")
        yield
        events.append("unlock")

    @contextmanager
    def clocks(*a, **k):
        yield None

    monkeypatch.setattr(batch, "device_lock", lock)
    monkeypatch.setattr(batch, "held_clocks", clocks)
    monkeypatch.setattr(batch, "guard", lambda *a: None)
    monkeypatch.setattr(batch, "with_workers", lambda engine, control: control)
    monkeypatch.setattr(batch.runner, "run_profile", lambda *a, **k: events.append("child"))
    monkeypatch.setattr(batch, "checked_dirs", lambda *a: (tmp_path / "w", tmp_path / "f"))

    class Spec:
        cpu, timeout, req = (
            True,
            10.0,
            type("R", (), {"out_root": tmp_path, "model_dump_json": lambda self: "{}"})(),
        )

    out = batch.run_child(
        None, Spec(), "sweep", None, None, post=lambda w, f, a: events.append("post") or "done"
    )
    assert out[2] == "done" and events == ["lock", "child", "post", "unlock"]

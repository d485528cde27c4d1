"""Issue 38, the sixth probe (docs/evidence/sandbox/probe-2026-11-26-sixth.md): a job prints on the warm
worker's own pipe and writes its own record, so every marker and record field is checked for its shape.
P6-3: ``@@KPROF-READY [1]`` killed the worker's reader thread (device_info then a bare AttributeError);
P6-5: ``@@KPROF-DONE [1]`` made the call a bare error and skipped the worker's retirement; P6-6: a
description of another shape (``{"status": "ok", "kernel": 5}``) a bare ValidationError; P6-7: an error
record whose detail is no object a bare TypeError. Each planted package is the probe's own file."""

import shutil
from pathlib import Path

import pytest

from kprof_mcp import runner
from kprof_mcp.engine import Config, Engine, KprofError
from kprof_mcp.warm import Ended, _payload

PROBE = Path(__file__).resolve().parents[2] / "docs" / "evidence" / "sandbox" / "probe6"


def test_a_marker_payload_of_another_shape_is_nothing():
    assert _payload("[1]") == {} and _payload("5") == {} and _payload("{") == {}
    assert _payload('{"job": 3, "rc": 0}') == {"job": 3, "rc": 0}


@pytest.mark.parametrize("planted", ["imp_ready.py", "imp_done.py", "imp_desc.py"])
def test_a_package_printing_markers_or_a_description_of_its_own_gets_a_clear_error(tmp_path, planted):
    ws = tmp_path / "ws"
    (ws / "kernels").mkdir(parents=True)
    shutil.copy(PROBE / planted, ws / "kernels" / planted.replace("_", ""))
    e = Engine(Config(workspace=ws, timeout_s=120, force_cpu=True), eager_workers=True)
    try:
        name = "kernels/" + planted.replace("_", "")
        try:
            e.describe_kernel(name)
        except KprofError as err:  # a clear error is fine; a bare one (AttributeError, ...) is not
            assert "Traceback" not in str(err)
        status = e.pool.status()  # P6-3: the reader thread alive, the facts an object
        assert all(isinstance(w.get("ready_after_s", 0.0), float) for w in status["workers"])
        # the next profile of kprof's own kernel runs in a worker the planted job never touched
        out = e.profile("vector_add", "v0", {"n": 256}, mode="event")
        assert out.result.correctness["ok"]
    finally:
        e.close()


def test_an_error_record_of_another_shape_is_a_clear_error(monkeypatch):
    """P6-7: the record is the job's to write; each field of the expected type or dropped."""
    ended = Ended(stopped=None, rc=2, out="", err="", wall=0.1)
    monkeypatch.setattr(
        runner, "_run_recorded", lambda *a, **k: (ended, {"status": "error", "detail": 5, "kind": [1]})
    )
    with pytest.raises(runner.WorkerError) as info:
        runner.run_profile("{}", 10.0)
    assert info.value.kind == "crash" and "unknown error" in str(info.value)

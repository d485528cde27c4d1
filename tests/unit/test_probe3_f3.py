"""Issue 38, the fresh probe's F3: a run file planted under ``out/profiles/`` (a confined kernel
package's write area, or a cloned repository) must not take the server's memory, and a deeply nested
one must get a clear error, not "internal error … RecursionError". Through the engine's real readers
(read_params, update_devlog, a baseline) and the runner's record reader."""

from __future__ import annotations

import json
import time

import pytest

from kprof_mcp import child_io, safefs, store
from kprof_mcp.engine import KprofError

DICTS = "{}," * 700_000 + "{}"  # 2 MiB: under the bytes caps, 700k objects (~50 MB of Python dicts)
DEEP = "[" * 200_000 + "]" * 200_000


def test_planted_params_and_result_are_refused_by_size_count_and_depth(engine, workspace):
    o = engine.profile("vector_add", "v0", {"n": 256}, mode="event")
    d = o.profile_dir
    params, result = d / "params.json", d / "result.json"
    cases = [
        ('{"n": [' + "{}," * (2 << 20) + "{}]}", r"params.json' is \d+ bytes, over the 4194304-byte limit"),
        (
            '{"n": [' + DICTS + "]}",
            r"params.json' \(\d+ bytes\) holds 70000[123] JSON objects/arrays, over the 10000",
        ),
        (DEEP, r"params.json' \(400000 bytes\) .*over the 10000|nested over 64 levels"),
        ('{"a":' * 1000 + "1" + "}" * 1000, r"params.json' \(\d+ bytes\) is nested over 64 levels deep"),
    ]
    for text, pattern in cases:
        params.write_text(text)
        t0 = time.monotonic()
        with pytest.raises(KprofError, match=pattern) as e:
            engine.read_params(str(d))
        assert "RecursionError" not in str(e.value) and "internal" not in str(e.value)
        assert time.monotonic() - t0 < 5
    good = json.loads(json.dumps({"n": 256}))
    params.write_text(json.dumps(good))
    result.write_text('{"stages": [' + DICTS + "]}")
    for call in (
        lambda: engine.update_devlog("vector_add", str(d), ["x"]),
        lambda: engine.profile("vector_add", "v0", {"n": 256}, mode="event", baseline=str(d)),
    ):
        with pytest.raises(
            KprofError, match=r"result.json' \(\d+ bytes\) holds 70000[123] JSON objects/arrays"
        ):
            call()
    result.write_text('{"a":' * 1000 + "1" + "}" * 1000)
    with pytest.raises(KprofError, match=r"result.json' \(\d+ bytes\) is nested over 64 levels deep"):
        engine.update_devlog("vector_add", str(d), ["x"])


def test_the_real_files_pass_the_checks():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for name, cap in (("result.json", store.RESULT_CAP), ("params.json", store.PARAMS_CAP)):
        files = [p for p in root.glob(f"**/{name}")]
        assert files
        for p in files:
            safefs.read_json_text(p.parent, p, *cap)


def test_string_brackets_do_not_count_as_depth():
    text = json.dumps({"s": "[" * 500 + "{" * 500, "t": '\\"[[[['})
    assert json.loads(safefs.check_json(text.encode(), "x.json", 10_000)) == json.loads(text)


def test_the_command_record_is_checked_and_said(tmp_path):
    rec = tmp_path / "result.json"
    rec.write_text('{"status": "ok", "x": [' + DICTS + "]}")
    got = child_io.read_record(rec)
    assert got["status"] == "error" and "70000" in got["message"]
    rec.write_text(DEEP)
    assert "objects/arrays" in child_io.read_record(rec)["message"]
    rec.write_text('{"a":' * 100 + "1" + "}" * 100)
    assert "nested over 64 levels" in child_io.read_record(rec)["message"]
    rec.write_text('{"status": "ok"}')  # no run directory named: said, not "'result.json' is outside ."
    assert child_io.read_record(rec)["message"] == "the child's record names no run directory"
    ok = {"status": "ok", "work_dir": "/a.partial", "profile_dir": "/a"}
    rec.write_text(json.dumps(ok))
    assert child_io.read_record(rec) == ok
    rec.unlink()
    assert child_io.read_record(rec) is None

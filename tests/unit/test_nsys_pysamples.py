"""The host's sampled Python stacks (Nsight Systems' periodic Python samples, issue 36 item 5), on a real
H200 recording (tests/fixtures/nsys-pysamples/README.md: three steps of deepcopy_snapshot.py's bad variant,
a training step that deep-copies the model before the optimizer step, recorded with python_backtrace and
--python-sampling at 2 kHz), on hand-built samples, and on a recording made without them."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import unpacked

from kprof_mcp.analysis import idle
from kprof_mcp.analysis.idle_sources import sampled_host
from kprof_mcp.parsers import nsys as P
from kprof_mcp.parsers import nsys_pysamples as S
from kprof_mcp.render.timeline import source_words
from kprof_mcp.tools import nsys as N

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures" / "nsys-pysamples" / "deepcopy_snapshot.sqlite"  # kept as .sqlite.xz
OLD = ROOT / "fixtures" / "nsys-backtrace" / "backtrace.sqlite"  # (.xz) backtraces, no periodic samples
SCRIPT = "/tmp/kprof-pysamples-8z9gm21z/commands/deepcopy_snapshot.py"  # the path it was recorded at


@pytest.fixture(scope="module")
def trace():
    return P.load_sqlite(unpacked(FIX))


def _steps(tr):
    r = tr.ranges[tr.ranges["name"] == "step"]
    return float(r["start"].min()), float(r["end"].max()), len(r)


def line(n: int) -> str:
    return f"{SCRIPT}:{n} (loop)"


def test_every_sample_has_its_thread_line_and_library_function(trace):
    ps = trace.py_samples
    assert list(ps.columns) == S.COLUMNS and len(ps) == 66  # 3 steps of ~11.7 ms at 2 kHz
    assert ps["tid"].nunique() == 1 and ps["tid"].iloc[0] in set(trace.api["tid"])  # the main thread
    assert not ps["blocked"].any() and ps["start"].is_monotonic_increasing
    lo, hi, _ = _steps(trace)
    assert lo - 1e6 <= ps["start"].min() and ps["start"].max() <= hi + 1e6
    counts = ps["source"].value_counts()
    # the step's lines: forward (56), backward (58), the planted deepcopy (60), the optimizer (64)
    assert {line(56), line(58), line(60), line(64)} <= set(counts.index)
    assert counts[line(58)] == 25 and counts[line(60)] == 22
    ops = set(ps.loc[ps["source"] == line(60), "op"])
    assert {"copy.deepcopy", "torch.nn.parameter.__deepcopy__"} <= ops  # where in the deep copy


def test_the_host_part_is_named_by_the_line_the_host_was_running(trace):
    lo, hi, occ = _steps(trace)
    b = idle.breakdown(trace, lo, hi, occ)
    host = b.to_dict()["sources"]["host"]
    assert host["by"] == "samples" and host["line"] == line(58)  # the backward: 13 of the 27 samples
    assert (host["calls"], host["samples"], host["lines"]) == (13, 27, 5)
    assert host["share"] == pytest.approx(13 / 27)
    assert host["idle_ns"] == pytest.approx(b.parts_ns["host"] * 13 / 27)
    assert "copy.deepcopy" not in host["op"] and "_engine_run_backward" in host["op"]
    # the samples name a line, they never change the accounting; without them the calls around name it
    bare = type(trace)(**{**trace.__dict__, "py_samples": None})
    b2 = idle.breakdown(bare, lo, hi, occ)
    assert b2.parts_ns == b.parts_ns
    h2 = b2.to_dict()["sources"]["host"]
    assert "by" not in h2 and h2["line"] == line(60) and h2["after"] == line(60)
    # every other part keeps its call-based line
    assert b2.to_dict()["sources"]["launch"] == b.to_dict()["sources"]["launch"]


def test_blocked_samples_own_no_host_time(trace):
    lo, hi, occ = _steps(trace)
    ps = trace.py_samples.assign(blocked=True)
    b = idle.breakdown(type(trace)(**{**trace.__dict__, "py_samples": ps}), lo, hi, occ)
    assert "by" not in b.to_dict()["sources"]["host"]  # back to the calls' line


def test_sampled_host_on_hand_built_pieces():
    pieces = [(0.0, 100.0), (200.0, 300.0)]
    samples = [(10.0, "a.py:1 (f)", "copy.deepcopy"), (50.0, "a.py:1 (f)", None), (150.0, "b.py:2 (g)", None)]
    samples += [(250.0, None, "torch.foo"), (260.0, "b.py:2 (g)", "x.y")]
    got = sampled_host(samples, pieces)
    # 4 samples in the pieces (150 is outside), 2 on a.py:1: half of the pieces' 200 ns
    assert got == {
        "line": "a.py:1 (f)",
        "op": "copy.deepcopy",
        "calls": 2,
        "samples": 4,
        "idle_ns": 100.0,
        "share": 0.5,
        "lines": 2,
        "by": "samples",
    }
    assert sampled_host([(250.0, None, "torch.foo")], pieces) is None  # no user line: nothing to name
    assert sampled_host([], pieces) is None and sampled_host(samples, []) is None


def test_the_trigger_says_it_was_sampled():
    src = {
        "line": "a.py:3 (f)",
        "op": "copy.deepcopy",
        "calls": 2,
        "samples": 4,
        "share": 0.5,
        "by": "samples",
    }
    assert source_words(src) == "; source_line=a.py:3 (f) via copy.deepcopy in 2 of 4 Python samples (50%)"


def test_a_recording_without_periodic_samples_has_none():
    tr = P.load_sqlite(unpacked(OLD))
    assert tr.py_samples is None and "source" in tr.api.columns  # backtraces, but no samples


def test_the_command_line_samples_python_by_default_where_nsys_can(tmp_path, monkeypatch):
    nsys = tmp_path / "nsys"
    monkeypatch.delenv("KPROF_NSYS_PYTHON_SAMPLING", raising=False)
    monkeypatch.setattr(N, "_profile_help", lambda _n: "--python-sampling=\n--python-sampling-frequency=")
    cmd = N.profile_prefix(nsys, tmp_path / "o", python_backtrace=True, gpu_metrics=False)
    i = cmd.index(N.BACKTRACE_FLAGS[0])
    assert cmd[i : i + 6] == [*N.BACKTRACE_FLAGS, *N.PYTHON_SAMPLING_FLAGS] and N.samples_python(cmd)
    cmd = N.profile_prefix(nsys, tmp_path / "o", gpu_metrics=False)  # no backtraces: the samples alone
    i = cmd.index("--sample=none")
    assert cmd[i : i + 3] == ["--sample=none", *N.PYTHON_SAMPLING_FLAGS] and N.samples_python(cmd)
    assert "--python-backtrace=cuda" not in cmd
    off = N.profile_prefix(nsys, tmp_path / "o", gpu_metrics=False, python_sampling=False)
    assert not set(N.PYTHON_SAMPLING_FLAGS) & set(off) and not N.samples_python(off)
    monkeypatch.setenv("KPROF_NSYS_PYTHON_SAMPLING", "0")
    assert N.profile_prefix(nsys, tmp_path / "o", gpu_metrics=False) == off
    monkeypatch.delenv("KPROF_NSYS_PYTHON_SAMPLING")
    monkeypatch.setattr(N, "_profile_help", lambda _n: "")  # an nsys without the option
    cmd = N.profile_prefix(nsys, tmp_path / "o", python_backtrace=True, gpu_metrics=False)
    assert "--python-backtrace=cuda" in cmd and not set(N.PYTHON_SAMPLING_FLAGS) & set(cmd)
    assert N.samples_python(cmd) and not N.samples_python(N.profile_prefix(nsys, tmp_path / "o"))


def test_the_report_and_the_host_trigger_say_the_line_was_sampled(trace):
    from kprof_mcp.analysis.diagnosis import Facts
    from kprof_mcp.render.diagnosis.words import WORDS
    from kprof_mcp.render.timeline import where_the_wall_time_went

    lo, hi, occ = _steps(trace)
    d = idle.breakdown(trace, lo, hi, occ).to_dict()
    text = "\n".join(where_the_wall_time_went(d))
    assert f"`{line(58)}`, torch.autograd.graph._engine_run_backward" in text
    assert "(sampled: 27 Python samples) | 13 |" in text and "host's Python stack was sampled" in text
    facts = Facts(idle_pct=30.0, gpu_busy_pct=40.0, source_line=d["sources"]["host"])
    trigger = WORDS["host"](facts)[1]
    assert trigger == (
        f"gpu_idle_in_host_work=30.0% of the wall time; source_line={line(58)} via "
        "torch.autograd.graph._engine_run_backward, torch.autograd._make_grads in 13 of 27 Python samples (48%); "
        "gpu_busy_pct=40.0"
    )

"""The sync what-if takes the host work of the statements that read the GPU's values (replay/sampled.py):
on hand-built graphs (which samples count, where the time comes off, the bounds) and on a real H200
recording with Python samples (tests/fixtures/nsys-pysamples/README.md: the 26th held-back set's forward that
synchronises around each of its 96 modules; its fix measured +111 % in the same call, +97 % in the set's)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from conftest import unpacked

from kprof_mcp.analysis import replay
from kprof_mcp.analysis.replay.graph import Call, _copy, own
from kprof_mcp.analysis.replay.sampled import gap_samples, statements_cut
from kprof_mcp.parsers import nsys as P

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "nsys-pysamples" / "layer_timing_sync_bad.sqlite"
PLAIN_BAD, PLAIN_GOOD = 3_114_141.0, 1_472_855.0  # the plain pass's steps recorded with it (README)
SYNC = ("a.py:3 (f)", "torch.cuda.synchronize")
IN_SYNC = SYNC


def at(src, op=None):
    return src, op


def _calls():
    # one thread: launch (gap 10), sync (gap 10), launch (gap 10), sync (gap 10), launch (gap 20)
    kinds = ["launch", "sync", "launch", "sync", "launch"]
    gaps = [10.0, 10.0, 10.0, 10.0, 20.0]
    out, t = [], 0.0
    for k, gp in zip(kinds, gaps):
        c = Call(1, k, t + gp, t + gp + 5.0, gp, 5.0, k)
        if k == "sync":
            c.source, c.op = SYNC
        out.append(c)
        t += gp + 5.0
    return out


def _samples(at):
    return pd.DataFrame(
        [(t, 1, src, op, False) for t, src, op in at], columns=["start", "tid", "source", "op", "blocked"]
    )


def test_samples_are_placed_in_the_gap_before_each_call():
    calls = _calls()  # gaps: [0,10] [15,25] [30,40] [45,55] [60,80]
    ps = _samples([(3.0, "x", None), (12.0, "in a call", None), (20.0, *SYNC), (70.0, "y", "f")])
    ps.loc[len(ps)] = (50.0, 1, "blocked", None, True)
    assert gap_samples(ps, calls, 0.0) == [(0, *at("x")), (1, *IN_SYNC), (4, *at("y", "f"))]
    assert gap_samples(None, calls, 0.0) == [] and gap_samples(ps.iloc[0:0], calls, 0.0) == []


def test_the_statements_host_time_comes_off_the_gaps_around_the_dropped_reads():
    calls = _calls()
    # 4 samples in gaps, 2 at the sync statement: half of the 60 ns of gaps is its host time
    samples = [
        (0, "x", None),
        (1, *SYNC),
        (3, *SYNC),
        (4, "a.py:3 (f)", "other"),
    ]  # same line, other function
    got = list(calls)
    cut = statements_cut(got, samples, [1, 3], own)
    assert cut == pytest.approx(30.0)
    # the gaps before and after each sync (calls 1, 2, 3, 4: 50 ns) lose 30/50 of their length; call 0 keeps its
    assert [c.gap for c in got] == pytest.approx([10.0, 4.0, 4.0, 4.0, 8.0])
    assert [c.gap for c in calls] == [10.0, 10.0, 10.0, 10.0, 20.0]  # copy-on-write: the recorded calls stay


def test_nothing_changes_without_a_sample_at_a_dropped_statement():
    calls = _calls()
    for samples, dropped in (([], [1, 3]), ([(0, *at("x"))], [1, 3]), ([(1, *IN_SYNC)], [])):
        got = list(calls)
        assert statements_cut(got, samples, dropped, own) == 0.0
        assert [c.gap for c in got] == [c.gap for c in calls]


def test_never_more_than_the_gaps_around_the_statements_calls_hold():
    calls = _calls()
    got = list(calls)
    # 90 % of the 60 ns of gaps is 54 ns; the gaps around the calls of the sync's line (1 and 3, the second a
    # read of the same statement though not dropped) and after them (2 and 4) hold 50 ns: all of it goes
    cut = statements_cut(got, [(1, *IN_SYNC)] * 9 + [(0, *at("x"))], [1], own)
    assert cut == pytest.approx(50.0) and [c.gap for c in got] == pytest.approx([10.0, 0.0, 0.0, 0.0, 0.0])


def test_the_launches_a_synchronising_statement_made_first_are_its_room_too():
    calls = _calls()
    calls[0].source = "a.py:3 (f)"  # the statement launched a check's kernel before it read the result
    got = list(calls)
    cut = statements_cut(got, [(0, *IN_SYNC)] * 3 + [(4, *at("x"))], [1], own)  # 3/4 of 60 ns = 45
    assert cut == pytest.approx(45.0)
    assert got[0].gap < 10.0 and sum(c.gap for c in got) == pytest.approx(15.0)


@pytest.fixture(scope="module")
def trace():
    return P.load_sqlite(unpacked(FIX))


def _window(tr):
    r = tr.ranges[tr.ranges["name"] == "step"]
    return float(r["start"].min()), float(r["end"].max()), len(r)


def test_real_recording_the_sync_statements_own_the_measured_gain(trace):
    lo, hi, n = _window(trace)
    assert n == 10
    with_samples = replay.gains(trace, lo, hi, n, plain_ns=PLAIN_BAD)
    without = replay.gains(replace(trace, py_samples=None), lo, hi, n, plain_ns=PLAIN_BAD)
    base = with_samples["base_ns"]
    assert base == pytest.approx(PLAIN_BAD, rel=0.01)
    gain = {k: base / v - 1.0 for k, v in with_samples["step_ns"].items()}
    old = {k: without["base_ns"] / v - 1.0 for k, v in without["step_ns"].items()}
    measured = PLAIN_BAD / PLAIN_GOOD - 1.0  # +111 %
    assert old["sync"] < 0.05  # the waits alone: the host still runs the synchronize statements
    assert measured / 2 <= gain["sync"] <= measured * 2  # within 2x of the fix measured in the same call
    assert gain["sync"] > gain["launch"]  # the sync first, as planted (the launch what-if: +65 %)
    # a CUDA graph cannot hold the reads: their statements' host work stays under the launch what-if
    assert gain["launch"] < old["launch"] / 2 and gain["launch"] < gain["sync"]
    assert old["host"] == pytest.approx(gain["host"])  # the what-ifs that leave the reads do not read the samples


def test_real_recording_samples_sit_in_gaps_of_the_main_thread(trace):
    lo, hi, n = _window(trace)
    g = replay.graph.build(trace, lo, hi, n)
    # 145 of the window's 171 samples fall in host gaps (the others inside CUDA calls)
    assert len(g.samples) == 145 and {g.calls[i].tid for i, _, _ in g.samples} == {g.calls[0].tid}
    syncs = [c for c in g.calls if c.kind == "sync"]
    assert syncs and all(c.op == "torch.cuda.synchronize" and c.source.endswith("(forward)") for c in syncs)
    hits = sum(1 for _, src, op in g.samples if op == "torch.cuda.synchronize")
    assert hits == 82  # of the 145: the statements' host work is 57 % of the host gaps' time
    c2 = _copy(g)
    assert c2.samples is g.samples


def test_real_recording_a_validating_statement_without_the_checks_it_called():
    tr = P.load_sqlite(unpacked(FIX.with_name("dist_validate_bad.sqlite")))
    lo, hi, n = _window(tr)
    g = replay.graph.build(tr, lo, hi, n)
    keys = {(c.source, c.op) for c in g.calls if c.kind == "sync"}
    assert {op for _, op in keys} == {
        "torch.distributions.distribution.__init__",
        "torch.distributions.distribution._validate_sample",
    }
    inner = sum(1 for _, src, op in g.samples if (src, op) in keys)
    assert (len(g.samples), inner) == (
        280,
        64,
    )  # in the synchronising functions themselves (42 more in checks)
    got = replay.gains(tr, lo, hi, n, plain_ns=3_562_549.0)
    old = replay.gains(replace(tr, py_samples=None), lo, hi, n, plain_ns=3_562_549.0)
    sync, before = (x["base_ns"] / x["step_ns"]["sync"] - 1.0 for x in (got, old))
    measured = 3_014_851.0 / 2_236_221.0 - 1.0  # +34.8 %, the 20th set's recording
    assert before < 0.01 and measured / 2 <= sync <= measured * 2

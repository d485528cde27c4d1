"""The sync what-if takes the host work of the statements that read the GPU's values (replay/sampled.py):
on hand-built graphs (which samples count, where the time comes off, the bounds) and on two real H200
recordings with periodic Python samples and no per-call backtraces (tests/fixtures/nsys-pysamples/README.md:
the 26th held-back set's forward that synchronises around each of its 96 modules, the 20th's argument
validation)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from conftest import unpacked

from kprof_mcp.analysis import replay
from kprof_mcp.analysis.replay.graph import Call, _copy, own
from kprof_mcp.analysis.replay.sampled import gap_samples, statements, statements_cut
from kprof_mcp.parsers import nsys as P

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "nsys-pysamples" / "layer_timing_sync_bad.sqlite"
PLAIN_BAD = 2_931_905.0  # the script's own step, timed in the same call (README)
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
    # calls at [10, 15] [25, 30] [40, 45] [55, 60] [80, 85]: the sample at 12 falls inside the first; the
    # blocked one at 50, in a gap, is left out (a waiting thread does no host work)
    assert gap_samples(ps, calls, 0.0) == [
        (0, *at("x"), False),
        (0, *at("in a call"), True),
        (1, *IN_SYNC, False),
        (4, *at("y", "f"), False),
    ]
    ps.loc[len(ps)] = (57.0, 1, "waiting in a read", "torch.cuda.synchronize", True)
    assert (3, "waiting in a read", "torch.cuda.synchronize", True) in gap_samples(ps, calls, 0.0)
    assert gap_samples(None, calls, 0.0) == [] and gap_samples(ps.iloc[0:0], calls, 0.0) == []


def test_the_statements_host_time_comes_off_the_gaps_around_the_dropped_reads():
    calls = _calls()
    # 4 samples in gaps, 2 at the sync statement: half of the 60 ns of gaps is its host time
    samples = [(0, "x", None, False), (1, *SYNC, False), (3, *SYNC, False)]
    samples.append(
        (4, "a.py:3 (f)", "other", False)
    )  # the same line in another function: not the statement's
    got = list(calls)
    cut = statements_cut(got, samples, [1, 3], own)
    assert cut == pytest.approx(30.0)
    # the gaps before and after each sync (calls 1, 2, 3, 4: 50 ns) lose 30/50 of their length; call 0 keeps its
    assert [c.gap for c in got] == pytest.approx([10.0, 4.0, 4.0, 4.0, 8.0])
    assert [c.gap for c in calls] == [10.0, 10.0, 10.0, 10.0, 20.0]  # copy-on-write: the recorded calls stay


def test_nothing_changes_without_a_sample_at_a_dropped_statement():
    calls = _calls()
    for samples, dropped in (([], [1, 3]), ([(0, *at("x"), False)], [1, 3]), ([(1, *IN_SYNC, False)], [])):
        got = list(calls)
        assert statements_cut(got, samples, dropped, own) == 0.0
        assert [c.gap for c in got] == [c.gap for c in calls]


def test_never_more_than_the_gaps_around_the_statements_calls_hold():
    calls = _calls()
    got = list(calls)
    # 90 % of the 60 ns of gaps is 54 ns; the gaps around the calls of the sync's line (1 and 3, the second a
    # read of the same statement though not dropped) and after them (2 and 4) hold 50 ns: all of it goes
    cut = statements_cut(got, [(1, *IN_SYNC, False)] * 9 + [(0, *at("x"), False)], [1], own)
    assert cut == pytest.approx(50.0) and [c.gap for c in got] == pytest.approx([10.0, 0.0, 0.0, 0.0, 0.0])


def test_the_launches_a_synchronising_statement_made_first_are_its_room_too():
    calls = _calls()
    calls[0].source = "a.py:3 (f)"  # the statement launched a check's kernel before it read the result
    got = list(calls)
    cut = statements_cut(
        got, [(0, *IN_SYNC, False)] * 3 + [(4, *at("x"), False)], [1], own
    )  # 3/4 of 60 ns = 45
    assert cut == pytest.approx(45.0)
    assert got[0].gap < 10.0 and sum(c.gap for c in got) == pytest.approx(15.0)


def test_without_backtraces_the_samples_inside_the_reads_name_their_statements():
    calls = _calls()
    for c in calls:
        c.source = c.op = None  # periodic samples alone: no call has a line
    samples = [(0, "x", None, False), (1, *SYNC, False), (3, *SYNC, False), (4, "y", None, False)]
    got = list(calls)
    assert statements_cut(got, samples, [1, 3], own) == 0.0  # nothing says which statement read
    inside = [(1, *SYNC, True), (2, "a.py:9 (g)", "launching", True)]  # inside the read; inside a launch
    cut = statements_cut(got, samples + inside, [1, 3], own)
    # 2 of the 4 gap samples: 30 ns of the 60, off the gaps around the reads (1, 2, 3, 4: 50 ns)
    assert cut == pytest.approx(30.0) and [c.gap for c in got] == pytest.approx([10.0, 4.0, 4.0, 4.0, 8.0])


@pytest.fixture(scope="module")
def trace():
    return P.load_sqlite(unpacked(FIX))


def _window(tr):
    r = tr.ranges[tr.ranges["name"] == "step"]
    return float(r["start"].min()), float(r["end"].max()), len(r)


def _reads(g):
    from kprof_mcp.analysis.replay.transforms import _is_read

    return [i for i, c in enumerate(g.calls) if c.covers and _is_read(g, c)]


def test_real_recording_samples_inside_the_reads_name_the_synchronising_statements(trace):
    lo, hi, n = _window(trace)
    g = replay.graph.build(trace, lo, hi, n)
    assert n == 10 and "source" not in trace.api.columns  # no per-call backtraces
    reads = set(_reads(g))
    inside = Counter((src.rsplit("/", 1)[-1], op) for i, src, op, x in g.samples if x and i in reads)
    assert inside == {
        ("layer_timing_sync.py:66 (forward)", "torch.cuda.synchronize"): 8,
        ("layer_timing_sync.py:63 (forward)", "torch.cuda.synchronize"): 1,
    }
    gap = [(src, op) for _, src, op, x in g.samples if not x]
    assert len(gap) == 54 and sum(op == "torch.cuda.synchronize" for _, op in gap) == 4
    assert {g.calls[i].tid for i, *_ in g.samples} == {g.calls[0].tid}
    assert _copy(g).samples is g.samples  # a what-if's copy shares them (nothing changes them)


def test_real_recording_the_statements_host_work_is_small_beside_what_the_fix_measured(trace):
    """The wrapper's own host work (4 of 54 gap samples) is what the samples can give the sync: the replay's
    sync what-if rises from +0.5 % to +6.5 %, where the fix measured +96-111 %: the synchronize calls cost
    6.5 us each unprofiled and 1.8 us traced (the README): a miss this test pins, not a target."""
    lo, hi, n = _window(trace)
    got = replay.gains(trace, lo, hi, n, plain_ns=PLAIN_BAD)
    old = replay.gains(replace(trace, py_samples=None), lo, hi, n, plain_ns=PLAIN_BAD)
    gain = {k: got["base_ns"] / v - 1.0 for k, v in got["step_ns"].items()}
    before = {k: old["base_ns"] / v - 1.0 for k, v in old["step_ns"].items()}
    assert before["sync"] < 0.02 and 0.04 < gain["sync"] < 0.10
    # a CUDA graph cannot hold the reads: their statements' host work stays under the launch what-if
    assert gain["launch"] < before["launch"]
    assert before["host"] == pytest.approx(
        gain["host"]
    )  # the what-ifs that leave the reads do not read the samples


def test_real_recording_a_validating_statement_without_per_call_lines():
    tr = P.load_sqlite(unpacked(FIX.with_name("dist_validate_bad.sqlite")))
    lo, hi, n = _window(tr)
    g = replay.graph.build(tr, lo, hi, n)
    reads = _reads(g)
    keys = {(src, op) for i, src, op, x in g.samples if x and i in set(reads)}
    assert {op for _, op in keys} == {
        "torch.distributions.distribution.__init__",
        "torch.distributions.distribution._validate_sample",
    }
    gap = [(src, op) for _, src, op, x in g.samples if not x]
    assert (len(gap), sum(k in keys for k in gap)) == (37, 12)
    near, share = statements(g.calls, g.samples, reads[:-1])
    assert share == 1.0 and len(near) == 478  # more than the gaps around the reads hold: all of those go
    got = replay.gains(tr, lo, hi, n, plain_ns=2_344_504.0)
    old = replay.gains(replace(tr, py_samples=None), lo, hi, n, plain_ns=2_344_504.0)
    sync, before = (x["base_ns"] / x["step_ns"]["sync"] - 1.0 for x in (got, old))
    assert before < 0.08 and 0.14 < sync < 0.20  # +6 % -> +17 %; the 20th set measured the fix at +34.8 %


# ---- a read's unprofiled host cost, measured by the plain pass (replay.transforms._reads_gone)


def _graph(calls):
    from kprof_mcp.analysis.replay.graph import Graph

    return Graph(0.0, 100.0, calls, [], {1: 0.0}, 1, 0.0, 1.0, "none")


def test_a_measured_read_cost_takes_each_dropped_read_and_the_rest_of_its_cost_off_the_gap_before_it():
    from kprof_mcp.analysis.replay.transforms import _reads_gone

    calls = _calls()  # syncs at 1 and 3: gaps 10, own time (ret) 0 after the wait
    for c in calls:
        c.ret = 1.0 if c.kind == "sync" else c.ret
    g = _graph(list(calls))
    g.read_floor_ns = 6.0
    _reads_gone(g, [1, 3], cut=0.0)
    assert [(c.dur, c.ret) for c in g.calls[1::2]][:2] == [(0.0, 0.0), (0.0, 0.0)]  # the reads go
    assert [c.gap for c in g.calls] == pytest.approx([10.0, 5.0, 10.0, 5.0, 20.0])  # 6 - 1 more each
    g2 = _graph(list(calls))
    g2.read_floor_ns = 6.0
    _reads_gone(g2, [1, 3], cut=6.0)  # the statements' sampled work already took more than half of it
    assert [c.gap for c in g2.calls] == pytest.approx([10.0, 8.0, 10.0, 8.0, 20.0])
    assert [c.gap for c in calls] == [10.0, 10.0, 10.0, 10.0, 20.0]  # copy-on-write


def test_a_copy_and_its_synchronise_are_one_read():
    from kprof_mcp.analysis.replay.transforms import _reads_gone

    calls = _calls()
    calls[0].kind, calls[0].name = "copy", "cudaMemcpyAsync"  # .item(): the copy, then its stream's sync
    calls[0].ret = 5.0  # its host time after the wait
    g = _graph(list(calls))
    g.read_floor_ns = 6.0
    _reads_gone(g, [0, 1], cut=0.0)
    # 6 - 5 off the gap before the copy (its own time 5 counts), nothing more for the sync that waits for it
    assert [c.gap for c in g.calls][:2] == pytest.approx([9.0, 10.0])


def test_real_recording_the_measured_read_cost_puts_the_sync_first():
    """With the read cost the plain pass would measure (4.7-7.2 us on that host: nsys_call_overhead log), the
    synchronise-per-module forward's sync what-if is +45-74 % for +96-111 % measured, first from 7.2 us."""
    tr = P.load_sqlite(unpacked(FIX))
    lo, hi, n = _window(tr)
    lo_read, hi_read = (replay.gains(tr, lo, hi, n, plain_ns=PLAIN_BAD, read_ns=r) for r in (4700.0, 7200.0))
    g_lo, g_hi = ({k: x["base_ns"] / v - 1.0 for k, v in x["step_ns"].items()} for x in (lo_read, hi_read))
    assert 0.40 < g_lo["sync"] < 0.50 and 0.70 < g_hi["sync"] < 0.80 and g_hi["sync"] > g_hi["launch"]
    assert hi_read["read_floor_ns"] == 7200.0
    assert "read_floor_ns" not in replay.gains(tr, lo, hi, n, plain_ns=PLAIN_BAD)

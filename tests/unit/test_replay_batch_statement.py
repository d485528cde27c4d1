"""A launch loop's statement goes with its runs when batched (issue 36, 2026-11-29): the host's sampled Python
says which user line the runs' launches came from, and its share of the thread's host gaps — the per-item tensors
built and dropped, the ``torch.stack`` of the outputs on the same line, the per-item work above a lean eager op's
issuing time — is the loop's, not host work that stays. Recorded: the per-item matmuls re-recorded on an H200 with
the lean eager op's floor and periodic Python samples (tests/calibration/recorded-opfloor/)."""

import lzma
import shutil
from pathlib import Path

import pytest

from kprof_mcp.analysis import replay
from kprof_mcp.analysis.replay.batch import batch_launches
from kprof_mcp.analysis.replay.floors import traced_op_floor
from kprof_mcp.parsers import nsys

CAL = Path(__file__).resolve().parents[1] / "calibration"
PAIR = CAL / "recorded-opfloor" / "recorded-heldout" / "per_item_matmuls"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    db = tmp_path_factory.mktemp("batch_statement") / "bad.sqlite"
    with lzma.open(PAIR / "bad.sqlite.xz") as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    tr = nsys.load_sqlite(db)
    r = tr.ranges[tr.ranges["name"] == "matmuls"].sort_values("start")
    lo, hi = float(r.start.iloc[3]), float(r.end.iloc[-1])
    g = replay.build(tr, lo, hi, len(r) - 3)
    g.op_floor_ns = float(traced_op_floor(tr) or 0.0)
    return g


def test_the_loops_statement_is_the_line_of_the_runs_launches(graph):
    (src,) = {s for i, s, _, inside in graph.samples if inside}
    assert src.endswith("per_item_matmul.py:39 (loop)")  # y = torch.stack([x[i] @ w[i] for i in range(B)])
    assert all(s == src for _, s, _, _ in graph.samples)  # the step's host time is that statement's


def test_batched_the_statements_host_work_goes_with_the_runs(graph):
    g0 = replay.replay(graph).step_ns
    with_statement = replay.replay(batch_launches(graph)).step_ns
    # the same what-if without the samples: the run's gaps above the lean op's floor, the stack's host time and
    # the frees of the 256 outputs stay
    without = replay.replay(batch_launches(type(graph)(**{**graph.__dict__, "samples": []}))).step_ns
    assert g0 > 4e6  # ~5 ms a step recorded
    assert without > 100e3  # ~150 us: host work the batch leaves
    assert (
        with_statement < 50e3
    )  # one launch and the batched kernel: the bmm's step measured ~45 us unprofiled
    assert with_statement < without / 3

"""Timelines by replay (issue 36/39): a thread that waits for another thread of its process. PyTorch runs a
backward on the autograd engine's own thread, which the main thread wakes (``loss.backward()``) and then waits
for; the trace records no call for either wait. Replayed with each thread's calls bound only to its own
previous call, a what-if that moved the main thread (a sync removed) left the backward where it was recorded,
and the step did not move: the second held-back multi-rank set's loss read every step (+37.5 % measured) was
given +0 % by the sync what-if. A call that follows a long idle stretch of its thread while another thread of
its process launched work is bound to that thread's last call instead (replay.graph._wakers)."""

import shutil
from pathlib import Path

import pandas as pd
import pytest
from conftest import packed

from kprof_mcp.analysis import replay
from kprof_mcp.parsers import nsys
from kprof_mcp.parsers.kineto import KERNEL_COLUMNS, Trace

US = 1000.0


def _trace() -> Trace:
    # (name, start us, end us, correlation, tid): the main thread (1) launches the forward, reads a value
    # (a sync), does 1 ms of host work, launches the loss; the autograd thread (2) launches the backward.
    api = [
        ("cudaEventRecord", 1, 2, 90, 2),
        ("cudaLaunchKernel", 0, 5, 1, 1),  # forward: kA
        ("cudaStreamSynchronize", 10, 2005, 91, 1),  # waits for kA
        ("cudaLaunchKernel", 3005, 3010, 2, 1),  # after 1 ms of host work: kB
        ("cudaLaunchKernel", 3020, 3025, 3, 1),  # kB2
        ("cudaLaunchKernel", 3100, 3105, 4, 2),  # the backward, on the autograd thread: kC
        ("cudaLaunchKernel", 3110, 3115, 5, 2),  # kD
        ("cudaLaunchKernel", 4200, 4205, 6, 1),  # the main thread after backward(): kE
        ("cudaStreamSynchronize", 4210, 4805, 92, 1),  # the window's last read
    ]
    kernels = [
        ("kA", 10, 2000, 1),
        ("kB", 3015, 3500, 2),
        ("kB2", 3500, 3600, 3),
        ("kC", 3600, 4000, 4),
        ("kD", 4000, 4500, 5),
        ("kE", 4500, 4800, 6),
    ]
    a = pd.DataFrame(
        [
            {"name": n, "start": s * US, "dur": (e - s) * US, "end": e * US, "correlation": c, "tid": t}
            for n, s, e, c, t in sorted(api, key=lambda r: r[1])
        ]
    )
    k = pd.DataFrame(
        [
            {
                **{c: None for c in KERNEL_COLUMNS},
                "name": n,
                "start": s * US,
                "dur": (e - s) * US,
                "end": e * US,
            }
            | {"stream": 7, "correlation": c, "device": 0}
            for n, s, e, c in kernels
        ],
        columns=KERNEL_COLUMNS,
    )
    m = pd.DataFrame(columns=["name", "start", "dur", "end", "kind", "stream", "bytes", "correlation"])
    r = pd.DataFrame(columns=["name", "start", "dur", "end", "tid"])
    c = pd.DataFrame(columns=["name", "start", "dur", "end", "tid"])
    return Trace(kernels=k, memops=m, api=a, ranges=r, cpu_ops=c, num_sms=132, device_name="NVIDIA H100")


def test_the_backward_thread_is_bound_to_the_main_thread_and_moves_with_it():
    g = replay.build(_trace())
    calls = {(c.name, c.start / US): c for c in g.calls}
    backward = calls[("cudaLaunchKernel", 3100.0)]
    assert backward.waker is not None and g.calls[backward.waker].start == 3020 * US  # the main thread's kB2
    assert backward.wake == pytest.approx(75 * US)
    after = calls[("cudaLaunchKernel", 4200.0)]
    assert g.calls[after.waker].tid == 2  # the main thread waited for the backward thread
    ident = replay.replay(g)
    assert max(abs(e - o.end) for e, o in zip(ident.op_end, g.ops)) < 1.0  # the recording, exactly
    dropped = replay.replay(g, replay.drop_syncs)
    # the 1 ms of host work now overlaps kA: kB starts when kA ends, and the backward follows it
    assert dropped.span_ns == pytest.approx(ident.span_ns - 1000 * US, rel=0.01)
    for c in g.calls:  # without the binding, the backward thread kept its recorded times
        c.waker = None
    assert replay.replay(g, replay.drop_syncs).span_ns == pytest.approx(ident.span_ns, rel=0.01)


def test_a_report_of_two_ranks_replays_each_rank_on_its_own_streams_and_calls(tmp_path):
    """The first held-back multi-rank set's length-sorted pair (2 x H100, nsys): the identity replay gives
    back every GPU operation's recorded end (before, the ranks' shared correlation ids and stream numbers
    bound one rank's kernels to the other's calls and stream)."""
    pair = (
        Path(__file__).resolve().parents[1]
        / "calibration"
        / "recorded-heldout-ranks"
        / "length_sorted_batch_split_into_contiguous_halves"
    )
    db = tmp_path / "bad.sqlite"
    with packed(pair / "bad.sqlite.gz") as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    tr = nsys.load_sqlite(db)
    steps = tr.ranges[(tr.ranges["name"] == "step") & (tr.ranges["dur"] < 1e8)]
    g = replay.build(tr, float(steps["start"].min()), float(steps["end"].max()), len(steps) // 2)
    assert len({o.stream[0] for o in g.ops}) >= 2  # the ranks' streams apart
    r = replay.replay(g)
    assert max(abs(e - o.end) for e, o in zip(r.op_end, g.ops)) < 1.0

"""Launches that wait for their own kernels (``CUDA_LAUNCH_BLOCKING=1``, issue 36's tenth held-back set): the
idle time after each is the sync's, the replay makes them wait, and its ``sync`` what-if lets the host run
ahead. A launch whose tiny kernel merely ran while the call was still returning, or one a full queue held
(it returns before its own kernel has run), is not one."""

import pytest
from test_replay import U, _trace

from kprof_mcp.analysis import idle, replay
from kprof_mcp.analysis.diagnosis.timeline import idle_opportunities
from kprof_mcp.render.diagnosis import words


def _blocking_loop(steps: int = 4, kernels: int = 5) -> object:
    """Each kernel (40 us) runs inside its launch call: the call starts, the kernel starts 8 us later, runs
    40 us, the call returns 4 us after it ended (52 us); then 20 us of Python before the next launch."""
    api, ks, t, c = [], [], 0.0, 0
    for _ in range(steps * kernels):
        api.append(("cudaLaunchKernel", t * U, (t + 52) * U, c))
        ks.append(("k", (t + 8) * U, (t + 48) * U, 7, c))
        t, c = t + 72, c + 1
    return _trace(api, ks)


def test_the_criterion():
    assert idle.blocking_launch(0.0, 52.0, (8.0, 48.0))  # its kernel inside, returned 4 after (issued 8 in)
    assert not idle.blocking_launch(0.0, 7.0, (9.0, 11.0))  # asynchronous: its kernel began after it returned
    assert not idle.blocking_launch(0.0, 500.0, (8.0, 10.0))  # a preempted host: returned long after
    assert not idle.blocking_launch(0.0, 300.0, (400.0, 450.0))  # a full queue: its own kernel ran later
    assert not idle.blocking_launch(0.0, 52.0, None)


def test_blocking_launches_are_syncs_and_the_replay_lets_the_host_run_ahead():
    tr = _blocking_loop()
    b = idle.breakdown(tr, 0.0, 20 * 72 * U, 4).to_dict()
    assert b["parts_ns"]["sync"] > 0.9 * (
        b["window_ns"] - b["busy_ns"]
    )  # every gap follows a blocking launch
    (row,) = b["evidence"]["sync_calls"]
    assert row["call"] == f"cudaLaunchKernel {idle.WAITED_LAUNCH}" and row["count"] == 20
    g = replay.build(tr, 0.0, 20 * 72 * U, 4)
    assert all(c.covers for c in g.calls)
    assert replay.replay(g).span_ns == pytest.approx(b["window_ns"], rel=1e-6)  # identity
    # Asynchronous: the host issues every 20 + 4 us (the return path after its wait stays), the kernels
    # (40 us each) run back to back from the first one's start: 8 + 20 x 40 us; the last wait stays (4 us
    # after its kernel), then the window's 20 us of host time after the last call.
    fast = replay.replay(g, replay.drop_syncs)
    assert fast.span_ns == pytest.approx((8 + 20 * 40 + 4 + 20) * U, rel=1e-6)
    b["replay"] = replay.gains(tr, 0.0, 20 * 72 * U, 4)
    top = idle_opportunities(b)[0]
    assert top.cause == "sync" and top.est_gain_pct == pytest.approx(100 * (1440 / 832 - 1), rel=1e-3)
    what = words(top)[0]
    assert "CUDA_LAUNCH_BLOCKING" in what and "asynchronous" in what


def test_asynchronous_launches_are_not():
    api, ks = [], []
    for i in range(20):  # a launch-bound loop: 7 us calls, 2 us kernels starting after each call returned
        t = 30.0 * i
        api.append(("cudaLaunchKernel", t * U, (t + 7) * U, i))
        ks.append(("k", (t + 9) * U, (t + 11) * U, 7, i))
    tr = _trace(api, ks)
    b = idle.breakdown(tr, 0.0, 600 * U, 1).to_dict()
    assert b["parts_ns"]["sync"] == 0 and b["parts_ns"]["launch"] > 0
    assert not any(c.covers for c in replay.build(tr, 0.0, 600 * U, 1).calls)

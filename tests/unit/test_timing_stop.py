"""Issue 40's stopping rule (kprof_mcp.capture.timer; opt-in, KPROF_TIMING_STOP=ci): on a GPU a stage whose batches agree stops once
the median's CI is inside the target, after a minimum sample count and a few batches, well before the
fixed window; a stage whose batches disagree (its time moves with the clock states) keeps the window;
the rule and its targets are stated for the result."""

import time

import pytest

from kprof_mcp.capture.timer import EARLY_MIN_BATCHES, Timer, batches_agree, stopping_rule
from kprof_mcp.models import ProfileRequest


def _req(**kw):
    return ProfileRequest(
        kernel="k", kernel_source="x", version="v0", params={}, out_root="/tmp", warmup_ms=0.0, **kw
    )


def _timer(per_batch, use_cuda=True, **kw):
    """A Timer whose batch i returns per_batch(i, n) and takes 10 ms of wall time (no GPU)."""

    class T(Timer):
        batches = 0

        def _one_batch(self, fn, n):
            T.batches += 1
            time.sleep(0.01)
            return per_batch(T.batches, n)

    return T(None, use_cuda, _req(**kw), "events" if use_cuda else "cpu", flush_buf=object()), T


def test_agreeing_batches_stop_early_with_the_minimum_samples(monkeypatch):
    monkeypatch.setenv("KPROF_TIMING_STOP", "ci")
    t, T = _timer(lambda i, n: [1e6 + (j % 3) for j in range(n)], min_window_ms=1000.0, min_runs=30)
    timing = t.time(lambda: None)
    assert timing.stop_reason == "converged_ci"
    assert timing.runs >= 30 and T.batches - 1 >= EARLY_MIN_BATCHES  # one warm-up batch
    assert T.batches - 1 < 40  # ~150 ms of 10 ms batches, not the 1000 ms window
    assert t.spent_s["timing_window"] > 0.1 and t.spent_s["warmup"] > 0


def test_batches_that_disagree_keep_the_window(monkeypatch):
    """Each batch 1 % slower than the last (a clock state drifting): the CI of the pooled median
    is narrow, but the batches' medians disagree, so the timing runs its full window."""
    monkeypatch.setenv("KPROF_TIMING_STOP", "ci")
    t, T = _timer(lambda i, n: [1e6 * (1 + 0.01 * (i % 2))] * n, min_window_ms=300.0, min_runs=30)
    timing = t.time(lambda: None)
    # The whole 300 ms window was timed (a wall-time rule: a count of 10 ms batches would depend
    # on how late sleep() wakes on a loaded machine — CI saw 25 batches where 30 were meant; 0.29 s: the
    # window is measured from before each batch call, the book from inside it).
    assert timing.stop_reason == "converged" and t.spent_s["timing_window"] >= 0.29
    assert T.batches - 1 > EARLY_MIN_BATCHES


@pytest.mark.parametrize("setting", [None, "window"])
def test_the_early_stop_is_off_unless_asked(monkeypatch, setting):
    if setting is None:
        monkeypatch.delenv("KPROF_TIMING_STOP", raising=False)
    else:
        monkeypatch.setenv("KPROF_TIMING_STOP", setting)
    t, T = _timer(lambda i, n: [1e6] * n, min_window_ms=300.0, min_runs=30)
    assert t.time(lambda: None).stop_reason == "converged" and t.spent_s["timing_window"] >= 0.29
    assert T.batches - 1 > EARLY_MIN_BATCHES
    r = stopping_rule(_req(), True)
    assert r["early_stop"] is False and "converged_ci" not in r["rule"]


def test_batch_agreement():
    assert batches_agree([100.0, 100.2, 99.9], 0.005)
    assert not batches_agree([100.0, 101.0, 100.0], 0.005)
    assert not batches_agree([100.0], 0.005)


@pytest.mark.parametrize("cuda", [True, False])
def test_the_rule_is_stated_with_its_targets(monkeypatch, cuda):
    monkeypatch.setenv("KPROF_TIMING_STOP", "ci")
    r = stopping_rule(_req(min_runs=30, target_rel_ci=0.0025), cuda)
    assert r["min_runs"] == 30 and r["target_rel_ci"] == 0.0025 and r["batch_agreement"] == 0.005
    assert r["early_stop"] and "converged_ci" in r["rule"]
    assert (r["early_min_window_ms"] is not None) is cuda

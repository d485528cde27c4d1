"""Issue 36 (the seventh held-back set, recorded with Nsight Systems on an H100): a CUDA graph captured and
instantiated at every step. The launches a thread makes while its stream captures are recorded into the
graph and run nothing: they, the capture's begin and end, the instantiation and the destruction are the
graph's construction (cuda_api), and the replay with the graph built once (those calls and the host work
issuing the captured launches gone) estimates the fix. Before, the captured launches were taken for
launches and the advice was to capture a graph, which the step already did."""

import sys
from pathlib import Path

import pytest

from kprof_mcp.analysis.timeline import captured
from kprof_mcp.render.diagnosis import assess

CALIBRATION = Path(__file__).resolve().parents[1] / "calibration"
PAIR = CALIBRATION / "recorded-heldout7" / "CUDA_graph_captured_every_step"


def test_calls_between_a_threads_capture_begin_and_end_are_captured():
    names = [
        "cudaLaunchKernel",
        "cudaStreamBeginCapture_v10000",
        "cudaLaunchKernel",
        "cudaLaunchKernel",
        "cudaStreamEndCapture_v10000",
        "cudaGraphLaunch",
    ]
    tids = [1, 1, 1, 2, 1, 1]
    assert captured(names, tids) == [False, True, True, False, True, False]


def test_a_graph_built_every_step_is_the_cuda_api_cause_and_its_replay_estimates_the_fix():
    sys.path.insert(0, str(CALIBRATION))
    from table import load  # the recorded result, its timeline re-read from the kept SQLite by today's code

    r = load(PAIR / "bad.result.json")
    opps = assess(r).opportunities
    top = opps[0]
    assert top.cause == "cuda_api" and "into a stream capture" in top.name and "replay" in top.name
    assert top.est_gain_pct == pytest.approx(324.3, rel=0.5)  # measured: 1401 -> 330 us a step
    launch = next((o for o in opps if o.cause == "launch"), None)
    assert launch is None or launch.est_gain_pct < 50.0

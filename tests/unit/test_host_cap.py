"""No change to a command's kernels makes its step shorter than its host (issue 36). The ninth held-back set's
dense embedding gradient (H100, nsys): the step's model counts the work a sparse gradient needs (1.6 GFLOP,
22 MB), its kernels take 3.4 ms, and the generic latency advice was credited with the whole speed-of-light
headroom: +13,693 %, where the fix measured +217 % (the fixed step is the host's). The recorded trace replayed
with every GPU operation at its floor is the host's own step; 1 − that / the recorded step bounds every
share of generic advice (a specific cause that removes kernels removes their launches' host time too)."""

import json
from pathlib import Path

import pytest

from kprof_mcp.analysis.assessment import assess
from kprof_mcp.analysis.diagnosis import opportunities
from kprof_mcp.analysis.replay import build, free_gpu, replay
from kprof_mcp.models import ProfileResult

PAIR = (
    Path(__file__).resolve().parents[1]
    / "calibration"
    / "recorded-heldout9"
    / "dense_gradient_of_a_sparsely_used_embedding_table"
)


def _result() -> ProfileResult:
    import sys

    sys.path.insert(0, str(PAIR.parents[1]))
    from replayed import idle_with_replay  # the same path the tool takes on the GPU machine

    r = ProfileResult.model_validate_json((PAIR / "bad.result.json").read_text())
    idle = idle_with_replay(PAIR, "bad")
    return r.model_copy(update={"timeline": {**r.timeline, "idle": idle}})


def test_the_host_floor_bounds_every_kernel_side_share():
    r = _result()
    rep = r.timeline["idle"]["replay"]
    assert 0 < rep["gpu_free_ns"] < rep["recorded_ns"]
    cap = 1 - rep["gpu_free_ns"] / rep["recorded_ns"]
    m = assess(r).stages[0].metrics
    assert m.host_cap == pytest.approx(cap)
    opps = opportunities(m)
    assert opps and max(o.share for o in opps if not o.specific) <= cap + 1e-9
    assert opps[0].est_gain_pct < 300  # was +13,693 % (the fix measured +217 %)
    recorded = json.loads((PAIR / "bad.result.json").read_text())["timeline"]["idle"]["replay"]
    assert "gpu_free_ns" not in recorded  # recorded before the bound: no cap applies to it as recorded
    as_recorded = assess(ProfileResult.model_validate_json((PAIR / "bad.result.json").read_text()))
    assert as_recorded.stages[0].metrics.host_cap is None


def test_a_gpu_at_its_floor_leaves_the_host_step():
    import pandas as pd

    from kprof_mcp.parsers.kineto import KERNEL_COLUMNS, Trace

    api = pd.DataFrame(
        [
            {"name": "cudaLaunchKernel", "start": s, "dur": 5.0, "end": s + 5.0, "correlation": i, "tid": 1}
            for i, s in enumerate([0.0, 100.0])
        ]
    )
    k = pd.DataFrame(
        [
            {**{c: None for c in KERNEL_COLUMNS}, "name": "k", "start": 10.0, "dur": 5000.0, "end": 5010.0}
            | {"stream": 7, "correlation": 0},
            {**{c: None for c in KERNEL_COLUMNS}, "name": "k", "start": 5010.0, "dur": 5000.0, "end": 10010.0}
            | {"stream": 7, "correlation": 1},
        ],
        columns=KERNEL_COLUMNS,
    )
    empty = pd.DataFrame(columns=["name", "start", "dur", "end", "tid"])
    m = pd.DataFrame(columns=["name", "start", "dur", "end", "kind", "stream", "bytes", "correlation"])
    g = build(
        Trace(kernels=k, memops=m, api=api, ranges=empty, cpu_ops=empty, num_sms=132, device_name="H100")
    )
    assert replay(g).span_ns == pytest.approx(10010.0)
    free = replay(g, free_gpu)
    # the host's launches, then the two kernels each at the shortest a kernel takes on the GPU
    assert free.span_ns == pytest.approx(10.0 + 2 * g.gpu_floor_ns)

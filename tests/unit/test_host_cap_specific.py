"""A kernel-side change that keeps every launch cannot make a command's step shorter than its host's own step
(the trace replayed with every GPU operation at its floor: analysis.machine_inputs.host_floor_share), whether it
is generic advice or a specific cause such as too few blocks; fusion and work not needed may remove kernels and
their launches' host time with them, so they are not held to it. On the held-back ensemble recording (H100,
2026-11-27: eight 8-program recurrence kernels one after another on one stream)."""

import sys
from pathlib import Path

import pytest

from kprof_mcp.analysis.assessment import assess

CAL = Path(__file__).resolve().parents[1] / "calibration"


def test_too_few_blocks_on_a_command_cannot_beat_the_host():
    sys.path.insert(0, str(CAL))
    import table
    from record import slug

    p = next(
        p
        for n in dir(table)
        if n.startswith("HELDOUT") and n.endswith("_PAIRS")
        for p in getattr(table, n)
        if p.kernel == "ensemble_one_stream.py"
    )
    r = table.load(table.recorded_in(p) / slug(p.name) / "bad.result.json")
    rp = r.timeline["idle"]["replay"]
    cap = 1.0 - rp["gpu_free_ns"] / rp["recorded_ns"]  # by hand: 1 - 292.1 us / 4065.9 us = 0.928
    assert cap == pytest.approx(0.928, abs=0.001)
    s = r.stages[0]
    assert 1.0 - s.grid_blocks / s.sm_count > cap + 0.01  # uncapped, filling the SMs would claim 0.939
    # The stage's own what-if (the ranked list leaves it to the replay of the same launches side by side)
    few = next(o for o in assess(r).stages[0].diagnosis.opportunities if o.cause == "few_blocks")
    assert few.share == pytest.approx(cap)


def test_a_costlier_methods_host_time_above_the_lean_op_floor_goes_with_it():
    """The forty-first held-back set's candidate scores (H200, 2026-11-29): a GEMM over the whole item catalogue
    then a gather, far over the model's roof, with no counters. The host's own step (the replay with every GPU
    operation at its floor) is 150 µs of 406 µs, at 34.6 µs a launch where a lean eager op costs this process
    22.0 µs; the fix's whole step took 88.5 µs, under the host's step it was held to (+170 % for +411 %). The
    method's ops go with their host time above that floor: 1 − (1 − cap) · 22.0 / 34.6, +324 %. Other causes
    keep the host's step as it was."""
    from kprof_mcp.analysis.machine_inputs import host_floor_share, host_method_share

    sys.path.insert(0, str(CAL))
    import table
    from record import slug

    p = next(p for p in table.HELDOUT41_PAIRS if p.kernel == "candidate_scores_full_catalogue.py")
    r = table.load(table.recorded_in(p) / slug(p.name) / "bad.result.json")
    rp = r.timeline["idle"]["replay"]
    cap = host_floor_share(r)
    assert cap == pytest.approx(1 - rp["gpu_free_ns"] / rp["base_ns"])
    lean = rp["op_floor_ns"] / rp["host_per_launch_ns"]
    assert 0.6 < lean < 0.7 and host_method_share(r) == pytest.approx(1 - (1 - cap) * lean)
    top = assess(r).stages[0].diagnosis.opportunities[0]
    assert top.cause == "move_work" and top.share == pytest.approx(host_method_share(r))
    assert 300 < top.est_gain_pct < 350  # +324 % for +411 % measured

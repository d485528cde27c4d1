"""The block scheduler as a resource (analysis.diagnosis.dispatch): its use from the grid and the
measured dispatch rate, the limiter it makes, and the what-if that gives each program more work — on
the second held-back set's one-row-per-one-warp-program recordings (H100, 2026-11-25) and on built
metrics."""

import json
from pathlib import Path

import pytest

from kprof_mcp import machines
from kprof_mcp.analysis.assessment import stage_metrics
from kprof_mcp.analysis.diagnosis import Metrics, dispatch, opportunities
from kprof_mcp.analysis.diagnosis.limiter import NEAR_PEAK, limiter
from kprof_mcp.analysis.machine_inputs import machine_for
from kprof_mcp.models import ProfileResult
from kprof_mcp.render.diagnosis.worded import assess

ROOT = Path(__file__).resolve().parents[1]
ROWS = ROOT / "calibration" / "recorded-heldout2" / "one_row_per_one_warp_program"
H100 = machines.load("sm_90", "H100_SXM")


def _metrics(role: str) -> tuple[ProfileResult, Metrics]:
    r = ProfileResult.model_validate_json((ROWS / f"{role}.result.json").read_text())
    mhz = float(r.device.clocks_before.get("clocks.max.sm") or 0) or None
    return r, stage_metrics(r.stages[0], mhz, 1.0, r, machine_for(r))


def test_every_architecture_models_the_block_scheduler_with_its_source():
    for arch in machines.table()["archs"]:
        rate = machines.load(arch).levels["blocks"]
        assert rate.rate and 0.5 <= rate.rate <= 2.0, arch
        assert "block_rate.py" in rate.source


def test_one_row_per_one_warp_program_is_bound_by_the_block_scheduler():
    _, m = _metrics("bad")
    # 2^21 blocks at 1.07 per clock at the 1.59 GHz Nsight Compute ran at, but at most 1.66e9 a second
    # (the dispatcher's ceiling): 1.26 ms of the 1.26 ms.
    t = dispatch.busy_ns(m)
    assert t == pytest.approx(2**21 / min(1.07 * m.sm_clock_hz, 1.66e9) * 1e9)
    assert 0.95 < t / m.time_ns <= 1.0
    lim = limiter(m)
    assert lim.resource == "blocks" and lim.bound and lim.util >= NEAR_PEAK
    top = opportunities(m)[0]
    assert top.cause == "occupancy" and top.specific
    assert top.facts.resource == "blocks" and top.facts.next_limiter in ("dram", "l2")
    # The next limiter bounds it: the memory level's work at 90 % of its peak, not the dispatch time alone.
    nxt = next(u for u in lim.uses if u.key == top.facts.next_limiter)
    assert 1.0 - top.share == pytest.approx(nxt.util / 0.90, rel=1e-6)
    # Measured: 1475 -> 180.5 us (+718 %); the estimate is within 2x of it.
    gain = json.loads((ROWS.parent / "measured.json").read_text())["pairs"]["one row per one-warp program"][
        "measured_gain_pct"
    ]
    assert 0.5 <= top.est_gain_pct / gain <= 2.0


def test_the_fix_leaves_the_block_scheduler_below_its_limit():
    _, m = _metrics("good")
    lim = limiter(m)
    blocks = next(u for u in lim.uses if u.key == "blocks")
    assert blocks.util < NEAR_PEAK and lim.resource != "blocks"
    assert not any(o.facts.resource == "blocks" for o in opportunities(m))


def test_the_contract_names_the_block_scheduler_and_the_fix():
    r, _ = _metrics("bad")
    a = assess(r)
    assert "limited by the block scheduler" in a.root_cause.text
    top = a.opportunities[0]
    assert top.name.startswith("Give each program more work")
    assert "grid_blocks=2097152: the block scheduler at" in top.trigger


def _m(**kw) -> Metrics:
    base = dict(
        time_ns=1e6,
        sol_ns=1e5,
        dram_pct=10.0,
        compute_pct=5.0,
        machine=H100,
        dtype="float32",
        sm_count=132,
        clock_hz=1.5e9,
        grid_blocks=1_500_000,
    )
    base.update(kw)
    return Metrics(**base)


def test_without_counters_the_grid_and_the_rate_still_give_the_use():
    m = _m()  # event mode: no accounting, the clock the stage ran at
    assert dispatch.use(m) == pytest.approx(1.5e6 / (1.07 * 1.5e9) * 1e9 / 1e6)  # under the ceiling
    fast = _m(clock_hz=1.98e9)  # at boost the ceiling binds: 0.6 ns a block, not 1 / (1.07 x 1.98 GHz)
    assert dispatch.use(fast) == pytest.approx(1.5e6 / 1.66e9 * 1e9 / 1e6)
    assert limiter(m).resource == "blocks"


@pytest.mark.parametrize(
    "kw",
    [
        dict(grid_blocks=None),  # persistent grid, or none declared
        dict(kernels=2),  # the grid is one kernel's of several
        dict(kernel_busy=0.5),  # a timeline's span
        dict(grid_blocks=10_000),  # a grid the scheduler dispatches in a few microseconds
        dict(machine=None),
    ],
)
def test_no_block_use_where_it_cannot_be_the_stage_s(kw):
    assert dispatch.use(_m(**kw)) is None


def test_a_stage_that_is_not_dispatch_bound_gets_no_fewer_blocks_what_if():
    m = _m(grid_blocks=600_000, dram_pct=80.0)  # blocks at 37 %: DRAM limits
    lim = limiter(m)
    assert lim.resource == "dram"
    assert dispatch.fewer_blocks(m, lim, {"dram": 0.9}, 0.95) is None


def test_a_block_rate_measured_at_a_higher_clock_does_not_lower_the_peak(monkeypatch):
    """Calibrated at 1980 MHz (0.84 blocks per clock on an H200), the table's 1.07 (at 1305 MHz) stays:
    per clock the dispatcher is fastest at the lowest clock, and a lower peak would read a stage run at a
    lower clock above 100 %."""
    measured = {
        "measured": {"blocks": {"rate": 0.84, "unit": "thread blocks dispatched per SM clock (chip)"}}
    }
    monkeypatch.setattr(machines, "calibrated", lambda key: measured if key == "X" else {})
    machines.load.cache_clear()
    try:
        assert machines.load("sm_90", "X").rate("blocks") == pytest.approx(1.07)
        measured["measured"]["blocks"]["rate"] = 1.2
        machines.load.cache_clear()
        assert machines.load("sm_90", "X").rate("blocks") == pytest.approx(1.2)
    finally:
        machines.load.cache_clear()


def test_event_mode_words_a_dispatch_bound_stage_without_occupancy_or_next_limiter():
    """Event mode has no occupancy counter (the GPU run of calib_row_programs v0 in event mode raised
    in the wording before this test): every opportunity of a dispatch-bound stage words without it."""
    from kprof_mcp.render.diagnosis.words import words

    m = _m(dram_pct=None, compute_pct=None)  # no counters, no FLOP/byte model uses: the grid alone
    got = opportunities(m)
    top = got[0]
    assert top.cause == "occupancy" and top.facts.occupancy_pct is None and top.facts.next_limiter is None
    for o in got:
        name, trigger, hint = words(o)
        assert name and trigger and hint
    assert "then the" not in words(top)[1]


def test_event_mode_on_the_gpu_names_the_block_scheduler_without_counters():
    """calib_row_programs v0 profiled in event mode on an H200 at boost (2026-11-26, docs/evidence/
    machine-model/h200-2026-11-26-blocks run 3): no counters, the grid alone at the dispatcher's
    ceiling gives the limiter and the estimate (+915 %; v1 measured in the same run: +890 %)."""
    r = ProfileResult.model_validate_json(
        (ROOT / "fixtures" / "row_programs_v0_event_h200.result.json").read_text()
    )
    assert not r.stages[0].accounting and r.request["mode"] == "event"
    a = assess(r)
    assert "limited by the block scheduler" in a.root_cause.text
    top = a.opportunities[0]
    assert top.name.startswith("Give each program more work")
    assert 0.5 <= top.est_gain_pct / 890.0 <= 2.0

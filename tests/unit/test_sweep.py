"""sweep: the table's figures on a point recorded on an H100, and the whole pipeline on the CPU
(Triton interpreter) through the engine: points checked, timed, assessed, written and drawn."""

from pathlib import Path

import pytest

from kprof_mcp.engine import KprofError
from kprof_mcp.models import ProfileResult, SweepResult
from kprof_mcp.render.sweep import sweep_rows

EVENT = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "h100_event"
    / "vector_add"
    / "n=16777216_dtype=float32"
    / "20261122T043546.751072Z-v0"
)


def test_rows_of_a_point_recorded_on_an_h100():
    p = ProfileResult.model_validate_json((EVENT / "result.json").read_text())
    r = SweepResult(
        kernel="vector_add",
        param="n",
        values=[16777216],
        versions=["v0"],
        points=[p],
        device=p.device,
        created_at="x",
    )
    (row,) = sweep_rows(r)
    s = p.stages[0]
    assert row["n"] == 16777216 and row["version"] == "v0"
    assert row["time_us"] == pytest.approx(s.timing.median_ns / 1e3)
    assert row["gbps"] == pytest.approx(s.achieved_bytes_per_s / 1e9)
    # vector_add is far left of the ridge: % of roofline is its share of peak bandwidth.
    assert (
        row["pct_roofline"] == pytest.approx(s.pct_peak_bandwidth, rel=1e-6) and 75 < row["pct_roofline"] < 95
    )
    assert row["bottleneck"] == "Memory-bound" and row["top_opportunity"].startswith(
        "Reach peak DRAM bandwidth"
    )


def test_sweep_on_the_cpu_end_to_end(engine):
    out = engine.sweep("vector_add", "n", [1024, 4096, 100000], ["v0", "v1"], budget_ms=30)
    assert [(x["n"], x["version"]) for x in out.rows] == [
        (1024, "v0"),
        (1024, "v1"),
        (4096, "v0"),
        (4096, "v1"),
        (100000, "v0"),
        (100000, "v1"),
    ]
    assert all(x["time_us"] > 0 and x["timing_method"] == "cpu_wall_clock" for x in out.rows)
    d = out.sweep_dir
    assert not d.name.endswith(".partial") and {f.name for f in d.iterdir()} >= {
        "sweep.csv",
        "sweep.png",
        "sweep.json",
        "sweep.md",
    }
    assert out.png[:8] == b"\x89PNG\r\n\x1a\n"
    import pandas as pd

    csv = pd.read_csv(d / "sweep.csv")
    assert list(csv["n"]) == [1024, 1024, 4096, 4096, 100000, 100000]
    assert out.markdown.startswith("## Sweep: vector_add v0, v1 over n") and "| 100000 | v1 |" in out.markdown


def test_bad_sweeps_are_refused_before_anything_runs(engine):
    with pytest.raises(KprofError, match="no parameter 'q'"):
        engine.check_sweep("vector_add", "q", [1])
    with pytest.raises(KprofError, match="1 to 32 values"):
        engine.check_sweep("vector_add", "n", [])
    with pytest.raises(KprofError, match="n"):
        engine.check_sweep("vector_add", "n", [1024, -5])  # out of bounds: refused, nothing runs
    with pytest.raises(KprofError, match="swept parameter"):
        engine.check_sweep("vector_add", "n", [1024], params={"n": 4})
    with pytest.raises(KprofError, match="1 to 4 distinct versions"):
        engine.check_sweep("vector_add", "n", [1024], ["v0", "v9"])
    spec = engine.check_sweep("vector_add", "n", [1024])
    assert spec.req.versions == ["v1"]  # the latest by default

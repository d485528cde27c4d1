"""The contract renderer against golden text, on real H100 results and synthetic counter data."""

import os
from pathlib import Path

from conftest import FIXTURES, h100_result

from kprof_mcp import render
from kprof_mcp.engine import render_profile
from kprof_mcp.models import ProfileResult

GOLDEN = FIXTURES / "golden"
UPDATE = os.environ.get("KPROF_UPDATE_GOLDEN") == "1"


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text)
    assert path.exists(), f"golden file {path} missing (set KPROF_UPDATE_GOLDEN=1 once, then review it)"
    assert text == path.read_text()


def test_contract_vector_add_v0_h100():
    _check("vector_add_v0_h100.md", render.render_contract(h100_result("vector_add", "v0")))


def test_contract_matmul_v1_vs_v0_h100():
    _check(
        "matmul_v1_vs_v0_h100.md",
        render.render_contract(h100_result("matmul", "v1"), h100_result("matmul", "v0")),
    )


def _with_counters() -> ProfileResult:
    r = h100_result("matmul", "v0").model_copy(deep=True)
    s = r.stages[0]
    s.tc_pct, s.dram_pct, s.occupancy_pct, s.l2_hit_pct = 41.5, 22.0, 12.5, 55.0
    return r


def test_contract_with_counter_metrics():
    _check("matmul_counters_synthetic.md", render.render_contract(_with_counters()))


def test_contract_shape_is_exact():
    text = render.render_contract(h100_result("matmul", "v1"), h100_result("matmul", "v0"))
    lines = text.splitlines()
    assert lines[0] == "## Profile: matmul v1"
    assert lines[2] == "### Configuration"
    assert lines[3] == "| M | N | K | dtype |"
    assert lines[5] == "| 4096 | 4096 | 4096 | bfloat16 |"
    assert "| Stage | Duration (us) | TC% | DRAM% | Occ% | Bottleneck | Key Issue |" in lines
    assert any(ln.startswith("**Bottleneck**: Compute-bound") for ln in lines)
    assert any(ln.startswith("**Root cause**: ") for ln in lines)
    assert "### Top 3 Opportunities (ranked by estimated impact)" in lines
    opp = [ln for ln in lines if ln.startswith("1. ")][0]
    assert " — est. " in opp and "% gain — trigger: tc_pct=" in opp
    assert "| Metric | Previous | Current | Change |" in lines


def test_unmeasured_columns_are_na_never_zero():
    text = render.render_contract(h100_result("vector_add", "v0"))
    row = [ln for ln in text.splitlines() if ln.startswith("| add |")][0]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:5] == ["n/a", "n/a", "n/a"]


def test_cpu_result_makes_no_gpu_claims():
    r = h100_result("vector_add", "v0").model_copy(deep=True)
    r.device.kind = "cpu"
    for s in r.stages:
        s.peak_bytes_per_s = s.peak_flops_per_s = None
    text = render.render_contract(r)
    assert "**Bottleneck**: n/a (CPU timing" in text
    assert "Memory-bound" not in text and "% of peak" not in text


def test_report_has_roofline_timing_resources_and_warnings():
    r = h100_result("matmul", "v1")
    rep = render_profile(r).report
    for heading in (
        "## Roofline",
        "## Timing",
        "## Compiled kernel resources",
        "## Tiling",
        "## Device, clocks and versions",
        "## Correctness",
        "## Warnings",
    ):
        assert heading in rep
    assert "| matmul | matmul_kernel | 188 | 0 | 147456 | 8 | 3 | 512 | 3.88 |" in rep


def test_devlog_entry_compares_with_previous():
    v0, v1 = h100_result("matmul", "v0"), h100_result("matmul", "v1")
    first = render.render_devlog_entry(v0, None, ["x"], ["y"], "p0")
    prev = render.last_devlog_metrics(first)
    assert prev["version"] == "v0"
    second = render.render_devlog_entry(v1, prev, [], [], "p1")
    assert "| Duration | 205.02 μs | 6.5% faster |" in second
    assert "| Achieved TFLOPs/s | 670.36 | +6.9% |" in second
    assert (
        "**Performance** (NVIDIA H100 80GB HBM3, clocks not locked, bfloat16, M=4096, N=4096, K=4096):"
        in second
    )


def test_golden_dir_is_committed():
    assert Path(GOLDEN).is_dir()


def test_a_profile_is_set_against_its_baseline_once(monkeypatch):
    """The baseline's bootstrap runs once per profile (engine.run.render_profile), not once per
    section that shows it (the contract, and report.md which holds the contract)."""
    from kprof_mcp.analysis import baseline as vs_baseline
    from kprof_mcp.engine.run import render_profile

    calls = []
    real = vs_baseline.compare
    monkeypatch.setattr(vs_baseline, "compare", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    r = render_profile(h100_result("matmul", "v1"), h100_result("matmul", "v0"))
    assert calls == ["previous"], calls  # one stage: the stage's and the whole profile's CI are one
    assert r.contract.count("Verdict per stage") == 1 and r.report.count("Verdict per stage") == 1
    assert r.contract.split("### vs Baseline")[1] in r.report

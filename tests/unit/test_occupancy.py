"""Theoretical occupancy by CUDA's rules, checked against Nsight Compute's launch statistics of a
real H100 run and against known calculator results."""

import csv

import pytest
from conftest import FIXTURES, h100_result, unpacked

from kprof_mcp.analysis.occupancy import sm_limits, theoretical
from kprof_mcp.engine import render_profile

H100 = sm_limits("9.0")


def test_matches_nsight_computes_launch_statistics_of_the_h100_matmul():
    rows = list(csv.DictReader(open(unpacked(FIXTURES / "h100_ncu" / "ncu_matmul_v1_details.csv"))))
    wanted = ("Block Limit", "Registers Per Thread", "Dynamic Shared", "Theoretical Active Warps per SM")
    ncu = {
        r["Metric Name"]: float(r["Metric Value"].replace(",", ""))
        for r in rows
        if (r["Metric Name"] or "").startswith(wanted) or r["Metric Name"] == "Theoretical Occupancy"
    }
    o = theoretical(int(ncu["Registers Per Thread"]), int(ncu["Dynamic Shared Memory Per Block"]), 8, H100)
    assert o.limits == {
        "registers": ncu["Block Limit Registers"],
        "shared_memory": ncu["Block Limit Shared Mem"],
        "warps": ncu["Block Limit Warps"],
        "blocks": ncu["Block Limit SM"],
    }
    assert o.warps_per_sm == ncu["Theoretical Active Warps per SM"]
    assert o.occupancy_pct == ncu["Theoretical Occupancy"] == 12.5
    assert o.limited_by == "registers, shared_memory"


@pytest.mark.parametrize(
    "regs, smem, warps, blocks, pct, limiter",
    [
        (255, 0, 4, 2, 12.5, "registers"),  # 255 x 32 -> 8192 per warp: 2 warps per sub-partition
        (40, 0, 8, 6, 75.0, "registers"),  # 1280 per warp: 12 per sub-partition, 48 warps
        (32, 0, 8, 8, 100.0, "registers, warps"),
        (32, 100 * 1024, 4, 2, 12.5, "shared_memory"),  # 102400 + 1024 reserved -> 2 per 228 KB
        (16, 0, 1, 32, 50.0, "blocks"),  # 32 blocks of one warp: the block limit
        (255, 0, 32, 0, 0.0, "registers"),  # 262144 registers per block: does not launch
        (32, 228 * 1024, 4, 0, 0.0, "shared_memory"),  # over 227 KB per block
    ],
)
def test_h100_limits(regs, smem, warps, blocks, pct, limiter):
    o = theoretical(regs, smem, warps, H100)
    assert (o.blocks_per_sm, o.occupancy_pct, o.limited_by) == (blocks, pct, limiter)


def test_other_architectures_and_unknowns():
    ada = theoretical(32, 0, 4, sm_limits("sm_89"))  # 48 warps, 24 blocks per SM
    assert (ada.blocks_per_sm, ada.warps_per_sm, ada.occupancy_pct) == (12, 48, 100.0)
    assert sm_limits("7.0") is None and sm_limits(None) is None
    assert theoretical(32, 0, 4, None) is None and theoretical(None, 0, 4, H100) is None


def test_report_labels_it_theoretical_and_cpu_results_have_none():
    rep = render_profile(h100_result("matmul", "v1")).report
    assert "Occupancy, theoretical (from the launch), not measured" in rep
    assert "| matmul | 8 | 1 | 1 | 8 | 32 | 1 | 8 | 12.5 | registers, shared memory |" in rep
    r = h100_result("matmul", "v1").model_copy(deep=True)
    r.device.kind = "cpu"
    assert "not measured" not in render_profile(r).report.split("## Compiled kernel resources")[1]

"""`kprof device --calibrate` (issue 36, item 1): the microbenchmarks' work counted by hand, the
kernels' arithmetic run through Triton's interpreter, the recorded H100 calibration parsed and set
against the machine table, and the CLI's refusal without a GPU."""

import json
import subprocess
import sys

import pytest
import torch
from conftest import ROOT

from kprof_mcp import machines
from kprof_mcp.analysis.calibration import CalibrationError, compare, parse, table_rates
from kprof_mcp.child import calibrate as cal

H100 = ROOT / "kprof_mcp" / "calibrated" / "H100_SXM.json"


def test_work_counts_match_hand_counts():
    # 2 programs x 1024 values x 4 chains x 3 trips x 16 unrolled steps x 1 FFMA
    assert cal.pipe_ops(2, 1024, 3) == 2 * 1024 * 4 * 3 * 16
    assert cal.pipe_ops(1, 8, 1, unroll=1, chains=1, per_step=2) == 16  # HFMA2 counts 2
    assert cal.gemm_flops(8192, 8192, 8192) == 2 * 8192**3
    assert cal.copy_bytes(1 << 28, 4) == 2 << 30  # 1 GiB read + 1 GiB written
    assert cal.reread_bytes(3, 5, 2048) == 3 * 5 * 2048 * 4
    # 128 ops/clk/SM on 132 SMs at 1755 MHz for one second
    assert cal.per_sm_per_clock(128 * 132 * 1755e6, 1.0, 132, 1755) == pytest.approx(128)
    assert cal.per_clock(5e12, 1.0, 1500) == pytest.approx(5e12 / 1.5e9)


def test_fma_kernel_computes_what_is_counted():
    """Under the interpreter the FMA kernel does ITERS x UNROLL steps of x*a+b on 4 chains."""
    from kprof_mcp.child import calibrate_kernels as ck

    out = torch.empty(64)
    ck.fma_kernel[(2,)](out, 0.5, 1.0, 3, BLOCK=32, UNROLL=2, FP64=False)
    x = torch.arange(64, dtype=torch.float32) * 1e-9

    def steps(v):
        for _ in range(3 * 2):
            v = v * 0.5 + 1.0
        return v

    assert torch.allclose(out, steps(x) + steps(x + 1) + steps(x + 2) + steps(x + 3))


@pytest.mark.parametrize("local", [True, False])
def test_reread_kernel_reads_the_blocks_it_counts(local):
    from kprof_mcp.child import calibrate_kernels as ck

    src, out = torch.arange(4 * 32, dtype=torch.float32), torch.empty(2)
    ck.reread_kernel[(2,)](
        src, out, 5, 2 if local else 4, 1 if local else 2, BLOCK=32, CACHE=".ca", LOCAL=local
    )
    want = []
    for p in range(2):
        chunks = [p * 2 + i % 2 for i in range(5)] if local else [(p + 2 * i) % 4 for i in range(5)]
        want.append(sum(src[c * 32 : c * 32 + 32].sum().item() for c in chunks))
    assert out.tolist() == want  # 5 blocks of 32 per program: reread_bytes(2, 5, 32)


def _doc():
    return parse(json.loads(H100.read_text()))


def test_recorded_h100_calibration_parses_and_is_plausible():
    doc = _doc()
    assert doc["arch"] == "sm_90" and doc["sm_count"] == 132 and doc["device_key"] == "H100_SXM"
    m = doc["measured"]
    for name in ("fma", "fp64", "fp16", "alu", "xu", "tensor_bf16", "tensor_fp64", "dram", "l2"):
        assert "rate" in m[name], name
        assert m[name]["median"] <= m[name]["best"]
    # No measurement beats the documented peak by more than counting noise (the tensor rates are
    # datasheet FLOP per clock per SM: 4096 bf16, 256 fp64 on sm_90).
    assert m["fma"]["rate"] <= 128 * 1.02 and m["fma"]["rate"] > 100
    assert m["tensor_bf16"]["rate"] <= 4096 * 1.02
    assert m["dram"]["bytes_per_s"] <= 3.35e12
    assert m["fma"]["sass_opcodes"].get("FFMA", 0) >= 4 * 16  # the unrolled body is FFMA chains


def test_compare_sets_measured_beside_the_table():
    doc = _doc()
    table = {
        "pipes": {
            "fma": {"rate": 128, "unit": "fp32 thread-ops"},
            "tensor_fp4": {"rate": 16384, "unit": "FLOP"},
        },
        "memory": {"dram": {"rate": None, "unit": "bytes/s"}, "shared": {"rate": 128, "unit": "B/clk/SM"}},
    }
    rows = {r.name: r for r in compare(doc, table, peak_gbps=3350)}
    assert rows["fma"].ratio == pytest.approx(doc["measured"]["fma"]["rate"] / 128)
    assert rows["dram"].table == 3350e9 and rows["dram"].ratio == pytest.approx(
        doc["measured"]["dram"]["rate"] / 3350e9
    )
    assert (
        rows["tensor_fp4"].measured is None and rows["tensor_fp4"].used == 16384
    )  # not measured: the table's
    assert rows["shared"].skipped  # no benchmark: the reason, the table's rate used
    assert rows["tensor_bf16"].table is None and rows["tensor_bf16"].measured  # measured, not in this table
    # The model uses the measured rate where there is one, the documented one kept beside it
    # (kprof_mcp.machines.load, with the shipped H100 measurement folded in).
    shipped_doc = parse(json.loads(H100.read_text()))
    eff = machines.load("sm_90", "H100_SXM")
    assert eff.pipes["fma"].rate == shipped_doc["measured"]["fma"]["rate"] and eff.pipes["fma"].table == 128
    assert eff.levels["shared"].rate == 128
    assert table["pipes"]["fma"]["rate"] == 128  # the table itself untouched
    assert table_rates(None) == {}


def test_compare_against_the_shipped_machine_table_when_present():
    from kprof_mcp.engine.calibrate import rows_for

    rows, note = rows_for(_doc())
    if not machines.table():
        assert note and all(r.table is None for r in rows if r.name != "dram")
        return
    by = {r.name: r for r in rows}
    assert by["fma"].table and by["tensor_bf16"].table
    assert all(r.ratio is None or r.ratio < 1.1 for r in rows), [(r.name, r.ratio) for r in rows]


@pytest.mark.parametrize(
    "bad",
    [
        [],
        {"device": "x", "arch": "sm_90", "sm_count": 1},
        {"device": "x", "arch": "sm_90", "sm_count": 1, "measured": {"fma": {"rate": -1}}},
    ],
)
def test_parse_rejects_what_is_no_calibration(bad):
    with pytest.raises(CalibrationError):
        parse(bad)


def test_render_shows_each_row():
    from kprof_mcp.engine.calibrate import rows_for
    from kprof_mcp.render.calibration import calibration_markdown

    doc = _doc()
    rows, note = rows_for(doc)
    md = calibration_markdown(doc, rows, note)
    assert "| fma |" in md and "| dram |" in md and "GB/s" in md and "skipped:" in md


def test_shipped_is_found_by_device_key():
    from kprof_mcp.engine.calibrate import device_key, shipped

    assert shipped("H100_SXM")["device"] == _doc()["device"]
    assert shipped("../etc") is None and shipped("NOPE") is None
    assert device_key("NVIDIA H100 80GB HBM3") == "H100_SXM"


def test_cli_calibrate_without_a_gpu_fails_and_writes_nothing(tmp_path):
    env = {"KPROF_FORCE_CPU": "1", "KPROF_WORKSPACE": str(tmp_path), "PATH": "/usr/bin:/bin"}
    cp = subprocess.run(
        [sys.executable, "-m", "kprof_mcp.cli", "device", "--calibrate", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert cp.returncode != 0
    assert "needs an NVIDIA GPU" in cp.stderr and "nothing was measured" in cp.stderr
    assert not (tmp_path / "out").exists()


def test_the_block_scheduler_is_a_row_of_the_table_and_its_benchmark_launches_empty_blocks(monkeypatch):
    """`blocks` (thread blocks dispatched per SM clock, chip-wide) is compared like a level; the
    benchmark's kernel does nothing in any block (run through Triton's interpreter)."""
    by = {r.name: r for r in compare({"measured": {}}, machines.table()["archs"]["sm_90"])}
    assert by["blocks"].table == pytest.approx(1.07) and by["blocks"].measured is None
    assert "blocks" in cal.SCHEDULER
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from kprof_mcp.child import calibrate_kernels as ck

    out = torch.full((1,), 7, dtype=torch.int32)
    ck.empty_kernel[(64,)](out, -1)
    assert out.item() == 7  # no block stored
    ck.empty_kernel[(64,)](out, 5)
    assert out.item() == 5  # the branch is real: the block whose id is the flag stores it

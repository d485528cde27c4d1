"""Readers of external output not covered elsewhere: nvidia-smi's query CSV (a line recorded on
the H100, kept in tests/fixtures/h100_ncu/*/profiler.json) and Triton's compiled-kernel and
autotuner metadata (a real ``triton.Config``; the compiled kernel's attributes as Triton 3.x
names them, since a CompiledKernel exists only on a GPU)."""

import json
from types import SimpleNamespace

from conftest import FIXTURES

from kprof_mcp.parsers import nvidia_smi
from kprof_mcp.parsers import triton as triton_meta
from kprof_mcp.tools.nvidia_smi import GPU_FIELDS


def test_nvidia_smi_query_recorded_on_the_h100():
    # nvidia-smi --query-gpu=<GPU_FIELDS> --format=csv,noheader,nounits, recorded on the H100 (2026-11-22)
    (row,) = nvidia_smi.parse_query(
        (FIXTURES / "h100_shared" / "nvidia_smi_query.csv").read_text(), GPU_FIELDS
    )
    assert (
        row["name"] == "NVIDIA H100 80GB HBM3"
        and row["clocks.max.sm"] == "1980"
        and row["clocks.sm"] == "345"
    )
    assert row["mig.mode.current"] == "Disabled" and row["persistence_mode"] == "Enabled"


def test_nvidia_smi_query_rows_and_garbled_lines():
    rec = json.loads((FIXTURES / "h100_ncu" / "annotation_matmul_v1" / "profiler.json").read_text())[
        "nvidia_smi_before"
    ]
    fields = list(rec)
    line = ", ".join(rec[f] for f in fields)
    rows = nvidia_smi.parse_query(line + "\n" + line.replace("0, NVIDIA", "1, NVIDIA") + "\n", fields)
    assert [r["index"] for r in rows] == ["0", "1"] and rows[0]["name"] == "NVIDIA H100 80GB HBM3"
    assert rows[0]["clocks.max.sm"] == "1980" and rows[0]["mig.mode.current"] == "Disabled"
    # a truncated line is left out, never misaligned; no output is no GPU
    assert nvidia_smi.parse_query(line.rsplit(",", 2)[0], fields) == []
    assert nvidia_smi.parse_query("", fields) == []
    assert set(fields) <= set(GPU_FIELDS)  # what the parser was given is what kprof queries


def test_triton_config_tiling_and_history():
    import triton

    best = triton.Config({"BLOCK_M": 128, "BLOCK_N": 256}, num_warps=8, num_stages=3)
    other = triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=2)
    assert triton_meta.config_dict(best) == {
        "BLOCK_M": 128,
        "BLOCK_N": 256,
        "num_warps": 8,
        "num_stages": 3,
        **({"num_ctas": 1} if getattr(best, "num_ctas", None) else {}),
    }
    tuner = SimpleNamespace(
        best_config=best, configs_timings={other: [0.30, 0.29, 0.31], best: [0.18, 0.17, 0.19]}
    )
    tiling, hist = triton_meta.tiling("matmul", tuner, None)
    assert tiling["source"] == "autotuned" and tiling["BLOCK_N"] == 256
    assert [c["timing_ms"][0] for c in hist["configs"]] == [0.18, 0.30]  # fastest first
    assert triton_meta.autotuned_here(tuner) and not triton_meta.autotuned_here(SimpleNamespace())
    cached = SimpleNamespace(best_config=best, configs_timings=None)  # config from Triton's autotune cache
    assert "no timings this run" in triton_meta.tiling("matmul", cached, None)[1]["note"]
    assert triton_meta.tiling("add", None, {"BLOCK": 1024}) == ({"source": "fixed", "BLOCK": 1024}, None)
    assert triton_meta.tiling("add", None, None) == (None, None)


def test_compiled_kernel_files_and_resources():
    md = SimpleNamespace(name="matmul_kernel", shared=147456, num_warps=8, num_stages=3)
    ret = SimpleNamespace(
        asm={"ttir": "module {}", "ptx": ".version 8.7", "cubin": b"\x7fELF"},
        metadata=md,
        n_regs=188,
        n_spills=0,
        _init_handles=lambda: None,
    )
    files = triton_meta.compiled_files(ret)
    assert files == {"kernel.ttir": "module {}", "kernel.ptx": ".version 8.7", "kernel.cubin": b"\x7fELF"}
    r = triton_meta.resources(ret)
    assert (
        r.kernel_name,
        r.registers_per_thread,
        r.shared_memory_bytes,
        r.num_warps,
        r.local_spill_bytes,
    ) == ("matmul_kernel", 188, 147456, 8, 0)
    # A torch op or an interpreter run returns no CompiledKernel: nothing to read, not an error.
    assert (
        triton_meta.compiled_files(None) is None
        and triton_meta.compiled_files(SimpleNamespace(asm=None)) is None
    )

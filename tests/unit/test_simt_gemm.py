"""A GEMM library's SIMT kernels in a stage whose model says tensor cores (an fp32 GEMM with TF32 off):
the kernels' names say the math ran on the FMA pipes (analysis.machine_inputs.dot_on_fma_pipes), so the
stage's utilisation is of the FP32 peak and the machine model moves the FMA pipe's dot products to the
tensor cores at TF32. The names are the ones PyTorch 2.11's cuBLAS/cuDNN launched on an H200
(docs/evidence/machine-model/kernel_names-h200-2026-11-26.txt); the stage is the second held-back set's
recorded GEMM step (nsys, H100) with its cuBLAS kernel renamed and its FLOP model set to 75 % of the FP32
peak over its measured time (what a SIMT GEMM reaches)."""

import json
from pathlib import Path

import pytest

from kprof_mcp.analysis.diagnosis import opportunities
from kprof_mcp.analysis.machine_inputs import dot_on_fma_pipes
from kprof_mcp.models import ProfileResult
from kprof_mcp.render.diagnosis import assess

REC = (
    Path(__file__).resolve().parents[1]
    / "calibration"
    / "recorded-heldout2"
    / "copy_and_compute_on_one_stream"
)
NAMES = (
    Path(__file__).resolve().parents[2]
    / "docs"
    / "evidence"
    / "machine-model"
    / "kernel_names-h200-2026-11-26.txt"
)


def _section(title: str) -> list[str]:
    text = NAMES.read_text().split(f"## {title}\n", 1)[1].split("## ", 1)[0]
    return [line.strip() for line in text.splitlines() if line.strip()]


def _as_simt(name: str) -> dict:
    d = json.loads((REC / "bad.result.json").read_text())
    s = d["stages"][0]
    s["ncu_kernels"] = [name if n.startswith("nvjet") else n for n in s["ncu_kernels"]]
    for k in d["timeline"]["kernel_summary"]:
        k["name"] = name if k["name"].startswith("nvjet") else k["name"]
    s["dtype"] = "float32"
    s["flops"] = 0.75 * 66.9e12 * s["timing"]["median_ns"] * 1e-9  # 75 % of the H100 SXM FP32 peak
    return d


@pytest.mark.parametrize(
    "title", ["fp32 matmul, TF32 off", "fp32 conv2d, TF32 off", "fp32 bmm small, TF32 off"]
)
def test_tf32_off_kernels_move_the_fma_pipe_s_dot_to_tf32(title):
    simt = _section(title)[0]
    r = ProfileResult.model_validate(_as_simt(simt))
    s = dot_on_fma_pipes(r.stages[0], r)
    assert not s.tensor_cores and s.peak_flops_per_s == pytest.approx(66.9e12, rel=0.02)
    m = assess(r).stages[0].metrics
    assert not m.tensor_work and 70 < m.compute_pct <= 100  # of the FP32 peak, not the tensor one
    top = opportunities(m)[0]
    assert top.cause == "move_work" and (top.facts.resource, top.facts.target) == ("fma", "tensor_tf32")
    assert top.share <= m.best_headroom + 1e-9  # never past the best legal mix's speed of light


@pytest.mark.parametrize(
    "title", ["fp32 matmul, TF32 on", "bf16 matmul", "fp16 matmul", "fp32 conv2d, TF32 on"]
)
def test_tensor_core_kernels_stay_on_the_tensor_cores(title):
    gemm = _section(title)[0]
    r = ProfileResult.model_validate(_as_simt(gemm))
    assert dot_on_fma_pipes(r.stages[0], r).tensor_cores
    m = assess(r).stages[0].metrics
    # No move of the FMA pipe's dot to the tensor cores (the library GEMM far under its tensor roof, as this
    # synthetic trace makes it, is a what-if of its own: catalogue.library_gemm_excess).
    moves = [o for o in opportunities(m) if o.cause == "move_work"]
    assert m.tensor_work and all(o.facts.move == "library_gemm" for o in moves)

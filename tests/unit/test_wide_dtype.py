"""Float64 kernels in a narrower stage (type promotion in eager PyTorch): the element type each kernel's
name carries (analysis.machine_inputs.kernel_real_bytes), the share of the stage's kernel time float32
removes (wide_share: each float64 kernel moves half its bytes) and the over-fetch opportunity it makes,
on the third held-back set's spectrogram recordings (H100, 2026-11-26: a numpy float64 window promotes
the FFT to complex128) and its fix (float32 throughout: nothing to narrow)."""

import json
from pathlib import Path

import pytest

from kprof_mcp.analysis.assessment import stage_metrics
from kprof_mcp.analysis.diagnosis import opportunities
from kprof_mcp.analysis.machine_inputs import kernel_real_bytes, machine_for, wide_share
from kprof_mcp.models import ProfileResult

PAIR = Path(__file__).resolve().parents[1] / "calibration" / "recorded-heldout3" / "float64_by_type_promotion"


def _result(name: str) -> ProfileResult:
    return ProfileResult.model_validate_json((PAIR / name).read_text())


@pytest.mark.parametrize(
    "name,size",
    [
        (
            "void at::native::vectorized_elementwise_kernel<(int)2, at::native::CUDAFunctorOnSelf_add<double>>",
            8,
        ),
        ("void vector_fft_r2c<(unsigned int)1024, EPT<(unsigned int)16>, unsigned int, double>(T9)", 8),
        ("void y<c10::complex<double>>", 8),
        ("void y<c10::complex<float>>", 4),
        ("softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10>", 2),
        ("ReduceOp<float, MeanOps<double>>", 4),  # the first type: the kernel's input
        ("x<__nv_bfloat16>", 2),
        ("z<float4>", None),
        ("abs_kernel_kernel", None),
        ("sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8", None),
    ],
)
def test_the_element_type_a_kernel_name_carries(name, size):
    assert kernel_real_bytes(name) == size


def test_the_promoted_spectrogram_s_float64_kernels_are_its_top_cause():
    r = _result("bad.result.json")
    s = r.stages[0]
    share, kernels = wide_share(s, r)
    rows = {
        k["name"]: float(k["total_ns"]) for k in r.timeline["kernel_summary"] if k["name"] in s.ncu_kernels
    }
    wide = sum(t for n, t in rows.items() if kernel_real_bytes(n) == 8)
    assert kernels == 6  # mul, FFT, a copy, log, add, pow: named double; abs_kernel names no type
    assert share == pytest.approx(0.5 * wide / sum(rows.values()))
    m = stage_metrics(s, None, 1.0, r, machine_for(r))
    top = opportunities(m)[0]
    assert top.cause == "over_fetch" and top.facts.dtype_from == "float64" and top.facts.kernels == 6
    gain = json.loads((PAIR.parent / "measured.json").read_text())["pairs"]["float64 by type promotion"][
        "measured_gain_pct"
    ]
    assert 0.5 <= top.est_gain_pct / gain <= 2.0  # +58 % for +93 % measured


def test_the_float32_fix_has_nothing_to_narrow():
    r = _result("good.result.json")
    assert wide_share(r.stages[0], r) is None


def test_a_float64_model_is_not_narrowed():
    r = _result("bad.result.json")
    s = r.stages[0].model_copy(update={"dtype": "float64"})
    assert wide_share(s, r) is None

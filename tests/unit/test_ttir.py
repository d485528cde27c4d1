"""parsers/ttir on real TTIR (tests/fixtures/ttir: two kernels compiled for sm_90 by Triton 3.9 on a
CPU, make_ttir.py): each operation the machine model weighs, with the user's source line — through
named locations, call sites (tl.sum's body reports the caller's line) and all."""

from pathlib import Path

from kprof_mcp.analysis.diagnosis.moves import TRANSCENDENTALS, _precise
from kprof_mcp.parsers.ttir import ir_ops

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "ttir"


def _ops(name: str) -> set[tuple[str, str, str]]:
    return {(o["kind"], o["detail"], o["line"]) for o in ir_ops((FIX / f"{name}.ttir").read_text())}


def test_math_division_fp64_and_index_ops_by_source_line():
    assert _ops("mixed") == {
        ("libdevice", "__nv_sinf", "make_ttir.py:20"),
        ("libdevice", "__nv_fast_cosf", "make_ttir.py:20"),
        ("math", "exp", "make_ttir.py:20"),  # tl.exp: ex2.approx, already the fast path
        ("int_div", "divsi i64", "make_ttir.py:21"),
        ("int_div", "remsi i64", "make_ttir.py:21"),
        ("f64", "mulf", "make_ttir.py:22"),
        ("f64", "addf", "make_ttir.py:22"),
        # tl.div_rn / tl.sqrt_rn are the IEEE slow paths; the plain `x / 3.0` (div.full) is not listed
        ("fdiv", "precise f32", "make_ttir.py:23"),
        ("fsqrt", "precise f32", "make_ttir.py:23"),
    }


def test_dots_with_their_precision_and_a_multiply_and_sum_turned_into_a_dot():
    assert _ops("dots") == {
        ("dot", "f32 tf32", "make_ttir.py:32"),  # tl.dot's default on fp32: tensor cores at TF32
        (
            "dot",
            "f32 ieee",
            "make_ttir.py:33",
        ),  # tl.sum(a[:, :, None] * b[None, :, :]): Triton makes it a dot
        ("dot", "f32 ieee", "make_ttir.py:34"),  # input_precision="ieee": the FMA pipes
        ("atomic", "fadd", "make_ttir.py:35"),
    }


def test_only_precise_libdevice_transcendentals_are_moved_to_mufu():
    assert _precise("__nv_sinf") and _precise("__nv_powf") and not _precise("__nv_fast_cosf")
    assert not _precise("__nv_fmaf") and "sin" in TRANSCENDENTALS

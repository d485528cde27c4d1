"""The fourth held-back set (HELDOUT4_PAIRS): each kernel version matches its reference on the CPU
(Triton interpreter, small and ragged sizes, fp16: the interpreter miscomputes bf16), each version's
launch is the planted problem or its fix and nothing else, the models are the work, and both
variants of each command script run on the CPU (small sizes) and agree."""

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from kprof_mcp.packages import available, load

HERE = Path(__file__).resolve().parent
KERNELS_DIR = HERE / "kernels"
COMMANDS_DIR = HERE / "commands"
sys.path.insert(0, str(HERE))
from pairs import HELDOUT4_PAIRS  # noqa: E402

GEMM_SMALL = [
    {"M": 256, "N": 512, "K": 128, "dtype": "float16"},
    {"M": 130, "N": 200, "K": 72, "dtype": "float16"},  # ragged tiles and K steps
    {"M": 1, "N": 1, "K": 1, "dtype": "float16"},
]
SMALL = {
    "calib_square_roundtrip": [
        {"M": 5, "N": 4096, "dtype": "float16"},  # two steps of the row loop
        {"M": 3, "N": 1000, "dtype": "float16"},  # a ragged row
        {"M": 1, "N": 1, "dtype": "float16"},
    ],
    "calib_upcast_dot": GEMM_SMALL,
    "calib_no_pipelining": GEMM_SMALL,
    "calib_tile_order": GEMM_SMALL,
}


def _pkg(name):
    return load(available([KERNELS_DIR])[name])


def _run(name, params, version):
    pkg = _pkg(name)
    p = pkg.validate_params(params)
    inputs = pkg.make_inputs(p, "cpu")
    plan = pkg.version(version).build(inputs, p)
    assert [s.name for s in plan.stages] == [s.name for s in pkg.version(version).stages]
    for stage in plan.stages:
        stage.fn()
    return pkg, p, inputs, plan


def test_every_heldout4_kernel_is_tested_here():
    assert {p.kernel for p in HELDOUT4_PAIRS if not p.command} == set(SMALL)


@pytest.mark.parametrize("name, params", [(n, p) for n in SMALL for p in SMALL[n]])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(name, params, version):
    pkg, p, inputs, plan = _run(name, params, version)
    out, ref = plan.output(), pkg.reference(inputs, p)
    assert out.shape == ref.shape
    assert torch.isfinite(out).all(), "unwritten (NaN-poisoned) outputs remain"
    err = float((out.double() - ref.double()).norm() / max(float(ref.double().norm()), 1e-30))
    assert err <= pkg.tolerance(p["dtype"]), err


def _tilings(name, params):
    (s0,), (s1,) = (_run(name, params, v)[3].stages for v in ("v0", "v1"))
    return s0.tiling, s1.tiling


@pytest.mark.parametrize(
    "name, knob, bad, good",
    [
        ("calib_upcast_dot", "UPCAST", True, False),
        ("calib_no_pipelining", "num_stages", 1, 3),
        ("calib_tile_order", "GROUP_M", 1, 8),
    ],
)
def test_gemm_versions_differ_in_one_knob(name, knob, bad, good):
    t0, t1 = _tilings(name, GEMM_SMALL[0])
    assert (t0[knob], t1[knob]) == (bad, good)
    assert {k: v for k, v in t0.items() if k != knob} == {k: v for k, v in t1.items() if k != knob}


def test_tile_order_v0_row_major_v1_grouped():
    """The kernel's program → tile map: GROUP_M=1 walks C's tiles row by row; GROUP_M=8 walks 8 row
    blocks at a time (checked by evaluating the kernel's index arithmetic in Python)."""

    def order(num_m, num_n, group_m):
        tiles = []
        for pid in range(num_m * num_n):
            per_group = group_m * num_n
            first_m = (pid // per_group) * group_m
            rows = min(num_m - first_m, group_m)
            tiles.append((first_m + (pid % per_group) % rows, (pid % per_group) // rows))
        return tiles

    row_major = order(32, 128, 1)
    assert row_major[:3] == [(0, 0), (0, 1), (0, 2)] and {m for m, _ in row_major[:132]} == {0, 1}
    grouped = order(32, 128, 8)
    assert {m for m, _ in grouped[:132]} == set(range(8)) and {n for _, n in grouped[:132]} == set(range(17))
    assert sorted(grouped) == sorted(row_major)  # every tile once


def test_square_roundtrip_v0_writes_the_fp32_squares():
    _, p, inputs, plan0 = _run("calib_square_roundtrip", {"M": 3, "N": 1000, "dtype": "float16"}, "v0")
    assert plan0.stages[0].tiling["fused"] is False and plan0.stages[0].tiling["map_grid"] == [1]
    plan1 = _run("calib_square_roundtrip", {"M": 3, "N": 1000, "dtype": "float16"}, "v1")[3]
    assert plan1.stages[0].tiling["fused"] is True and "map_grid" not in plan1.stages[0].tiling


@pytest.mark.parametrize("name", sorted(SMALL))
def test_models_are_the_work_at_the_defaults(name):
    pkg = _pkg(name)
    p = pkg.validate_params({})
    (st,) = pkg.version("v0").stages
    assert [v.stages for v in pkg.versions] == [pkg.version("v0").stages] * 2  # one model for both
    assert st.tensor_cores == (name != "calib_square_roundtrip")
    if name == "calib_square_roundtrip":
        assert st.flops(p) == 2 * 16384 * 8192 and st.bytes(p) == 2 * 16384 * 8192 + 4 * 16384
    else:
        m, n, k = p["M"], p["N"], p["K"]
        assert (m, n, k) == ((4096, 32768, 4096) if name == "calib_tile_order" else (4096, 4096, 4096))
        assert st.flops(p) == 2 * m * n * k and st.bytes(p) == 2 * (m * k + k * n + m * n)


def _script(name):
    if str(COMMANDS_DIR) not in sys.path:
        sys.path.insert(0, str(COMMANDS_DIR))
    spec = importlib.util.spec_from_file_location(f"heldout4_{name}", COMMANDS_DIR / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", ["lm_head_vocab", "optimizer_loop"])
def test_command_variants_run_on_the_cpu_and_agree(name):
    mod = _script(name)
    outs = []
    for variant in ("bad", "good"):
        loop, output = mod.make(variant, cuda=False)
        loop(2)
        outs.append(output())
    assert torch.isfinite(outs[0]).all() and outs[0].dtype == outs[1].dtype == torch.float32
    assert outs[0].shape == outs[1].shape and outs[0].abs().max() > 0
    torch.testing.assert_close(outs[0], outs[1], rtol=1e-5, atol=1e-6)


def test_lm_head_good_variant_pads_the_vocabulary_only():
    mod = _script("lm_head_vocab")
    assert mod.VOCAB % 8 != 0 and mod.VOCAB_PADDED % 64 == 0 and mod.VOCAB_PADDED - mod.VOCAB < 64
    src = (COMMANDS_DIR / "lm_head_vocab.py").read_text()
    assert src.count('variant == "good"') == 1 and "w.new_zeros(padded - vocab, width)" in src


def test_optimizer_variants_differ_in_the_implementation_only():
    mod = _script("optimizer_loop")
    assert len(mod.shapes(mod.LAYERS, mod.WIDTH, mod.VOCAB)) == 291
    src = (COMMANDS_DIR / "optimizer_loop.py").read_text()
    assert "foreach=False)" in src and "fused=True)" in src
    assert src.count("torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01, ") == 2

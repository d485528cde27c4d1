"""The sixth held-back set (HELDOUT6_PAIRS): each kernel version matches its reference on the CPU
(Triton interpreter, small and ragged sizes, fp16/fp32: the interpreter miscomputes bf16), each version's
launch is the planted problem or its fix and nothing else, the models are the work, and both variants of
each command script run on the CPU (small sizes) and agree."""

import importlib
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
from pairs import ALL_PAIRS, HELDOUT6_PAIRS  # noqa: E402

SMALL = {
    "calib_tf32x3": [
        {"M": 256, "N": 128, "K": 96},  # three K steps
        {"M": 130, "N": 200, "K": 72},  # ragged tiles and K steps
        {"M": 1, "N": 1, "K": 1},
    ],
    "calib_window_sum": [
        {"R": 3, "T": 300, "W": 64},  # the default window, a ragged row
        {"R": 2, "T": 50, "W": 7},
        {"R": 1, "T": 40, "W": 64},  # a row shorter than the window
        {"R": 1, "T": 1, "W": 1},
    ],
    "calib_cache_capacity": [
        {"B": 3, "H": 2, "D": 16, "CAP": 256, "LEN": 80, "dtype": "float32"},  # ragged last blocks
        {"B": 2, "H": 3, "D": 32, "CAP": 128, "LEN": 128, "dtype": "float16"},  # a length at the capacity
        {"B": 1, "H": 1, "D": 16, "CAP": 64, "LEN": 1, "dtype": "float32"},
    ],
    "calib_philox_dropout": [
        {"n": 10000, "dtype": "float32"},  # three programs, a ragged last one
        {"n": 5001, "dtype": "float16"},
        {"n": 1, "dtype": "float32"},
    ],
}


def _pkg(name):
    return load(available([KERNELS_DIR])[name])


def _mod(name):
    """The package's module (its helpers: lengths, keep_mask, the reference's Philox)."""
    if str(KERNELS_DIR) not in sys.path:
        sys.path.insert(0, str(KERNELS_DIR))
    return importlib.import_module(name)


def _run(name, params, version):
    pkg = _pkg(name)
    p = pkg.validate_params(params)
    inputs = pkg.make_inputs(p, "cpu")
    plan = pkg.version(version).build(inputs, p)
    assert [s.name for s in plan.stages] == [s.name for s in pkg.version(version).stages]
    for stage in plan.stages:
        stage.fn()
    return pkg, p, inputs, plan


def test_every_heldout6_kernel_is_tested_here():
    assert {p.kernel for p in HELDOUT6_PAIRS if not p.command} == set(SMALL)
    assert not {p.name for p in HELDOUT6_PAIRS} & {p.name for p in ALL_PAIRS}


@pytest.mark.parametrize("name, params", [(n, p) for n in SMALL for p in SMALL[n]])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(name, params, version):
    pkg, p, inputs, plan = _run(name, params, version)
    out, ref = plan.output(), pkg.reference(inputs, p)
    assert out.shape == ref.shape
    assert torch.isfinite(out).all(), "unwritten (NaN-poisoned) outputs remain"
    err = float((out.double() - ref.double()).norm() / max(float(ref.double().norm()), 1e-30))
    assert err <= pkg.tolerance(p["dtype"]), err


def test_dropout_mask_is_exact_and_keeps_nine_tenths():
    pkg, p, inputs, plan = _run("calib_philox_dropout", {"n": 12288, "dtype": "float32"}, "v0")
    out1 = _run("calib_philox_dropout", {"n": 12288, "dtype": "float32"}, "v1")[3].output()
    kept = plan.output() != 0
    assert torch.equal(kept, out1 != 0)  # the same mask, element for element
    assert torch.equal(kept, _mod("calib_philox_dropout").keep_mask(12288, "cpu") & (inputs["x"] != 0))
    assert 0.88 < float(kept.double().mean()) < 0.92


def test_dropout_reference_philox_matches_known_values():
    # Philox4x32-10 known-answer test (Random123's kat_vectors): counter 0, key 0
    c = torch.zeros(1, dtype=torch.int64)
    got = [int(v[0]) for v in _mod("calib_philox_dropout")._philox_ref(c, 0)]
    assert got == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]


def _stages(name, params):
    (s0,), (s1,) = (_run(name, params, v)[3].stages for v in ("v0", "v1"))
    return s0, s1


@pytest.mark.parametrize(
    "name, params, knob, bad, good",
    [
        ("calib_tf32x3", {"M": 64, "N": 64, "K": 32}, "PRECISION", "tf32x3", "tf32"),
        ("calib_window_sum", {"R": 2, "T": 100, "W": 64}, "RUNNING_SUM", False, True),
        (
            "calib_cache_capacity",
            {"B": 1, "H": 2, "D": 16, "CAP": 128, "LEN": 40, "dtype": "float32"},
            "TO_LENGTH",
            False,
            True,
        ),
        ("calib_philox_dropout", {"n": 5000, "dtype": "float32"}, "PER_COUNTER", False, True),
    ],
)
def test_versions_differ_in_one_knob(name, params, knob, bad, good):
    s0, s1 = _stages(name, params)
    t0, t1 = s0.tiling, s1.tiling
    assert (t0[knob], t1[knob]) == (bad, good)
    assert {k: v for k, v in t0.items() if k != knob} == {k: v for k, v in t1.items() if k != knob}
    assert s0.grid_blocks == s1.grid_blocks and not s0.persistent and not s1.persistent


def test_cache_lengths_are_a_quarter_of_the_capacity():
    pkg = _pkg("calib_cache_capacity")
    p = pkg.validate_params({})
    lens = _mod("calib_cache_capacity").lengths(p)
    assert len(lens) == 32 and min(lens) >= 768 and max(lens) < 1280
    assert 0.22 < sum(lens) / (32 * p["CAP"]) < 0.28


@pytest.mark.parametrize("name", sorted(SMALL))
def test_models_are_the_work_at_the_defaults(name):
    pkg = _pkg(name)
    p = pkg.validate_params({})
    (st,) = pkg.version("v0").stages
    assert [v.stages for v in pkg.versions] == [pkg.version("v0").stages] * 2  # one model for both
    assert st.tensor_cores == (name == "calib_tf32x3")
    if name == "calib_tf32x3":
        m = n = k = 4096
        assert st.flops(p) == 2 * m * n * k and st.bytes(p) == 4 * (m * k + k * n + m * n)
    elif name == "calib_window_sum":
        assert st.flops(p) == 2 * 16384 * 4096 and st.bytes(p) == 2 * 4 * 16384 * 4096
    elif name == "calib_cache_capacity":
        filled = sum(_mod("calib_cache_capacity").lengths(p))
        assert st.flops(p) == 4 * 32 * 128 * filled
        assert st.bytes(p) == 2 * (2 * 32 * 128 * filled + 2 * 32 * 32 * 128) + 4 * 32
    else:
        assert st.flops(p) == 2**27 and st.bytes(p) == 2 * 2 * 2**27


def _script(name):
    if str(COMMANDS_DIR) not in sys.path:
        sys.path.insert(0, str(COMMANDS_DIR))
    spec = importlib.util.spec_from_file_location(f"heldout6_{name}", COMMANDS_DIR / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", ["tensor_from_lists", "per_sample_copy"])
def test_command_variants_run_on_the_cpu_and_agree(name):
    mod = _script(name)
    outs = []
    for variant in ("bad", "good"):
        loop, output = mod.make(variant, cuda=False)
        loop(5)  # more steps than batches: the batches cycle
        outs.append(output())
    assert torch.isfinite(outs[0]).all() and outs[0].dtype == outs[1].dtype == torch.float32
    assert outs[0].shape == outs[1].shape == (5, *outs[0].shape[1:]) and outs[0].abs().max() > 0
    torch.testing.assert_close(outs[0], outs[1], rtol=0, atol=0)


def test_command_models_match_the_scripts_sizes():
    models = {p.kernel: p.models for p in HELDOUT6_PAIRS if p.command}
    for name in ("tensor_from_lists", "per_sample_copy"):
        mod = _script(name)
        tokens, d, hid = mod.BATCH * mod.SEQ, mod.WIDTH, mod.HIDDEN
        step = models[f"{name}.py"]["step"]
        assert step["flops"] == pytest.approx(2 * 2 * tokens * d * hid, rel=1e-2)
        # ids (int64), embedding rows, weights, kept means; activations D→hid→D once each way
        low = 8 * tokens + 2 * tokens * d + 2 * 2 * d * hid + 4 * mod.BATCH * d
        assert low < step["bytes"] < low + 2 * 2 * tokens * (2 * d + 2 * hid)


def test_command_variants_differ_in_one_place():
    src = (COMMANDS_DIR / "tensor_from_lists.py").read_text()
    assert "torch.tensor(batches[i], device=dev)" in src and "data[i].to(dev, non_blocking=True)" in src
    src = (COMMANDS_DIR / "per_sample_copy.py").read_text()
    assert "torch.stack([s.to(dev) for s in samples])" in src and "torch.stack(samples).to(dev)" in src

"""The eighth held-back set (HELDOUT8_PAIRS): each kernel version matches its reference on the CPU (Triton
interpreter, small and ragged sizes, fp16/fp32: the interpreter miscomputes bf16), each version's launch is
the planted problem or its fix and nothing else, the models are the work, and both variants of each command
script run on the CPU (small sizes) and agree."""

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
from pairs import ALL_PAIRS, HELDOUT7_PAIRS, HELDOUT8_PAIRS  # noqa: E402

SMALL = {
    "calib_gqa_decode": [
        {"B": 2, "HKV": 2, "G": 4, "S": 37, "D": 16, "dtype": "float32"},  # a ragged last step
        {"B": 1, "HKV": 3, "G": 8, "S": 100, "D": 32, "dtype": "float16"},
        {"B": 1, "HKV": 1, "G": 1, "S": 1, "D": 16, "dtype": "float32"},
    ],
    "calib_bucketize": [
        {"N": 3000, "NB": 255, "dtype": "float32"},  # the default boundaries, a ragged last program
        {"N": 77, "NB": 8, "dtype": "float16"},  # NB + 1 a power of two
        {"N": 1, "NB": 1, "dtype": "float32"},
    ],
    "calib_onehot_gather": [
        {"N": 300, "V": 100, "D": 32, "dtype": "float32"},  # a ragged codebook slice and row block
        {"N": 17, "V": 64, "D": 256, "dtype": "float16"},  # two column blocks
        {"N": 1, "V": 1, "D": 16, "dtype": "float32"},
    ],
}
KNOB = {
    "calib_gqa_decode": ("HEADS", 1, "G"),  # v1's HEADS is the group size
    "calib_bucketize": ("BINARY", False, True),
    "calib_onehot_gather": ("ONE_HOT", True, False),
}


def _pkg(name):
    return load(available([KERNELS_DIR])[name])


def _mod(name):
    if str(KERNELS_DIR) not in sys.path:
        sys.path.insert(0, str(KERNELS_DIR))
    return importlib.import_module(name)


def _run(name, params, version, inputs=None):
    pkg = _pkg(name)
    p = pkg.validate_params(params)
    inputs = pkg.make_inputs(p, "cpu") if inputs is None else inputs
    plan = pkg.version(version).build(inputs, p)
    assert [s.name for s in plan.stages] == [s.name for s in pkg.version(version).stages]
    for stage in plan.stages:
        stage.fn()
    return pkg, p, inputs, plan


def test_every_heldout8_kernel_is_tested_here():
    assert {p.kernel for p in HELDOUT8_PAIRS if not p.command} == set(SMALL) == set(KNOB)
    names = {p.name for p in HELDOUT8_PAIRS}
    assert len(HELDOUT8_PAIRS) == 5 and not names & {p.name for p in ALL_PAIRS + HELDOUT7_PAIRS}
    for p in HELDOUT8_PAIRS:  # the command scripts exist; causes and resources are set
        assert p.command == (p.kernel.endswith(".py")) and p.cause
        assert not p.command or (COMMANDS_DIR / p.kernel).is_file()


@pytest.mark.parametrize("name, params", [(n, p) for n in SMALL for p in SMALL[n]])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(name, params, version):
    pkg, p, inputs, plan = _run(name, params, version)
    out, ref = plan.output(), pkg.reference(inputs, p)
    assert out.shape == ref.shape and out.dtype == ref.dtype
    if out.is_floating_point():
        assert torch.isfinite(out).all(), "unwritten (NaN-poisoned) outputs remain"
        err = float((out.double() - ref.double()).norm() / max(float(ref.double().norm()), 1e-30))
        assert err <= pkg.tolerance(p["dtype"]), err
    else:  # bins: exact (the poison, -1, is never a valid bin)
        assert torch.equal(out, ref)


def test_bucketize_edges_and_ties():
    """Values equal to a boundary go right of it (right=True), below all to 0, above all to NB."""
    pkg = _pkg("calib_bucketize")
    p = pkg.validate_params({"N": 64, "NB": 15, "dtype": "float32"})
    inputs = pkg.make_inputs(p, "cpu")
    b = inputs["b"]
    x = torch.cat([b, b - 1e-3, b + 1e-3, torch.tensor([-100.0, 100.0])])[:64]
    inputs["x"] = torch.cat([x, torch.zeros(64 - len(x))])
    ref = torch.bucketize(inputs["x"], b, right=True).int()
    assert ref.min() == 0 and ref.max() == 15
    for version in ("v0", "v1"):
        out = _run("calib_bucketize", {"N": 64, "NB": 15, "dtype": "float32"}, version, inputs)[3].output()
        assert torch.equal(out, ref), version
        inputs["out"].fill_(-1)
    assert [_mod("calib_bucketize").steps(n) for n in (1, 2, 3, 255, 256)] == [1, 2, 2, 8, 9]


def test_onehot_gather_copies_rows_exactly_with_repeats():
    pkg = _pkg("calib_onehot_gather")
    params = {"N": 40, "V": 70, "D": 16, "dtype": "float32"}
    p = pkg.validate_params(params)
    inputs = pkg.make_inputs(p, "cpu")
    inputs["ids"].copy_(torch.arange(40) % 3 * 33)  # repeats, and ids in the last (ragged) slice
    for version in ("v0", "v1"):
        out = _run("calib_onehot_gather", params, version, inputs)[3].output()
        assert torch.equal(out, inputs["codebook"][inputs["ids"].long()]), version


def _stages(name, params):
    (s0,), (s1,) = (_run(name, params, v)[3].stages for v in ("v0", "v1"))
    return s0, s1


@pytest.mark.parametrize("name", sorted(KNOB))
def test_versions_differ_in_one_knob(name):
    params = SMALL[name][1]
    knob, bad, good = KNOB[name]
    s0, s1 = _stages(name, params)
    t0, t1 = s0.tiling, s1.tiling
    good = params["G"] if good == "G" else good
    assert (t0[knob], t1[knob]) == (bad, good)
    if name == "calib_gqa_decode":  # a program per query head vs per KV head: the grid shrinks by G
        b, hkv, g = params["B"], params["HKV"], params["G"]
        assert (s0.grid_blocks, s1.grid_blocks) == (b * hkv * g, b * hkv)
        assert t0.pop("grid") == [b * hkv * g] and t1.pop("grid") == [b * hkv]
    else:
        assert s0.grid_blocks == s1.grid_blocks
    assert {k: v for k, v in t0.items() if k != knob} == {k: v for k, v in t1.items() if k != knob}
    assert not s0.persistent and not s1.persistent


@pytest.mark.parametrize("name", sorted(SMALL))
def test_models_are_the_work_at_the_defaults(name):
    pkg = _pkg(name)
    p = pkg.validate_params({})
    (st,) = pkg.version("v0").stages
    assert [v.stages for v in pkg.versions] == [pkg.version("v0").stages] * 2  # one model for both
    assert not st.tensor_cores
    if name == "calib_gqa_decode":
        b, hkv, g, s, d = 64, 8, 8, 2048, 128
        assert st.flops(p) == 4 * b * hkv * g * s * d
        assert st.bytes(p) == 2 * (2 * b * hkv * s * d + 2 * b * hkv * g * d)
    elif name == "calib_bucketize":
        n = 1 << 25
        assert st.flops(p) == 8 * n and st.bytes(p) == 8 * n + 4 * 255
    else:
        n, v, d = 131072, 2048, 256
        assert st.flops(p) == 0 and st.bytes(p) == 4 * n + 2 * n * d + 2 * v * d


def _script(name):
    if str(COMMANDS_DIR) not in sys.path:
        sys.path.insert(0, str(COMMANDS_DIR))
    spec = importlib.util.spec_from_file_location(f"heldout8_{name}", COMMANDS_DIR / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", ["anomaly_mode", "autocast_recast"])
def test_command_variants_run_on_the_cpu_and_agree(name):
    mod = _script(name)
    outs = []
    for variant in ("bad", "good"):
        loop, output = mod.make(variant, cuda=False)
        loop(5)  # more steps than inputs: the inputs cycle
        outs.append(output())
    assert torch.isfinite(outs[0]).all() and outs[0].dtype == outs[1].dtype == torch.float32
    assert outs[0].shape == outs[1].shape == (5, *outs[0].shape[1:]) and outs[0].abs().max() > 0
    torch.testing.assert_close(outs[0], outs[1], rtol=0, atol=0)  # the same ops, the same values


def test_anomaly_mode_is_on_only_in_the_bad_variant_and_only_inside_the_loop():
    mod = _script("anomaly_mode")
    seen = {}
    for variant in ("bad", "good"):
        loop, _ = mod.make(variant, cuda=False)
        real = mod.kprof.range

        def spy(name, real=real, variant=variant):
            seen.setdefault(variant, set()).add(torch.is_anomaly_enabled())
            return real(name)

        mod.kprof.range = spy
        try:
            loop(2)
            loop(2)  # a second call: still on (the switch is entered at every call)
        finally:
            mod.kprof.range = real
        assert not torch.is_anomaly_enabled()
    assert seen == {"bad": {True}, "good": {False}}


def test_command_models_match_the_scripts_sizes():
    models = {p.kernel: p.models for p in HELDOUT8_PAIRS if p.command}
    a = _script("anomaly_mode")
    t, d, blocks = a.TOKENS, a.WIDTH, a.BLOCKS
    step = models["anomaly_mode.py"]["step"]
    assert step["flops"] == pytest.approx(3 * blocks * 2 * 2 * t * d * d, rel=1e-2)
    weights = blocks * 2 * d * d * 2
    acts = t * d * 2
    assert 5 * weights + 20 * blocks * acts < step["bytes"] < 5 * weights + 30 * blocks * acts
    c = _script("autocast_recast")
    t, d, layers = c.TOKENS, c.WIDTH, c.LAYERS
    step = models["autocast_recast.py"]["step"]
    assert step["flops"] == pytest.approx(layers * 2 * t * d * d, rel=1e-2)
    assert step["bytes"] == pytest.approx(layers * d * d * 2, rel=1e-2)


def test_command_variants_differ_in_one_place():
    src = (COMMANDS_DIR / "anomaly_mode.py").read_text()
    assert 'with torch.autograd.set_detect_anomaly(variant == "bad"):' in src and src.count("variant ==") == 1
    src = (COMMANDS_DIR / "autocast_recast.py").read_text()
    assert 'if variant == "good":\n        weights = [w.to(torch.bfloat16) for w in weights]' in src
    assert (
        'if variant == "bad":\n                        with torch.autocast(dev, dtype=torch.bfloat16):' in src
    )

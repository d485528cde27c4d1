"""The seventh held-back set (HELDOUT7_PAIRS): each kernel version matches its reference on the CPU
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
from pairs import ALL_PAIRS, HELDOUT6_PAIRS, HELDOUT7_PAIRS  # noqa: E402

SMALL = {
    "calib_host_table": [
        {"N": 5, "V": 7, "D": 100, "dtype": "float16"},  # a ragged row
        {"N": 3, "V": 50, "D": 64, "dtype": "float32"},
        {"N": 1, "V": 1, "D": 1, "dtype": "float32"},
    ],
    "calib_sort_top1": [
        {"T": 37, "E": 64, "dtype": "float16"},  # a ragged last program
        {"T": 16, "E": 256, "dtype": "float16"},  # the default expert count
        {"T": 1, "E": 2, "dtype": "float16"},
    ],
    "calib_popcount": [
        {"N": 300, "Q": 3, "W": 8},  # a ragged last program
        {"N": 128, "Q": 1, "W": 2},
        {"N": 1, "Q": 1, "W": 1},
    ],
    "calib_segment_prefix": [
        {"S": 7, "MAXLEN": 100, "D": 16, "dtype": "float32"},  # segments longer than a tile
        {"S": 12, "MAXLEN": 5, "D": 8, "dtype": "float16"},
        {"S": 1, "MAXLEN": 2, "D": 1, "dtype": "float32"},
    ],
}


def _pkg(name):
    return load(available([KERNELS_DIR])[name])


def _mod(name):
    """The package's module (its helpers: lengths, the reference's popcount)."""
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


def _outs(x):
    return x if isinstance(x, tuple) else (x,)


def test_every_heldout7_kernel_is_tested_here():
    assert {p.kernel for p in HELDOUT7_PAIRS if not p.command} == set(SMALL)
    names = {p.name for p in HELDOUT7_PAIRS}
    assert len(HELDOUT7_PAIRS) == 6 and not names & {p.name for p in ALL_PAIRS + HELDOUT6_PAIRS}


@pytest.mark.parametrize("name, params", [(n, p) for n in SMALL for p in SMALL[n]])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(name, params, version):
    pkg, p, inputs, plan = _run(name, params, version)
    outs, refs = _outs(plan.output()), _outs(pkg.reference(inputs, p))
    assert len(outs) == len(refs)
    for out, ref in zip(outs, refs):
        assert out.shape == ref.shape and out.dtype == ref.dtype
        if out.is_floating_point():
            assert torch.isfinite(out).all(), "unwritten (NaN-poisoned) outputs remain"
            err = float((out.double() - ref.double()).norm() / max(float(ref.double().norm()), 1e-30))
            assert err <= pkg.tolerance(p["dtype"]), err
        else:  # indices, distances: exact (the poison, -1, is never a valid value)
            assert torch.equal(out, ref)


def test_router_takes_the_first_of_equal_maxima():
    pkg = _pkg("calib_sort_top1")
    p = pkg.validate_params({"T": 40, "E": 64, "dtype": "float16"})
    inputs = pkg.make_inputs(p, "cpu")
    inputs["x"].copy_(inputs["x"].round().clamp(-2, 2))  # five values: many ties at the maximum
    for version in ("v0", "v1"):
        gate, idx = _run("calib_sort_top1", {"T": 40, "E": 64, "dtype": "float16"}, version, inputs)[
            3
        ].output()
        assert torch.equal(idx.long(), torch.argmax(inputs["x"].float(), dim=1))
        count = (inputs["x"] == inputs["x"].amax(dim=1, keepdim=True)).sum(dim=1)
        assert (count > 1).sum() > 10  # the case is there


def test_popcount_reference_counts_bits():
    v = torch.tensor([0, 1, -1, 0x7FFFFFFF, -(2**31), 0x0F0F0F0F, 12345, -12345], dtype=torch.int32)
    expect = [bin(int(x) & 0xFFFFFFFF).count("1") for x in v]
    assert _mod("calib_popcount")._popcount_ref(v).tolist() == expect


def test_host_table_is_a_copy_of_the_device_table():
    pkg = _pkg("calib_host_table")
    inputs = pkg.make_inputs(pkg.validate_params({"N": 4, "V": 9, "D": 8, "dtype": "float32"}), "cpu")
    t, h = inputs["table"], inputs["table_host"]
    assert torch.equal(t, h) and t.data_ptr() != h.data_ptr()


def test_segment_lengths_survive_fresh_inputs():
    """The integrity check's fresh inputs (another seed, torch's seeds shifted) keep every shape."""
    from kprof_mcp.capture.integrity import fresh_values

    pkg = _pkg("calib_segment_prefix")
    p = pkg.validate_params({"S": 50, "MAXLEN": 40, "D": 4, "dtype": "float32"})
    a = pkg.make_inputs(p, "cpu")
    b, _ = fresh_values(torch, pkg, p, "cpu", 7919)
    assert {k: v.shape for k, v in a.items()} == {k: v.shape for k, v in b.items()}
    assert torch.equal(a["lengths"], b["lengths"]) and not torch.equal(a["x"], b["x"])
    assert torch.equal(a["offsets"][1:], a["lengths"].cumsum(0).int()) and int(a["offsets"][0]) == 0


def _stages(name, params):
    (s0,), (s1,) = (_run(name, params, v)[3].stages for v in ("v0", "v1"))
    return s0, s1


@pytest.mark.parametrize(
    "name, params, knob, bad, good",
    [
        ("calib_host_table", {"N": 2, "V": 3, "D": 16, "dtype": "float32"}, "TABLE", "host", "device"),
        ("calib_sort_top1", {"T": 16, "E": 16, "dtype": "float16"}, "SORT", True, False),
        ("calib_popcount", {"N": 130, "Q": 2, "W": 4}, "HW_POPC", False, True),
        ("calib_segment_prefix", {"S": 3, "MAXLEN": 9, "D": 4, "dtype": "float32"}, "OFFSETS", False, True),
    ],
)
def test_versions_differ_in_one_knob(name, params, knob, bad, good):
    s0, s1 = _stages(name, params)
    t0, t1 = s0.tiling, s1.tiling
    assert (t0[knob], t1[knob]) == (bad, good)
    assert {k: v for k, v in t0.items() if k != knob} == {k: v for k, v in t1.items() if k != knob}
    assert s0.grid_blocks == s1.grid_blocks and not s0.persistent and not s1.persistent


@pytest.mark.parametrize("name", sorted(SMALL))
def test_models_are_the_work_at_the_defaults(name):
    pkg = _pkg(name)
    p = pkg.validate_params({})
    (st,) = pkg.version("v0").stages
    assert [v.stages for v in pkg.versions] == [pkg.version("v0").stages] * 2  # one model for both
    assert not st.tensor_cores
    if name == "calib_host_table":
        assert st.flops(p) == 0 and st.bytes(p) == 2 * 8192 * 4096 * 2 + 8 * 8192
    elif name == "calib_sort_top1":
        t, e = 131072, 256
        assert st.flops(p) == 3 * t * e and st.bytes(p) == 2 * t * e + 8 * t
    elif name == "calib_popcount":
        n, q, w = 1 << 23, 4, 8
        assert st.flops(p) == 2 * q * n * w and st.bytes(p) == 4 * n * w + 4 * q * n + 4 * q * w
    else:
        tokens = int(_mod("calib_segment_prefix").lengths(p).sum())
        assert 0.98 < tokens / (16384 * 256) < 1.02  # mean length ~256
        assert st.flops(p) == (tokens + 16384) * 128 and st.bytes(p) == (tokens + 16384) * 128 * 2 + 8 * 16384


def _script(name):
    if str(COMMANDS_DIR) not in sys.path:
        sys.path.insert(0, str(COMMANDS_DIR))
    spec = importlib.util.spec_from_file_location(f"heldout7_{name}", COMMANDS_DIR / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name, exact", [("projector_order", False), ("graph_recapture", True)])
def test_command_variants_run_on_the_cpu_and_agree(name, exact):
    mod = _script(name)
    outs = []
    for variant in ("bad", "good"):
        loop, output = mod.make(variant, cuda=False)
        loop(5)  # more steps than inputs: the inputs cycle
        outs.append(output())
    assert torch.isfinite(outs[0]).all() and outs[0].dtype == outs[1].dtype == torch.float32
    assert outs[0].shape == outs[1].shape == (5, *outs[0].shape[1:]) and outs[0].abs().max() > 0
    if exact:
        torch.testing.assert_close(outs[0], outs[1], rtol=0, atol=0)
    else:  # the same product in another order: fp32 rounding
        torch.testing.assert_close(outs[0], outs[1], rtol=1e-4, atol=1e-5)


def test_command_models_match_the_scripts_sizes():
    models = {p.kernel: p.models for p in HELDOUT7_PAIRS if p.command}
    m = _script("projector_order")
    n, d, k, layers = m.TOKENS, m.WIDTH, m.RANK, m.LAYERS
    step = models["projector_order.py"]["step"]
    assert step["flops"] == pytest.approx(layers * (2 * 2 * n * d * k + n * d), rel=1e-2)
    assert step["bytes"] == pytest.approx(layers * (3 * n * d * 2 + 2 * k * d * 2 + 2 * n * k * 2), rel=1e-2)
    g = _script("graph_recapture")
    b, d, blocks = g.BATCH, g.WIDTH, g.BLOCKS
    step = models["graph_recapture.py"]["step"]
    assert step["flops"] == pytest.approx(blocks * 2 * 2 * b * d * d, rel=1e-2)
    weights = blocks * 2 * d * d * 2
    assert weights < step["bytes"] < 1.1 * weights  # the weights once, the small activations


def test_command_variants_differ_in_one_place():
    src = (COMMANDS_DIR / "projector_order.py").read_text()
    assert "h = h - h @ (u @ u.T)" in src and "h = h - (h @ u) @ u.T" in src
    src = (COMMANDS_DIR / "graph_recapture.py").read_text()
    assert 'if variant == "bad":\n                    # the new graph replaces' in src
    assert 'if variant == "good":\n        state["graph"], state["out"] = capture()' in src

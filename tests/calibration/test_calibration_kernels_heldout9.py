"""The ninth held-back set (HELDOUT9_PAIRS): each kernel version matches its reference on the CPU (Triton
interpreter, small and ragged sizes, fp16/fp32: the interpreter miscomputes bf16), each version's launch is
the planted problem or its fix and nothing else, the models are the work, and both variants of each command
script run on the CPU (small sizes) and agree."""

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
from pairs import ALL_PAIRS, HELDOUT8_PAIRS, HELDOUT9_PAIRS  # noqa: E402

SMALL = {
    "calib_saved_acts": [
        {"M": 5, "N": 3000, "dtype": "float16"},  # a ragged column block
        {"M": 2, "N": 2048, "dtype": "float16"},
        {"M": 1, "N": 1, "dtype": "float16"},
    ],
    "calib_fourier_terms": [
        {"N": 3000, "K": 64, "dtype": "float32"},  # the default harmonics, a ragged last program
        {"N": 77, "K": 5, "dtype": "float16"},
        {"N": 1, "K": 1, "dtype": "float32"},
    ],
    "calib_lut_bypass": [
        {"N": 5000, "dtype": "float16"},  # a ragged absmax block and program
        {"N": 2048, "dtype": "float16"},
        {"N": 1, "dtype": "float16"},
    ],
}
KNOB = {
    "calib_saved_acts": ("SAVE", True, False),
    "calib_fourier_terms": ("RECURRENCE", False, True),
    "calib_lut_bypass": ("TABLE_CG", True, False),
}


def _pkg(name):
    return load(available([KERNELS_DIR])[name])


def _run(name, params, version, inputs=None):
    pkg = _pkg(name)
    p = pkg.validate_params(params)
    inputs = pkg.make_inputs(p, "cpu") if inputs is None else inputs
    plan = pkg.version(version).build(inputs, p)
    assert [s.name for s in plan.stages] == [s.name for s in pkg.version(version).stages]
    for stage in plan.stages:
        stage.fn()
    return pkg, p, inputs, plan


def test_every_heldout9_kernel_is_tested_here():
    assert {p.kernel for p in HELDOUT9_PAIRS if not p.command} == set(SMALL) == set(KNOB)
    names = {p.name for p in HELDOUT9_PAIRS}
    assert len(HELDOUT9_PAIRS) == 5 and not names & {p.name for p in ALL_PAIRS + HELDOUT8_PAIRS}
    for p in HELDOUT9_PAIRS:  # the command scripts exist; causes and resources are set
        assert p.command == (p.kernel.endswith(".py")) and p.cause
        assert not p.command or (COMMANDS_DIR / p.kernel).is_file()


@pytest.mark.parametrize("name, params", [(n, p) for n in SMALL for p in SMALL[n]])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_version_matches_reference(name, params, version):
    pkg, p, inputs, plan = _run(name, params, version)
    out, ref = plan.output(), pkg.reference(inputs, p)
    assert out.shape == ref.shape and out.dtype == ref.dtype
    assert torch.isfinite(out).all(), "unwritten (NaN-poisoned) outputs remain"
    err = float((out.double() - ref.double()).norm() / max(float(ref.double().norm()), 1e-30))
    assert err <= pkg.tolerance(p["dtype"]), err


def test_saved_acts_writes_the_saved_tensors_only_in_v0():
    params = {"M": 3, "N": 100, "dtype": "float16"}
    for version, saved in (("v0", True), ("v1", False)):
        pkg = _pkg("calib_saved_acts")
        p = pkg.validate_params(params)
        inputs = pkg.make_inputs(p, "cpu")
        inputs["h"].fill_(float("nan"))
        inputs["t"].fill_(float("nan"))
        _run("calib_saved_acts", params, version, inputs)
        h = inputs["x"].float() + inputs["bias"]
        if saved:
            torch.testing.assert_close(inputs["h"], h)
            u = 0.7978845608028654 * (h + 0.044715 * h**3)
            torch.testing.assert_close(inputs["t"], torch.tanh(u), atol=1e-5, rtol=1e-5)
        else:
            assert torch.isnan(inputs["h"]).all() and torch.isnan(inputs["t"]).all()


def _stages(name, params):
    (s0,), (s1,) = (_run(name, params, v)[3].stages for v in ("v0", "v1"))
    return s0, s1


@pytest.mark.parametrize("name", sorted(KNOB))
def test_versions_differ_in_one_knob(name):
    params = SMALL[name][1]
    knob, bad, good = KNOB[name]
    s0, s1 = _stages(name, params)
    t0, t1 = s0.tiling, s1.tiling
    assert (t0[knob], t1[knob]) == (bad, good)
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
    if name == "calib_saved_acts":
        m, n = 16384, 8192
        assert st.bytes(p) == 2 * 2 * m * n + 4 * n and st.flops(p) == 8 * m * n
    elif name == "calib_fourier_terms":
        n, k = 1 << 23, 64
        assert st.bytes(p) == 2 * 4 * n + 8 * k and st.flops(p) == 4 * k * n
    else:
        n = 1 << 27
        assert st.flops(p) == 0 and st.bytes(p) == n + 2 * n + 4 * n // 256 + 1024


def _script(name):
    if str(COMMANDS_DIR) not in sys.path:
        sys.path.insert(0, str(COMMANDS_DIR))
    spec = importlib.util.spec_from_file_location(name, COMMANDS_DIR / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # the DataLoader's workers unpickle the dataset by its module's name
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", ["dataloader_workers", "embedding_dense_grad"])
def test_command_variants_run_on_the_cpu_and_agree(name):
    mod = _script(name)
    outs = []
    for variant in ("bad", "good"):
        loop, output = mod.make(variant, cuda=False)
        loop(3)
        loop(2)  # a second call goes on with the same iterator / batches
        outs.append(output())
    assert torch.isfinite(outs[0]).all() and outs[0].dtype == outs[1].dtype == torch.float32
    assert outs[0].shape == outs[1].shape == (5,) and outs[0].abs().max() > 0
    torch.testing.assert_close(outs[0], outs[1], rtol=1e-5, atol=1e-6)  # the same losses


def test_command_models_match_the_scripts_sizes():
    models = {p.kernel: p.models for p in HELDOUT9_PAIRS if p.command}
    d = _script("dataloader_workers")
    dims = [3 * d.CROP * d.CROP, d.HIDDEN, d.HIDDEN, d.CLASSES]
    weights = sum(i * o for i, o in zip(dims, dims[1:]))
    step = models["dataloader_workers.py"]["step"]
    assert step["flops"] == pytest.approx(3 * 2 * d.BATCH * weights, rel=2e-2)
    assert 5 * 2 * weights < step["bytes"] < 5 * 2 * weights + 16 * d.BATCH * (dims[0] + 8 * d.HIDDEN)
    e = _script("embedding_dense_grad")
    step = models["embedding_dense_grad.py"]["step"]
    assert step["flops"] == pytest.approx(3 * 2 * e.BATCH * (e.DIM * e.HIDDEN + e.HIDDEN), rel=2e-2)
    rows = e.BATCH * e.DIM * 4
    assert 5 * rows < step["bytes"] < 5 * rows + 4e6
    assert e.ROWS * e.DIM * 4 > 50 * step["bytes"]  # the dense gradient is the table's size


def test_command_variants_differ_in_one_place():
    src = (COMMANDS_DIR / "dataloader_workers.py").read_text()
    assert '**(workers if variant == "good" else {}),' in src and src.count("variant ==") == 1
    src = (COMMANDS_DIR / "embedding_dense_grad.py").read_text()
    assert 'torch.nn.Embedding(rows, dim, sparse=variant == "good", device=dev)' in src
    assert src.count("variant ==") == 1

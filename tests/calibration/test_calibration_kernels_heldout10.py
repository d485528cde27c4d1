"""The tenth held-back set (HELDOUT10_PAIRS): each kernel version matches its reference on the CPU (Triton
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
from pairs import ALL_PAIRS, HELDOUT8_PAIRS, HELDOUT9_PAIRS, HELDOUT10_PAIRS  # noqa: E402

SMALL = {
    "calib_page_chain": [
        {"R": 3, "NP": 37, "dtype": "float16"},  # a ragged last chunk of the page table
        {"R": 2, "NP": 64, "dtype": "float32"},
        {"R": 1, "NP": 1, "dtype": "float16"},
    ],
    "calib_beta_zero": [
        {"M": 70, "N": 300, "dtype": "float16"},  # ragged tiles in both directions
        {"M": 64, "N": 256, "dtype": "float32"},
        {"M": 1, "N": 1, "dtype": "float16"},
    ],
    "calib_alibi_bias": [
        {"B": 1, "H": 3, "S": 150, "D": 16, "dtype": "float16"},  # ragged query and key blocks
        {"B": 2, "H": 2, "S": 128, "D": 32, "dtype": "float32"},  # even: the unmasked path
        {"B": 1, "H": 1, "S": 1, "D": 16, "dtype": "float16"},
    ],
}
KNOB = {
    "calib_page_chain": ("CHAIN", True, False),
    "calib_beta_zero": ("READ_C", True, False),
    "calib_alibi_bias": ("BIAS_TENSOR", True, False),
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


def test_every_heldout10_kernel_is_tested_here():
    assert {p.kernel for p in HELDOUT10_PAIRS if not p.command} == set(SMALL) == set(KNOB)
    names = {p.name for p in HELDOUT10_PAIRS}
    assert len(HELDOUT10_PAIRS) == 5 and not names & {
        p.name for p in ALL_PAIRS + HELDOUT8_PAIRS + HELDOUT9_PAIRS
    }
    for p in HELDOUT10_PAIRS:  # the command scripts exist; causes are set
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


def test_page_chain_inputs_describe_the_same_pages():
    pkg = _pkg("calib_page_chain")
    p = pkg.validate_params({"R": 4, "NP": 9, "dtype": "float16"})
    inp = pkg.make_inputs(p, "cpu")
    table, head, nxt = inp["table"].long(), inp["head"].long(), inp["next"].long()
    assert sorted(table.reshape(-1).tolist()) == list(range(4 * 9))  # every pool page used once
    for r in range(4):
        page, walked = int(head[r]), []
        while page >= 0:
            walked.append(page)
            page = int(nxt[page])
        assert walked == table[r].tolist()


def test_beta_zero_v0_reads_the_output_and_v1_does_not():
    # v0 adds beta * C (beta = 0): a NaN in C comes through; v1 never reads C.
    params = {"M": 8, "N": 16, "dtype": "float32"}
    for version, reads in (("v0", True), ("v1", False)):
        pkg = _pkg("calib_beta_zero")
        p = pkg.validate_params(params)
        inputs = pkg.make_inputs(p, "cpu")
        inputs["out"][3, 5] = float("nan")
        _run("calib_beta_zero", params, version, inputs)
        assert bool(torch.isnan(inputs["out"][3, 5])) == reads
        assert torch.isfinite(inputs["out"]).sum() == 8 * 16 - reads


def test_alibi_bias_tensor_is_the_slopes_bias():
    pkg = _pkg("calib_alibi_bias")
    p = pkg.validate_params({"B": 2, "H": 4, "S": 5, "D": 16, "dtype": "float16"})
    inp = pkg.make_inputs(p, "cpu")
    i = torch.arange(5.0)
    for h in range(4):
        want = -(inp["slopes"][h] * (i[None, :] - i[:, None]).abs())
        for b in range(2):
            torch.testing.assert_close(inp["bias"][b, h], want, rtol=0, atol=0)


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
    if name == "calib_page_chain":
        r, n_pages = 256, 1024
        assert st.flops(p) == 0 and st.bytes(p) == 2 * r * n_pages * 256 * 2 + 4 * r * n_pages
        assert not st.tensor_cores
    elif name == "calib_beta_zero":
        m = n = 16384
        assert st.bytes(p) == 2 * m * n + 2 * (m + n) and st.flops(p) == 2 * m * n and not st.tensor_cores
    else:
        b, h, s, d = 2, 16, 4096, 64
        assert st.tensor_cores and st.flops(p) == 4 * b * h * s * s * d
        assert st.bytes(p) == 4 * b * h * s * d * 2 + 4 * h
        assert 4 * b * h * s * s > 25 * st.bytes(p)  # the materialised bias: ~27x the model's bytes


def _script(name):
    if str(COMMANDS_DIR) not in sys.path:
        sys.path.insert(0, str(COMMANDS_DIR))
    spec = importlib.util.spec_from_file_location(name, COMMANDS_DIR / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", ["frozen_backbone", "launch_blocking"])
def test_command_variants_run_on_the_cpu_and_agree(name):
    mod = _script(name)
    outs = []
    for variant in ("bad", "good"):
        loop, output = mod.make(variant, cuda=False)
        loop(3)
        loop(2)
        outs.append(output())
    assert torch.isfinite(outs[0]).all() and outs[0].dtype == outs[1].dtype == torch.float32
    assert outs[0].shape == outs[1].shape == (5,) and outs[0].abs().max() > 0
    assert len(set(outs[1].tolist())) > 1  # the losses change: the head (or the blocks) learn
    torch.testing.assert_close(outs[0], outs[1], rtol=1e-5, atol=1e-6)  # the same losses


def test_frozen_backbone_bad_variant_computes_backbone_gradients():
    mod = _script("frozen_backbone")
    for variant, grads in (("bad", True), ("good", False)):
        loop, _ = mod.make(variant, cuda=False)
        loop(1)
        cells = loop.__closure__
        backbone = next(
            c.cell_contents
            for c in cells
            if isinstance(c.cell_contents, list)
            and c.cell_contents
            and torch.is_tensor(c.cell_contents[0])
            and c.cell_contents[0].dim() == 2
            and c.cell_contents[0].shape[0] == c.cell_contents[0].shape[1]
        )
        assert all((w.grad is not None) == grads for w in backbone)


def test_command_models_match_the_scripts_sizes():
    models = {p.kernel: p.models for p in HELDOUT10_PAIRS if p.command}
    f = _script("frozen_backbone")
    t, d, n_blocks, c = f.TOKENS, f.WIDTH, f.BLOCKS, f.CLASSES
    step = models["frozen_backbone.py"]["step"]
    assert step["flops"] == pytest.approx(2 * t * d * d * n_blocks + 4 * t * d * c, rel=2e-2)
    act = t * d * 2
    assert 9 * n_blocks * act + n_blocks * d * d * 2 < step["bytes"] < 9 * n_blocks * act + 2e8
    lb = _script("launch_blocking")
    step = models["launch_blocking.py"]["step"]
    assert step["flops"] == pytest.approx(3 * lb.BLOCKS * 2 * 2 * lb.TOKENS * lb.WIDTH**2, rel=2e-2)


def test_command_variants_differ_in_one_place():
    src = (COMMANDS_DIR / "frozen_backbone.py").read_text()
    assert 'w.requires_grad_(variant == "bad")' in src and src.count("variant ==") == 1
    src = (COMMANDS_DIR / "launch_blocking.py").read_text()
    assert '{"CUDA_LAUNCH_BLOCKING": "1" if variant == "bad" else "0"}' in src
    assert src.count("variant ==") == 1
    lb = _script("launch_blocking")
    assert lb.environment("bad") == {"CUDA_LAUNCH_BLOCKING": "1"}
    assert lb.environment("good") == {"CUDA_LAUNCH_BLOCKING": "0"}

"""The fifth held-back set (HELDOUT5_PAIRS): each kernel version matches its reference on the CPU
(Triton interpreter, small and ragged sizes, fp16/fp32: the interpreter miscomputes bf16), each version's
launch is the planted problem or its fix and nothing else, the models are the work, and both variants of
each command script run on the CPU (small sizes) and agree."""

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
from pairs import ALL_PAIRS, HELDOUT5_PAIRS  # noqa: E402

SMALL = {
    "calib_wide_block": [
        {"M": 5, "N": 300, "dtype": "float16"},  # the defaults' row length
        {"M": 3, "N": 1, "dtype": "float16"},
        {"M": 2, "N": 4096, "dtype": "float32"},  # a row as wide as v0's block
    ],
    "calib_persistent_grid": [
        {"n": 10000, "dtype": "float16"},  # several tiles per program, a ragged last tile
        {"n": 1, "dtype": "float16"},
        {"n": 50000, "dtype": "float32"},
    ],
    "calib_global_acc": [
        {"M": 256, "N": 256, "K": 128, "dtype": "float16"},  # two K steps
        {"M": 130, "N": 200, "K": 72, "dtype": "float16"},  # ragged tiles and K steps
        {"M": 1, "N": 1, "K": 1, "dtype": "float16"},
    ],
    "calib_serial_scan": [
        {"B": 2, "T": 100, "C": 130, "dtype": "float16"},  # a ragged chunk and channel block
        {"B": 1, "T": 64, "C": 128, "dtype": "float32"},  # two whole chunks
        {"B": 1, "T": 1, "C": 1, "dtype": "float32"},
    ],
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


def test_every_heldout5_kernel_is_tested_here():
    assert {p.kernel for p in HELDOUT5_PAIRS if not p.command} == set(SMALL)
    assert not {p.name for p in HELDOUT5_PAIRS} & {p.name for p in ALL_PAIRS}


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
    return s0, s1


@pytest.mark.parametrize(
    "name, params, knob, bad, good",
    [
        ("calib_wide_block", {"M": 2, "N": 300, "dtype": "float16"}, "BLOCK", 4096, 512),
        ("calib_persistent_grid", {"n": 100000, "dtype": "float16"}, "PROGRAMS_PER_SM", 1, 8),
        (
            "calib_global_acc",
            {"M": 256, "N": 256, "K": 128, "dtype": "float16"},
            "ACC_IN_MEMORY",
            True,
            False,
        ),
        ("calib_serial_scan", {"B": 1, "T": 64, "C": 128, "dtype": "float32"}, "CHUNK", 1, 32),
    ],
)
def test_versions_differ_in_one_knob(name, params, knob, bad, good):
    s0, s1 = _tilings(name, params)
    t0, t1 = s0.tiling, s1.tiling
    assert (t0[knob], t1[knob]) == (bad, good)
    assert {k: v for k, v in t0.items() if k != knob} == {k: v for k, v in t1.items() if k != knob}


def test_persistent_grid_sizes():
    s0, s1 = _tilings("calib_persistent_grid", {"n": 100000, "dtype": "float16"})
    assert s0.persistent and s1.persistent
    assert (s0.grid_blocks, s1.grid_blocks) == (4, 32)  # impl.CPU_SMS = 4 without a GPU
    # a small problem is never given more programs than tiles
    s0, s1 = _tilings("calib_persistent_grid", {"n": 3000, "dtype": "float16"})
    assert s0.grid_blocks == s1.grid_blocks == 3


def test_serial_scan_kernels():
    s0, s1 = _tilings("calib_serial_scan", {"B": 2, "T": 100, "C": 130, "dtype": "float16"})
    assert s0.kernel.fn.__name__ == "step_kernel" and s1.kernel.fn.__name__ == "chunk_kernel"
    assert s0.grid_blocks == s1.grid_blocks == 2 * 2


@pytest.mark.parametrize("name", sorted(SMALL))
def test_models_are_the_work_at_the_defaults(name):
    pkg = _pkg(name)
    p = pkg.validate_params({})
    (st,) = pkg.version("v0").stages
    assert [v.stages for v in pkg.versions] == [pkg.version("v0").stages] * 2  # one model for both
    assert st.tensor_cores == (name == "calib_global_acc")
    if name == "calib_wide_block":
        assert st.flops(p) == 4 * 262144 * 300 and st.bytes(p) == 2 * 2 * 262144 * 300
    elif name == "calib_persistent_grid":
        assert st.flops(p) == 6 * 2**27 and st.bytes(p) == 3 * 2 * 2**27
    elif name == "calib_global_acc":
        m = n = k = 4096
        assert st.flops(p) == 2 * m * n * k and st.bytes(p) == 2 * (m * k + k * n) + 8 * m * n
    else:
        b, t, c = 8, 4096, 2048
        assert st.flops(p) == 2 * b * t * c and st.bytes(p) == 3 * 2 * b * t * c


def _script(name):
    if str(COMMANDS_DIR) not in sys.path:
        sys.path.insert(0, str(COMMANDS_DIR))
    spec = importlib.util.spec_from_file_location(f"heldout5_{name}", COMMANDS_DIR / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", ["kv_cache_cat", "lm_head_all_positions"])
def test_command_variants_run_on_the_cpu_and_agree(name):
    mod = _script(name)
    outs = []
    for variant in ("bad", "good"):
        loop, output = mod.make(variant, cuda=False)
        loop(2)
        outs.append(output())
    assert torch.isfinite(outs[0]).all() and outs[0].dtype == outs[1].dtype == torch.float32
    assert outs[0].shape == outs[1].shape and outs[0].abs().max() > 0
    torch.testing.assert_close(outs[0], outs[1], rtol=1e-5, atol=1e-5)


def test_command_models_match_the_scripts_sizes():
    kv = _script("kv_cache_cat")
    b, h, d, t0, n = kv.BATCH, kv.HEADS, kv.HEAD_DIM, kv.PROMPT, kv.TOKENS
    cached = sum(t0 + i + 1 for i in range(n))
    lm = _script("lm_head_all_positions")
    models = {p.kernel: p.models for p in HELDOUT5_PAIRS if p.command}
    dec = models["kv_cache_cat.py"]["decode"]
    assert dec["bytes"] == pytest.approx(2 * 2 * b * h * d * cached + n * 4 * 2 * b * h * d, rel=1e-3)
    assert dec["flops"] == pytest.approx(4 * b * h * d * cached, rel=1e-3)
    head = models["lm_head_all_positions.py"]["lm_head"]
    assert head["flops"] == pytest.approx(2 * lm.BATCH * lm.WIDTH * lm.VOCAB, rel=1e-2)
    assert head["bytes"] == pytest.approx(
        2 * (lm.VOCAB * lm.WIDTH + lm.BATCH * (lm.WIDTH + lm.VOCAB)), rel=1e-2
    )


def test_command_variants_differ_in_one_place():
    src = (COMMANDS_DIR / "lm_head_all_positions.py").read_text()
    assert "F.linear(h, w)[:, -1]" in src and "F.linear(h[:, -1], w)" in src
    src = (COMMANDS_DIR / "kv_cache_cat.py").read_text()
    assert "torch.cat([k, kn[i]], dim=2)" in src and "new_empty(b, h, t0 + n, d)" in src

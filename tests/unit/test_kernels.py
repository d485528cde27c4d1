"""Every shipped kernel version is correct against its reference (Triton interpreter, small shapes)."""

import pytest
import torch

from kprof_mcp.kernel import ParamError
from kprof_mcp.packages import available, load

PKGS = {name: load(path) for name, path in available().items()}

CASES = [
    ("vector_add", {"n": 1}, "float32"),
    ("vector_add", {"n": 1000}, "float32"),  # not a multiple of any block size: masking
    ("vector_add", {"n": 5000}, "float16"),
    ("matmul", {"M": 16, "N": 16, "K": 16}, "float16"),
    ("matmul", {"M": 70, "N": 50, "K": 90}, "float16"),  # ragged edges on every axis
    ("matmul", {"M": 64, "N": 32, "K": 48}, "float32"),
    ("two_streams", {"n": 1024, "iters": 7}, "float32"),
    ("two_streams", {"n": 3000, "iters": 50}, "float32"),  # a partial last block
    ("tiny_chain", {"n": 1000, "k": 5}, "float32"),
    ("tiny_chain", {"n": 4096, "k": 1}, "float32"),
    ("softmax", {"M": 1, "N": 1}, "float32"),
    ("softmax", {"M": 37, "N": 1000}, "float32"),  # ragged rows and columns
    ("softmax", {"M": 64, "N": 4096}, "float16"),
    ("mla_decode", {"b": 2, "s": 1, "t": 100, "h": 16, "d": 64, "p": 16}, "float16"),  # ragged t
    (
        "mla_decode",
        {"b": 1, "s": 2, "t": 256, "h": 16, "d": 128, "p": 32},
        "float16",
    ),  # s > 1: rows are (s, h)
    ("mla_decode", {"b": 2, "s": 1, "t": 33, "h": 32, "d": 64, "p": 16}, "float32"),
    (
        "mla_decode",
        {"b": 1, "s": 1, "t": 1000, "h": 16, "d": 64, "p": 16},
        "float16",
    ),  # 3 splits, ragged last
]
# Every version of every package in CASES is run (new versions are picked up by themselves).
VERSION_CASES = [
    pytest.param(k, p, d, v.name, id=f"{k}-{v.name}-{d}-" + ",".join(f"{a}{b}" for a, b in p.items()))
    for k, p, d in CASES
    if k in PKGS
    for v in PKGS[k].versions
]


def test_every_case_names_an_installed_package():
    assert {k for k, _, _ in CASES} <= set(PKGS), sorted(set(k for k, _, _ in CASES) - set(PKGS))


@pytest.mark.parametrize("kernel,params,dtype,version", VERSION_CASES)
def test_version_matches_reference(kernel, params, dtype, version):
    pkg = PKGS[kernel]
    p = pkg.validate_params({**params, "dtype": dtype})
    inputs = pkg.make_inputs(p, "cpu")
    plan = pkg.version(version).build(inputs, p)
    for stage in plan.stages:
        stage.fn()
    outs, refs = plan.output(), pkg.reference(inputs, p)
    outs, refs = (
        (outs if isinstance(outs, tuple) else (outs,)),
        (refs if isinstance(refs, tuple) else (refs,)),
    )
    for out, ref in zip(outs, refs, strict=True):
        out, ref = out.double(), ref.double()
        assert torch.isfinite(out).all(), "unwritten (NaN-poisoned) outputs remain"
        rel = float((out - ref).norm() / ref.norm())
        assert rel <= pkg.tolerance(dtype), rel


def test_a_wrong_kernel_is_caught_by_the_same_check():
    pkg = PKGS["vector_add"]
    p = pkg.validate_params({"n": 1000})
    inputs = pkg.make_inputs(p, "cpu")
    pkg.version("v0").build(inputs, p).stages[0].fn()
    inputs["z"][500:] = 0.0
    ref = pkg.reference(inputs, p).double()
    rel = float((inputs["z"].double() - ref).norm() / ref.norm())
    assert rel > pkg.tolerance("float32")


def test_models_match_the_seed_formulas():
    va, mm = PKGS["vector_add"], PKGS["matmul"]
    p = va.validate_params({"n": 1 << 24})
    st = va.version("v0").stages[0]
    assert st.flops(p) == 1 << 24 and st.bytes(p) == 3 * 4 * (1 << 24)
    q = mm.validate_params({})
    st = mm.version("v1").stages[0]
    assert st.flops(q) == 2 * 4096**3 and st.bytes(q) == 3 * 4096 * 4096 * 2 and st.tensor_cores


def test_param_bounds_and_unknown_names():
    mm = PKGS["matmul"]
    with pytest.raises(ParamError, match="M=0 is below its minimum 1"):
        mm.validate_params({"M": 0})
    with pytest.raises(ParamError, match=r"unknown parameter\(s\) \['Q'\].*valid: M \[1, 65536\]"):
        mm.validate_params({"Q": 1})
    with pytest.raises(ParamError, match="not one of"):
        mm.validate_params({"dtype": "int4"})
    with pytest.raises(ParamError, match="must be an integer"):
        mm.validate_params({"M": "lots"})
    assert mm.validate_params({"M": "128"})["M"] == 128


def test_every_package_declares_dtype_defaults_and_versions():
    for pkg in PKGS.values():
        d = pkg.describe()
        assert d["params"][-1]["name"] == "dtype"
        assert [v["name"] for v in d["versions"]][:2] == ["v0", "v1"]


def test_mla_splits_are_never_empty_and_cover_t():
    from kernels.mla_decode import num_splits, split_len

    mla = PKGS["mla_decode"]
    for t in (1, 63, 256, 511, 1000, 4000, 4096, 4097, 100_000):
        for b, s, h in ((1, 1, 16), (32, 1, 16), (32, 16, 128), (3, 2, 5)):
            p = mla.validate_params({"b": b, "s": s, "h": h, "t": t})
            for block_rows in (1, 16, 64):
                n, ln = num_splits(p, block_rows), split_len(p, num_splits(p, block_rows))
                assert (n - 1) * ln < t <= n * ln, (t, b, s, h, block_rows, n, ln)
    assert num_splits(mla.validate_params({"s": 1, "h": 16}), 16) == 8  # 32 programs -> 8 splits of 512


def test_mla_models_at_the_defaults():
    mla = PKGS["mla_decode"]
    p = mla.validate_params({})
    attend, combine = mla.version("v1").stages
    R = 32 * 16 * 128
    assert attend.flops(p) == 2 * R * 4096 * (512 + 64) + 2 * R * 4096 * 512 and attend.tensor_cores
    kv_q = (R * 576 + 32 * 4096 * 576) * 2
    assert attend.bytes(p) == kv_q + R * 1 * 513 * 4  # 4096 programs already: one split
    assert combine.bytes(p) == R * 513 * 4 + R * 512 * 2


def test_mla_v2_picks_its_launch_by_shape_and_the_64_row_launch_is_correct():
    from kernels.mla_decode import impl, v2_launch

    mla = PKGS["mla_decode"]
    assert v2_launch(mla.validate_params({}))["BLOCK_H"] == 64  # 1024 programs: compute-bound
    mem = mla.validate_params({"s": 1, "h": 16})
    assert v2_launch(mem)["BLOCK_H"] == 16  # 32 programs: split for a wave
    assert mla.version("v2").stages[1].flops(mem) == 3 * 32 * 16 * 4 * 512  # 4 splits: 128 programs <= 132
    p = mla.validate_params({"b": 2, "s": 2, "t": 600, "h": 40, "d": 32, "p": 16, "dtype": "float16"})
    inputs = mla.make_inputs(p, "cpu")
    plan = impl._build_grouped(
        inputs, p, {"BLOCK_H": 64, "BLOCK_N": 64, "num_warps": 8, "num_stages": 2, "target": 264}
    )
    assert plan.stages[0].tiling["splits"] > 1  # rows 80 -> 2 row blocks, ragged; splits of t
    for st in plan.stages:
        st.fn()
    out, ref = plan.output().double(), mla.reference(inputs, p).double()
    assert float((out - ref).norm() / ref.norm()) <= mla.tolerance("float16")

"""Every calibration kernel version is correct against its reference (Triton interpreter, small
shapes), and each package loads in the profiler's package loader."""

import sys
from pathlib import Path

import pytest
import torch

from kprof_mcp.packages import available, load

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from pairs import (  # noqa: E402
    ALL_PAIRS,
    HELDOUT2_PAIRS,
    HELDOUT3_PAIRS,
    HELDOUT4_PAIRS,
    HELDOUT5_PAIRS,
    HELDOUT6_PAIRS,
    HELDOUT7_PAIRS,
    HELDOUT8_PAIRS,
    HELDOUT9_PAIRS,
    HELDOUT10_PAIRS,
    HELDOUT11_PAIRS,
    HELDOUT12_PAIRS,
    HELDOUT13_PAIRS,
    HELDOUT14_PAIRS,
    HELDOUT15_PAIRS,
    HELDOUT16_PAIRS,
    HELDOUT17_PAIRS,
    HELDOUT18_PAIRS,
    HELDOUT19_PAIRS,
    HELDOUT20_PAIRS,
    HELDOUT21_PAIRS,
    HELDOUT22_PAIRS,
    HELDOUT23_PAIRS,
    HELDOUT24_PAIRS,
    HELDOUT25_PAIRS,
    HELDOUT26_PAIRS,
    HELDOUT27_PAIRS,
    HELDOUT28_PAIRS,
    HELDOUT29_PAIRS,
    HELDOUT30_PAIRS,
    HELDOUT31_PAIRS,
    HELDOUT32_PAIRS,
    HELDOUT33_PAIRS,
    HELDOUT34_PAIRS,
    HELDOUT35_PAIRS,
    HELDOUT36_PAIRS,
    HELDOUT37_PAIRS,
    HELDOUT38_PAIRS,
    HELDOUT39_PAIRS,
    HELDOUT40_PAIRS,
    HELDOUT41_PAIRS,
    HELDOUT_PAIRS,
    KERNELS_DIR,
    PAIRS,
)

PKGS = {name: load(path) for name, path in available([KERNELS_DIR]).items() if name.startswith("calib_")}
CASES = [
    ("calib_transpose", {"M": 64, "N": 128}),
    ("calib_transpose", {"M": 100, "N": 72}),  # ragged tiles
    ("calib_gather", {"B": 300, "V": 50, "D": 16}),
    ("calib_gather", {"B": 64, "V": 1000, "D": 24}),  # D not a power of two
    ("calib_few_blocks", {"n": 10000, "programs": 3}),
    ("calib_tail", {"iters": 50, "shrink": 256}),
    ("calib_spill", {"M": 3, "N": 1000}),
    ("calib_atomic", {"n": 5000}),
]


def test_every_calibration_kernel_is_a_pair_and_has_a_case():
    calib = {p.kernel for p in PAIRS if p.kernel.startswith("calib_")}
    assert calib == {k for k, _ in CASES}
    # issue 26's: _c.py; issue 36's held-back kernels: test_calibration_kernels_heldout.py (and _heldout2/.../18.py)
    held = (
        HELDOUT_PAIRS
        + HELDOUT2_PAIRS
        + HELDOUT3_PAIRS
        + HELDOUT4_PAIRS
        + HELDOUT5_PAIRS
        + HELDOUT6_PAIRS
        + HELDOUT7_PAIRS
        + HELDOUT8_PAIRS
        + HELDOUT9_PAIRS
        + HELDOUT10_PAIRS
        + HELDOUT11_PAIRS
        + HELDOUT12_PAIRS
        + HELDOUT13_PAIRS
        + HELDOUT14_PAIRS
        + HELDOUT15_PAIRS
        + HELDOUT16_PAIRS
        + HELDOUT17_PAIRS
        + HELDOUT18_PAIRS
        + HELDOUT19_PAIRS
        + HELDOUT20_PAIRS
        + HELDOUT21_PAIRS
        + HELDOUT22_PAIRS
        + HELDOUT23_PAIRS
        + HELDOUT24_PAIRS
        + HELDOUT25_PAIRS
        + HELDOUT26_PAIRS
        + HELDOUT27_PAIRS
        + HELDOUT28_PAIRS
        + HELDOUT29_PAIRS
        + HELDOUT30_PAIRS
        + HELDOUT31_PAIRS
        + HELDOUT32_PAIRS
        + HELDOUT33_PAIRS
        + HELDOUT34_PAIRS
        + HELDOUT35_PAIRS
        + HELDOUT36_PAIRS
        + HELDOUT37_PAIRS
        + HELDOUT38_PAIRS
        + HELDOUT39_PAIRS
        + HELDOUT40_PAIRS
        + HELDOUT41_PAIRS
    )
    assert {p.kernel for p in ALL_PAIRS + held if p.kernel.startswith("calib_")} == set(PKGS)


@pytest.mark.parametrize(
    "kernel,params,version",
    [
        pytest.param(k, p, v, id=f"{k}-{v}-" + ",".join(map(str, p.values())))
        for k, p in CASES
        for v in ("v0", "v1")
    ],
)
def test_version_matches_reference(kernel, params, version):
    pkg = PKGS[kernel]
    p = pkg.validate_params(params)
    inputs = pkg.make_inputs(p, "cpu")
    plan = pkg.version(version).build(inputs, p)
    for stage in plan.stages:
        stage.fn()
    out, ref = plan.output().double(), pkg.reference(inputs, p).double()
    assert torch.isfinite(out).all(), "unwritten (NaN-poisoned) outputs remain"
    rel = float((out - ref).norm() / ref.norm())
    assert rel <= pkg.tolerance("float32"), rel

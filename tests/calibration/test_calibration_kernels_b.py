"""Calibration pairs B (register spills, serialised atomics): both versions of each package match
the reference on the CPU (Triton interpreter, tiny sizes), each package imports neither torch nor
triton at load time, and each launch is what the planted problem says (warps and values per
thread of the spill pair; atomics per program and the self-resetting workspace of the atomic pair).
"""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kprof_mcp.packages import available, load

ROOT = Path(__file__).resolve().parents[2]
KERNELS_DIR = Path(__file__).resolve().parent / "kernels"
NAMES = ("calib_spill", "calib_atomic")
PKGS = {name: load(path) for name, path in available([KERNELS_DIR]).items() if name in NAMES}
H100_GBPS = 3350.0  # devices.json: H100 SXM datasheet bandwidth

CASES = [
    ("calib_spill", {"M": 3, "N": 1000}),  # ragged row: masked lanes hold -inf
    ("calib_spill", {"M": 4, "N": 8192}),  # the default row length: v0 holds 256 values per thread
    ("calib_spill", {"M": 5, "N": 17}),
    ("calib_spill", {"M": 1, "N": 1}),
    ("calib_atomic", {"n": 5000}),  # one program, ragged
    ("calib_atomic", {"n": 3 * 8192 + 7}),  # four programs, the last one ragged
    ("calib_atomic", {"n": 8192}),  # exactly one full block
    ("calib_atomic", {"n": 1}),
]


def _run(kernel, params, version, launches=1):
    pkg = PKGS[kernel]
    p = pkg.validate_params(params)
    inputs = pkg.make_inputs(p, "cpu")
    plan = pkg.version(version).build(inputs, p)
    assert [s.name for s in plan.stages] == [s.name for s in pkg.version(version).stages]
    for _ in range(launches):
        for stage in plan.stages:
            stage.fn()
    return pkg, p, inputs, plan


def _rel(out, ref):
    out, ref = out.double(), ref.double()
    assert torch.isfinite(out).all(), "unwritten (NaN-poisoned) outputs remain"
    return float((out - ref).norm() / ref.norm()) if float(ref.norm()) > 0 else float((out - ref).abs().max())


def test_both_packages_load_with_two_versions():
    assert set(PKGS) == set(NAMES)
    for pkg in PKGS.values():
        assert [v.name for v in pkg.versions] == ["v0", "v1"]
        assert pkg.describe()["params"][-1]["name"] == "dtype"
        assert pkg.validate_params({})["dtype"] == "float32"


def test_packages_import_neither_torch_nor_triton():
    code = (
        "import sys; from pathlib import Path; from kprof_mcp.packages import load; "
        f"[load(Path({str(KERNELS_DIR)!r}) / n) for n in {NAMES!r}]; "
        "bad = [m for m in ('torch', 'triton') if m in sys.modules]; assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)


@pytest.mark.parametrize(
    "kernel,params,version",
    [
        pytest.param(k, p, v, id=f"{k}-{v}-" + ",".join(f"{a}{b}" for a, b in p.items()))
        for k, p in CASES
        for v in ("v0", "v1")
    ],
)
def test_version_matches_reference(kernel, params, version):
    pkg, p, inputs, plan = _run(kernel, params, version)
    out, ref = plan.output(), pkg.reference(inputs, p)
    assert tuple(out.shape) == tuple(ref.shape)
    assert _rel(out, ref) <= pkg.tolerance("float32")


def test_defaults_are_sized_for_an_h100():
    """The minimum bytes at the defaults take 50 us - 2 ms at the H100's datasheet bandwidth, and the
    stage models are the minimum traffic (each input read once, each output written once)."""
    for name, minimum in (
        ("calib_spill", lambda p: 2 * 4 * p["M"] * p["N"]),
        ("calib_atomic", lambda p: 4 * p["n"] + 4),
    ):
        pkg = PKGS[name]
        p = pkg.validate_params({})
        for v in pkg.versions:
            (st,) = v.stages
            assert st.bytes(p) == minimum(p)
            assert 50e-6 < st.bytes(p) / (H100_GBPS * 1e9) < 2e-3
        assert pkg.memory_bytes(p) >= minimum(p)


def test_spill_versions_differ_only_in_warps():
    """Same kernel, grid and tile; v0 gives one warp 256 fp32 values per thread at the default row
    length (over the 255-register limit: spills), v1 four warps 64 values per thread."""
    n_default = PKGS["calib_spill"].validate_params({})["N"]
    assert n_default == 8192
    _, _, _, p0 = _run("calib_spill", {"M": 2, "N": n_default}, "v0")
    _, _, _, p1 = _run("calib_spill", {"M": 2, "N": n_default}, "v1")
    s0, s1 = p0.stages[0], p1.stages[0]
    assert s0.kernel is s1.kernel
    assert s0.grid_blocks == s1.grid_blocks == 2 and not s0.persistent and not s1.persistent
    assert s0.tiling["BLOCK"] == s1.tiling["BLOCK"] == 8192
    assert (s0.tiling["num_warps"], s0.tiling["values_per_thread"]) == (1, 256)
    assert (s1.tiling["num_warps"], s1.tiling["values_per_thread"]) == (4, 64)
    assert (
        s0.tiling["values_per_thread"] > 255 > 2 * s1.tiling["values_per_thread"]
    )  # v1: under half the limit
    assert torch.equal(p0.output(), p1.output())


def test_atomic_versions_differ_only_in_atomics_per_program():
    _, p, _, p0 = _run("calib_atomic", {"n": 4 * 8192}, "v0")
    _, _, _, p1 = _run("calib_atomic", {"n": 4 * 8192}, "v1")
    s0, s1 = p0.stages[0], p1.stages[0]
    assert s0.kernel is s1.kernel
    assert s0.grid_blocks == s1.grid_blocks == 4
    assert s0.tiling["BLOCK"] == s1.tiling["BLOCK"] == 8192
    assert (s0.tiling["atomics_per_program"], s1.tiling["atomics_per_program"]) == (64, 1)
    assert s0.tiling["atomics_on_acc"] == p["n"] // 128


@pytest.mark.parametrize("version", ["v0", "v1"])
def test_atomic_stage_resets_its_workspace(version):
    """The profiler launches a stage many times: each launch must give the full sum (not a running
    total) and leave the accumulator and the ticket counter at zero, with one kernel per launch."""
    pkg, p, inputs, plan = _run("calib_atomic", {"n": 2 * 8192 + 100}, version, launches=3)
    assert _rel(plan.output(), pkg.reference(inputs, p)) <= pkg.tolerance("float32")
    assert float(inputs["acc"]) == 0.0 and int(inputs["count"]) == 0


def test_atomic_tolerance_is_for_unordered_fp32_sums():
    assert PKGS["calib_atomic"].tolerance("float32") == 2e-4
    from kprof_mcp.kernel import default_tolerance

    assert PKGS["calib_spill"].tolerance("float32") == default_tolerance("float32")

"""Calibration pairs C (tensor cores idle, contended atomics, small tiles, shared-memory bank
conflicts): both versions of each package match the reference on the CPU (Triton interpreter,
tiny sizes), each package loads without torch or triton, and each launch is what the planted
problem says (precision of the dot, atomics per program and the self-resetting workspace, tile
sizes, the permutation's shared-memory path)."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kprof_mcp.kernel import default_tolerance
from kprof_mcp.packages import available, load

ROOT = Path(__file__).resolve().parents[2]
KERNELS_DIR = Path(__file__).resolve().parent / "kernels"
NAMES = ("calib_fma_gemm", "calib_histogram", "calib_small_tiles", "calib_bank_conflicts")
PKGS = {name: load(path) for name, path in available([KERNELS_DIR]).items() if name in NAMES}

CASES = [
    ("calib_fma_gemm", {"M": 64, "N": 64, "K": 64}),
    ("calib_fma_gemm", {"M": 100, "N": 72, "K": 40}),  # ragged tiles, K not a multiple of BLOCK_K
    ("calib_fma_gemm", {"M": 1, "N": 1, "K": 1}),
    ("calib_histogram", {"n": 5000}),  # one program, ragged
    ("calib_histogram", {"n": 3 * 4096 + 77}),  # four programs, the last one ragged
    ("calib_histogram", {"n": 1}),
    ("calib_small_tiles", {"M": 64, "N": 96, "K": 80}),
    ("calib_small_tiles", {"M": 130, "N": 70, "K": 33}),  # ragged in every dimension
    ("calib_small_tiles", {"M": 48, "N": 40, "K": 72}),  # fp16 (the interpreter miscomputes bf16)
    ("calib_bank_conflicts", {"B": 3}),
    ("calib_bank_conflicts", {"B": 1}),
    ("calib_bank_conflicts", {"B": 2, "dtype": "float16"}),  # 128x64 halves: rows of 128 bytes too
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


def test_all_four_packages_load_with_two_versions():
    assert set(PKGS) == set(NAMES)
    for pkg in PKGS.values():
        assert [v.name for v in pkg.versions] == ["v0", "v1"]
        assert pkg.describe()["params"][-1]["name"] == "dtype"
        assert pkg.description and all(v.doc for v in pkg.versions)


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
    assert tuple(out.shape) == tuple(ref.shape) and out.dtype == ref.dtype
    assert _rel(out, ref) <= pkg.tolerance(p["dtype"])


def test_tolerances():
    assert PKGS["calib_fma_gemm"].tolerance("float32") == 2e-3  # admits TF32 (~3e-4 on random data)
    assert PKGS["calib_histogram"].tolerance("int32") == 0.0  # counts are exact
    assert PKGS["calib_small_tiles"].tolerance("float16") == default_tolerance("float16")
    assert PKGS["calib_bank_conflicts"].tolerance("float32") == default_tolerance("float32")


def test_models_at_the_defaults():
    fma, hist, small, bank = (PKGS[n] for n in NAMES)
    p = fma.validate_params({})
    assert (p["M"], p["N"], p["K"], p["dtype"]) == (4096, 4096, 4096, "float32")
    for v in fma.versions:
        (st,) = v.stages
        assert st.tensor_cores and st.flops(p) == 2.0 * 4096**3 and st.bytes(p) == 3 * 4096 * 4096 * 4.0
    p = hist.validate_params({})
    assert p["n"] == 1 << 24 and p["dtype"] == "int32"
    for v in hist.versions:
        (st,) = v.stages
        assert st.flops(p) == 0.0 and st.bytes(p) == 4.0 * (1 << 24) + 4 * 256
    p = small.validate_params({})
    assert (p["M"], p["N"], p["K"], p["dtype"]) == (4096, 4096, 4096, "float16")
    for v in small.versions:
        (st,) = v.stages
        assert st.tensor_cores and st.flops(p) == 2.0 * 4096**3 and st.bytes(p) == 3 * 4096 * 4096 * 2.0
    p = bank.validate_params({})
    assert (p["B"], p["dtype"]) == (1 << 14, "float32")
    for v in bank.versions:
        (st,) = v.stages
        assert st.flops(p) == 0.0 and st.bytes(p) == 2 * 4 * (1 << 14) * 128 * 32
    for pkg in PKGS.values():  # inputs and outputs stay well under 4 GB at the defaults
        p = pkg.validate_params({})
        assert pkg.version("v0").stages[0].bytes(p) <= pkg.memory_bytes(p) < 1.5e9


def test_fma_gemm_versions_differ_only_in_input_precision():
    _, _, _, p0 = _run("calib_fma_gemm", {"M": 200, "N": 300, "K": 16}, "v0")
    _, _, _, p1 = _run("calib_fma_gemm", {"M": 200, "N": 300, "K": 16}, "v1")
    s0, s1 = p0.stages[0], p1.stages[0]
    assert s0.kernel is s1.kernel
    t0, t1 = dict(s0.tiling), dict(s1.tiling)
    assert (t0.pop("input_precision"), t1.pop("input_precision")) == ("ieee", "tf32")
    assert t0 == t1 and s0.grid_blocks == s1.grid_blocks == 2 * 3


def test_small_tiles_versions_differ_only_in_tiles_warps_and_stages():
    _, _, _, p0 = _run("calib_small_tiles", {"M": 256, "N": 128, "K": 64}, "v0")
    _, _, _, p1 = _run("calib_small_tiles", {"M": 256, "N": 128, "K": 64}, "v1")
    s0, s1 = p0.stages[0], p1.stages[0]
    assert s0.kernel is s1.kernel
    pick = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages")
    assert tuple(s0.tiling[k] for k in pick) == (32, 32, 32, 2, 1)
    assert tuple(s1.tiling[k] for k in pick) == (128, 128, 64, 8, 3)
    assert s0.tiling["GROUP_M"] == s1.tiling["GROUP_M"]
    assert (s0.grid_blocks, s1.grid_blocks) == (8 * 4, 2 * 1)
    assert s0.tiling["operand_bytes_per_flop"] == 4 * s1.tiling["operand_bytes_per_flop"]


def test_histogram_versions_differ_only_in_atomics_per_program():
    n = 5 * 4096
    _, _, _, p0 = _run("calib_histogram", {"n": n}, "v0")
    _, _, _, p1 = _run("calib_histogram", {"n": n}, "v1")
    s0, s1 = p0.stages[0], p1.stages[0]
    assert s0.kernel is s1.kernel and s0.grid_blocks == s1.grid_blocks == 5
    assert (s0.tiling["PRIVATE"], s1.tiling["PRIVATE"]) == (False, True)
    assert s0.tiling["global_atomics_on_bins"] == n and s1.tiling["global_atomics_on_bins"] == 5 * 256
    assert torch.equal(p0.output(), p1.output())


@pytest.mark.parametrize("version", ["v0", "v1"])
def test_histogram_stage_resets_its_workspace(version):
    """The profiler launches a stage many times: each launch must give the full counts (not a
    running total) and leave the bins and the ticket counter at zero, with one kernel per launch."""
    pkg, p, inputs, plan = _run("calib_histogram", {"n": 2 * 4096 + 100}, version, launches=3)
    assert torch.equal(plan.output(), pkg.reference(inputs, p))
    assert int(inputs["bins"].abs().sum()) == 0 and int(inputs["count"]) == 0


def test_histogram_of_skewed_data():
    """Correct for any valid input, not only uniform data: every value in one bin, and a ramp."""
    pkg = PKGS["calib_histogram"]
    p = pkg.validate_params({"n": 20000})
    for fill in (lambda x: x.fill_(255), lambda x: x.copy_(torch.arange(x.numel()) % 7)):
        for version in ("v0", "v1"):
            inputs = pkg.make_inputs(p, "cpu")
            fill(inputs["x"])
            plan = pkg.version(version).build(inputs, p)
            plan.stages[0].fn()
            assert torch.equal(plan.output(), pkg.reference(inputs, p))


def test_bank_conflict_versions_share_loads_stores_and_grid():
    _, _, _, p0 = _run("calib_bank_conflicts", {"B": 2}, "v0")
    _, _, _, p1 = _run("calib_bank_conflicts", {"B": 2}, "v1")
    s0, s1 = p0.stages[0], p1.stages[0]
    assert s0.kernel is s1.kernel and s0.grid_blocks == s1.grid_blocks == 2
    assert (s0.tiling["GATHER"], s1.tiling["GATHER"]) == (True, False)
    assert (s0.tiling["R"], s0.tiling["C"]) == (128, 32)  # a row of 32 fp32 = the 32 banks
    assert s0.tiling["num_warps"] == s1.tiling["num_warps"]
    assert torch.equal(p0.output(), p1.output())
    _, _, _, h0 = _run("calib_bank_conflicts", {"B": 1, "dtype": "float16"}, "v0")
    assert (h0.stages[0].tiling["R"], h0.stages[0].tiling["C"]) == (128, 64)  # 64 halves = 128 bytes

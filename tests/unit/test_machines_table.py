"""The machine table (``kprof_mcp/machines.json``, issue 36) is consistent data: every pipe and
memory level has a rate, a unit and a source; every move names pipes or levels that exist; and
the per-SM rates reproduce every datasheet peak in ``devices.json``: rate x SM count x the clock
the datasheet uses (``parts``), within 3 %, for every device and every dtype it lists."""

import json
from importlib import resources

import pytest
from conftest import ROOT

TABLE = json.loads(resources.files("kprof_mcp").joinpath("machines.json").read_text())
DEVICES = json.loads(resources.files("kprof_mcp").joinpath("devices.json").read_text())["devices"]
ARCHS = TABLE["archs"]
PARTS = TABLE["parts"]
MIX = ROOT / "docs" / "evidence" / "machine-model" / "fastpath_mix.json"


def _peak_tflops(part: dict, dtype: str) -> float:
    """The table's peak for ``dtype`` on ``part``: the dtype's pipe (dtype_pipes: the first the
    arch has), its rate x FLOP per op x SM count x the part's clock for that dtype, scaled for
    GeForce parts' fp32-accumulate tensor math."""
    arch = ARCHS[part["arch"]]
    spec = TABLE["dtype_pipes"][dtype]
    name = next(p for p in spec["pipes"] if p in arch["pipes"])
    rate = arch["pipes"][name]["rate"] * spec["flop_per_op"][name]
    if part.get("geforce"):
        rate *= TABLE["geforce_scale"].get(name, 1.0)
    mhz = part.get("clock_mhz_by_dtype", {}).get(dtype, part["clock_mhz"])
    return rate * part["sm_count"] * mhz * 1e6 / 1e12


def test_the_table_covers_the_required_archs_and_every_device_arch():
    assert {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100"} <= set(ARCHS)
    for d in DEVICES:
        assert d["arch"] in ARCHS, d["key"]


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_every_pipe_and_level_has_rate_unit_and_source(arch):
    a = ARCHS[arch]
    assert a["name"] and a["sources"]
    for name in ("fma", "fp64", "alu", "xu", "lsu", "tensor_fp16", "tensor_bf16", "tensor_tf32"):
        assert name in a["pipes"], (arch, name)
    for name, p in a["pipes"].items():
        assert isinstance(p["rate"], int | float) and p["rate"] > 0, (arch, name)
        assert p["unit"] and p["counter"] and len(p["source"]) > 20, (arch, name)
    assert {"shared", "l1", "l2", "dram"} <= set(a["memory"])
    for name, m in a["memory"].items():
        assert m["unit"] and m["source"], (arch, name)
        if name != "dram":  # DRAM's rate is the device's peak_gbps
            assert m["rate"] > 0, (arch, name)


@pytest.mark.parametrize("device", DEVICES, ids=lambda d: d["key"])
def test_rates_reproduce_every_datasheet_peak_of_devices_json(device):
    part = PARTS[device["key"]]
    assert part["arch"] == device["arch"] and part["sm_count"] == device["sm_count"]
    for dtype, peak in device["peak_tflops"].items():
        got = _peak_tflops(part, dtype)
        assert got == pytest.approx(peak, rel=0.03), (device["key"], dtype, got, peak)


@pytest.mark.parametrize("key", sorted(k for k, p in PARTS.items() if p.get("reference")))
def test_rates_reproduce_the_reference_parts_datasheet_peaks(key):
    """Parts not in devices.json (A10, A40, RTX 3090, L4, RTX 5090) check the sm_86, sm_89 and
    sm_120 rates, GeForce's half-rate fp32 accumulation included."""
    part = PARTS[key]
    for dtype, peak in part["peak_tflops"].items():
        got = _peak_tflops(part, dtype)
        assert got == pytest.approx(peak, rel=0.03), (key, dtype, got, peak)


def test_every_part_names_a_device_or_is_a_reference():
    keys = {d["key"] for d in DEVICES}
    for key, part in PARTS.items():
        assert key in keys or part.get("reference"), key
        assert part["arch"] in ARCHS and part["source"]


def test_every_move_is_complete_and_names_pipes_or_levels_that_exist():
    anywhere = {n for a in ARCHS.values() for n in (*a["pipes"], *a["memory"])}
    keys = [m["key"] for m in TABLE["moves"]]
    assert len(keys) == len(set(keys))
    for k in (
        "fp64_to_fp32",
        "ffma_dot_to_tf32",
        "ffma_dot_to_bf16",
        "dfma_dot_to_dmma",
        "tf32_to_bf16",
        "bf16_to_fp8",
        "precise_to_fast_math",
        "mufu_to_poly",
        "int64_to_int32",
        "intdiv_to_shift",
    ):
        assert k in keys
    for m in TABLE["moves"]:
        assert m["from"] in anywhere and m["to"] in anywhere, m["key"]
        assert m["per_op"] > 0 and m["work"], m["key"]
        assert m["when"] and m["advice"] and m["source"], m["key"]


def test_moves_are_per_arch_a_move_exists_only_where_its_pipes_do():
    def available(arch):
        names = {*ARCHS[arch]["pipes"], *ARCHS[arch]["memory"]}
        return {m["key"] for m in TABLE["moves"] if m["from"] in names and m["to"] in names}

    assert "bf16_to_fp8" not in available("sm_80") and "bf16_to_fp8" in available("sm_90")
    assert "bf16_to_fp8" not in available("sm_86") and "bf16_to_fp8" in available("sm_89")
    for arch in ("sm_86", "sm_89", "sm_120"):  # no fp64 tensor cores on these
        assert "dfma_dot_to_dmma" not in available(arch)
    assert "dfma_dot_to_dmma" in available("sm_80") and "fp8_to_fp4" in available("sm_100")


def test_consumer_fp64_is_a_64th_of_fp32_and_datacenter_a_half():
    for arch in ("sm_86", "sm_89", "sm_120"):
        p = ARCHS[arch]["pipes"]
        assert p["fp64"]["rate"] == 2 and p["fma"]["rate"] / p["fp64"]["rate"] == 64
    for arch in ("sm_80", "sm_90", "sm_100"):
        p = ARCHS[arch]["pipes"]
        assert p["fma"]["rate"] / p["fp64"]["rate"] == 2


def test_removals_are_documented():
    keys = {r["key"] for r in TABLE["removals"]}
    assert {"spills", "over_fetch", "atomics", "bank_conflicts", "uncoalesced", "divergence"} <= keys
    for r in TABLE["removals"]:
        assert r["resource"] and r["what"] and r["arithmetic"] and r["source"], r["key"]


def test_math_moves_match_the_recorded_sass_counts():
    """precise_to_fast_math's per-call counts and per_op are the recorded SASS fast-path counts
    (docs/evidence/machine-model/fastpath_mix.json, nvcc 13.0, sm_90)."""
    mix = json.loads(MIX.read_text())["sm_90"]
    move = next(m for m in TABLE["moves"] if m["key"] == "precise_to_fast_math")
    names = {
        "sinf": ("sinf", "fast_sinf"),
        "cosf": ("cosf", None),
        "expf": ("expf", "fast_expf"),
        "logf": ("logf", "fast_logf"),
        "x/y": ("div", "fast_div"),
        "powf": ("powf", "fast_powf"),
        "sigmoid": ("sigmoid", "fast_sigmoid"),
    }
    for fn, (precise, fast) in names.items():
        for side, rec in (("precise", precise), ("fast", fast)):
            if rec is None:
                continue
            for pipe, n in move["per_call"][fn][side].items():
                assert mix[rec].get(pipe, 0) == n, (fn, side, pipe)
    sinf = move["per_call"]["sinf"]
    assert move["per_op"] == pytest.approx(sinf["fast"]["xu"] / sinf["precise"]["fma"], abs=0.002)
    div = next(m for m in TABLE["moves"] if m["key"] == "intdiv_to_shift")
    assert div["per_op"] == pytest.approx(mix["i_udiv_pow2_shift"]["alu"] / mix["i_div"]["alu"], abs=0.002)

"""The noise floor and the baseline verdict (kprof_mcp.analysis.noise, kprof_mcp.noise) on the CPU:
A/A series with known spreads, the floor that applies to a time scale, the verdict with and without
a floor, and `kprof noise` end to end on the CPU (interpreter timing) storing a series that the next
profile carries."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kprof_mcp.analysis.noise import floor_for, judge, spread
from kprof_mcp.render.noise import judgement_words


def verdict(*args):
    """(verdict, what it used): the judgement and its words, as the contract shows them."""
    j = judge(*args)
    return j.verdict, judgement_words(j)


ROOT = Path(__file__).resolve().parents[2]


def test_spread_of_an_a_a_series():
    # matmul v3 locked at 1245 MHz on the H100 (docs/evidence/h100-clocks/clocks_1245.log): bimodal
    s = spread([226485, 227045, 232964, 232933, 233156, 227925, 230036, 234612])
    assert s["profiles"] == 8 and s["range_pct"] == pytest.approx(100 * (234612 - 226485) / s["median_ns"])
    assert 3.4 < s["range_pct"] < 3.6 and s["rel_sd_pct"] > 1


def test_the_floor_is_the_worst_series_of_the_same_time_scale():
    entries = [
        {"kernel": "matmul", "version": "v3", "median_ns": 210e3, "range_pct": 3.55, "profiles": 8},
        {"kernel": "softmax", "version": "v2", "median_ns": 193e3, "range_pct": 0.41, "profiles": 8},
        {"kernel": "vector_add", "version": "v1", "median_ns": 70e3, "range_pct": 0.09, "profiles": 8},
        {"kernel": "tiny", "version": "v0", "median_ns": 3e3, "range_pct": 12.0, "profiles": 8},
    ]
    f = floor_for(entries, 150e3)
    assert (
        f["pct"] == 3.55 and f["from"] == "matmul v3" and f["series"] == 3
    )  # 3 us is 50x away: not its scale
    assert floor_for(entries, 5e3)["pct"] == 12.0  # a tiny stage gets the tiny kernel's floor
    assert floor_for(entries, 50e9) is None and floor_for([], 1e5) is None


def test_a_memory_bound_stage_takes_the_floor_of_memory_bound_series():
    """The H100's A/A series (docs/evidence/h100-clocks/noise.json): the GEMM's 3.48 % comes from its
    clock moving under a lock (docs/evidence/h100-thermal); a softmax of the same time scale moves
    0.22 % and must not be told that only a > 3.48 % change is one."""
    entries = [
        {"kernel": "matmul", "version": "v3", "median_ns": 217.8e3, "range_pct": 3.48, "bound": "compute"},
        {"kernel": "softmax", "version": "v2", "median_ns": 193.3e3, "range_pct": 0.22, "bound": "memory"},
        {"kernel": "vector_add", "version": "v1", "median_ns": 70.3e3, "range_pct": 0.14, "bound": "memory"},
    ]
    mem = floor_for(entries, 190e3, "memory")
    assert (
        mem["pct"] == 0.22 and mem["from"] == "softmax v2" and mem["class"] == "same" and mem["series"] == 2
    )
    comp = floor_for(entries, 190e3, "compute")
    assert comp["pct"] == 3.48 and comp["class"] == "same" and comp["series"] == 1
    # No series of the stage's class: the worst of its time scale, and it says so.
    only_mem = [e for e in entries if e["bound"] == "memory"]
    assert floor_for(only_mem, 190e3, "compute")["class"] == "any"
    # Older stores have no class: every series of the scale counts, as before.
    legacy = [{k: v for k, v in e.items() if k != "bound"} for e in entries]
    assert floor_for(legacy, 190e3, "memory")["pct"] == 3.48
    assert floor_for(entries, 190e3)["class"] == "unknown"


@pytest.mark.parametrize(
    "prev,cur,ci,floor,want",
    [
        (210e3, 204e3, (1.01, 1.04), 3.55, "no significant change"),  # +2.9 %: inside matmul's 3.55 % floor
        (210e3, 190e3, (1.08, 1.13), 3.55, "faster"),  # +10.5 %, CI excludes 1
        (190e3, 210e3, (0.88, 0.93), 3.55, "slower"),
        (193e3, 191e3, (1.005, 1.015), 0.41, "faster"),  # +1.0 % over softmax's 0.41 % floor
        (193e3, 191e3, (0.99, 1.03), 0.41, "no significant change"),  # the CI includes no change
        (193e3, 191e3, (1.005, 1.015), None, "faster"),  # no floor: the CI alone (and it says so)
        (193e3, 191e3, None, 0.41, "faster"),  # no samples: the floor alone
        (193e3, 191e3, None, None, "unknown"),
    ],
)
def test_verdict(prev, cur, ci, floor, want):
    v, used = verdict(prev, cur, ci, floor)
    assert v == want
    if floor is None and ci is not None:
        assert "no noise floor measured" in used
    if floor is not None:
        assert f"noise floor {floor:.2f} %" in used


@pytest.mark.parametrize(
    "prev,cur,ci,floor,spread,want",
    [
        # Two H100 event profiles of vector_add v0/v1 (the same code): a CI that excludes 1 and a change
        # far inside each profile's own spread. With no floor measured, the spread guards the verdict.
        (70.27e3, 70.34e3, (0.9985, 0.9995), None, 1.5, "no significant change"),
        (260.55e3, 253.80e3, (1.025, 1.030), None, 1.5, "faster"),  # matmul v0 → v1: +2.7 %, over 1.5 %
        (253.80e3, 260.55e3, (0.971, 0.976), None, 1.5, "slower"),
        (70.27e3, 70.34e3, (0.9985, 0.9995), 0.05, 1.5, "slower"),  # a measured floor wins over the spread
    ],
)
def test_the_profiles_spread_stands_in_for_a_floor_not_measured(prev, cur, ci, floor, spread, want):
    v, used = verdict(prev, cur, ci, floor, spread)
    assert v == want, used
    if floor is None:
        assert "the profiles' own spread (IQR/median up to 1.50 %) stands in for it" in used
        assert "understates" not in used
    else:
        assert "stands in" not in used and f"noise floor {floor:.2f} %" in used
    if want == "no significant change":
        assert "a change inside the profiles' spread: compare_versions" in used


def test_kprof_noise_on_the_cpu_stores_a_floor_that_the_next_profile_carries(tmp_path):
    env = dict(
        os.environ,
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        KPROF_FORCE_CPU="1",
        KPROF_WARM="0",
        TRITON_INTERPRET="1",
        PYTHONPATH=str(ROOT),
    )
    cmd = [
        sys.executable,
        "-m",
        "kprof_mcp.cli",
        "--workspace",
        str(tmp_path),
        "noise",
        "--case",
        "vector_add:v1:n=4096",
        "--rounds",
        "3",
    ]
    cp = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert cp.returncode == 0, cp.stderr[-2000:]
    assert "| vector_add v1 {'n': 4096} |" in cp.stdout and "(max − min) ÷ median" in cp.stdout
    (stored,) = (tmp_path / "cache" / "kprof-mcp" / "noise").glob("*.json")
    (series,) = json.loads(stored.read_text())["series"]
    assert series["profiles"] == 3 and len(series["times_ns"]) == 3 and series["clock"] == "free"
    assert series["bound"] in (
        "memory",
        None,
    )  # vector_add's model: 1 FLOP per 12 bytes (none on the CPU: no peaks)
    bad = subprocess.run(cmd[:-2] + ["--rounds", "1"], env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "2 to 50" in bad.stderr + bad.stdout


def test_the_contract_gives_a_verdict_per_stage_with_what_it_used():
    """Two H100 event profiles (matmul v0 then v1, tests/fixtures/h100_event) with a floor injected as
    a profile on that GPU would carry it."""
    import glob

    from kprof_mcp import render
    from kprof_mcp.models import ProfileResult

    fix = ROOT / "tests" / "fixtures" / "h100_event" / "matmul"
    v0, v1 = (
        ProfileResult.model_validate_json(
            Path(glob.glob(str(fix / "*" / f"*-{v}" / "result.json"))[0]).read_text()
        )
        for v in ("v0", "v1")
    )
    v1.noise_floor = {
        "stages": {"matmul": {"pct": 3.55, "from": "matmul v3", "bound": "compute", "class": "same"}},
        "source": "kprof noise on this GPU",
    }
    text = render.render_contract(v1, v0)
    row = next(ln for ln in text.split("Verdict per stage")[1].splitlines() if ln.startswith("| matmul |"))
    change = 100 * (v0.stages[0].timing.median_ns / v1.stages[0].timing.median_ns - 1)
    assert (
        abs(change) > 3.55
        and ("**faster**" in row) == (change > 0)
        and "noise floor 3.55 % (matmul v3; compute-bound, as this stage)" in row
    )
    assert "floor from kprof noise on this GPU" in text
    # The same two profiles with a floor larger than the change: no significant change.
    v1.noise_floor["stages"]["matmul"]["pct"] = abs(change) + 1
    assert "**no significant change**" in render.render_contract(v1, v0)
    # No floor measured on that GPU: the two profiles' own spread stands in for it, and the row says so.
    v1.noise_floor = {}
    row = next(
        ln
        for ln in render.render_contract(v1, v0).split("Verdict per stage")[1].splitlines()
        if ln.startswith("| matmul |")
    )
    spread = 100 * max(v0.stages[0].timing.rel_iqr, v1.stages[0].timing.rel_iqr)
    assert f"IQR/median up to {spread:.2f} %) stands in for it" in row
    assert ("**no significant change**" in row) == (abs(change) <= spread), (change, spread, row)

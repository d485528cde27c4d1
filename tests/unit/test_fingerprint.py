"""Whether two profiles can be compared (kprof_mcp.analysis.fingerprint), on results recorded on an
H100 (tests/fixtures/h100_event) with their environment changed field by field."""

import glob
from pathlib import Path

import pytest

from kprof_mcp import render
from kprof_mcp.analysis.fingerprint import differences, fingerprint, refusal
from kprof_mcp.models import ProfileResult

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "h100_event"


def _result() -> ProfileResult:
    (f,) = glob.glob(str(FIX / "matmul" / "*" / "*-v1" / "result.json"))[:1]
    return ProfileResult.model_validate_json(Path(f).read_text())


def _with(r: ProfileResult, **device) -> ProfileResult:
    before = dict(r.device.clocks_before, **device.pop("before", {}))
    return r.model_copy(update={"device": r.device.model_copy(update={**device, "clocks_before": before})})


def test_a_recorded_profile_has_its_fingerprint():
    fp = fingerprint(_result())
    assert fp["GPU"] == "NVIDIA H100 80GB HBM3" and fp["driver"] == "580.159.04"
    assert fp["torch"].startswith("2.11") and fp["Triton"] == "3.6.0" and fp["SM clock lock (MHz)"] == "free"


def test_the_same_environment_differs_in_nothing():
    assert differences(_result(), _result()) == []


def test_each_difference_is_named_previous_to_current():
    a = _with(_result(), before={"power.limit": "700.00", "ecc.mode.current": "Enabled"})
    b = _with(
        a,
        driver_version="590.1",
        clocks_locked=True,
        sm_clock_lock_mhz=1305,
        before={"power.limit": "500.00", "ecc.mode.current": "Disabled"},
    )
    # Fields a result does not record (older recordings) are not called different.
    assert differences(_result(), _with(_result(), before={"ecc.mode.current": "Disabled"})) == []
    d = differences(a, b)
    assert "driver 580.159.04 → 590.1" in d and "SM clock lock (MHz) free → 1305" in d
    assert "ECC Enabled → Disabled" in d and "power limit (W) 700.00 → 500.00" in d
    # Named under the vs-Baseline table of the contract.
    text = render.render_contract(b, a)
    assert "environments differ (" in text and "SM clock lock (MHz) free → 1305" in text


def test_only_another_gpu_model_is_refused_as_a_baseline():
    base = _result()
    assert refusal(base, ["NVIDIA H100 80GB HBM3"]) is None
    why = refusal(base, ["NVIDIA H200"])
    assert why and "another GPU model" in why and "NVIDIA H100 80GB HBM3" in why
    assert "has none" in refusal(base, [])
    cpu = _with(base, kind="cpu", name="x86_64")
    assert refusal(cpu, []) is None and refusal(cpu, ["NVIDIA H200"]) is None


def test_the_engine_refuses_a_gpu_baseline_on_a_machine_without_that_gpu(tmp_path):
    """An H100 profile given as the baseline of a profile on this CPU-only machine: refused before
    anything runs, saying why and what to do."""
    import shutil

    from kprof_mcp.engine import Config, Engine, KprofError

    src = Path(glob.glob(str(FIX / "vector_add" / "*" / "*-v1"))[0])
    shutil.copytree(src, tmp_path / "base")
    e = Engine(Config(workspace=tmp_path, force_cpu=True, warm=False))
    with pytest.raises(
        KprofError, match=r"baseline .*ran on a GPU \(NVIDIA H100 80GB HBM3\) and this machine has none"
    ):
        e.check_profile("vector_add", "v1", {"n": 256}, mode="event", baseline=str(tmp_path / "base"))


def test_profiles_from_different_workers_name_the_host_and_the_clock_they_ran_at():
    a = _result()
    a = a.model_copy(
        deep=True, update={"profiler": {**a.profiler, "cluster": {"worker": "tcp://w1", "host": "node-a"}}}
    )
    b = a.model_copy(
        deep=True, update={"profiler": {**a.profiler, "cluster": {"worker": "tcp://w2", "host": "node-b"}}}
    )
    for r, mhz in ((a, [1980.0, 1965.0]), (b, [1410.0, 1395.0])):
        s = r.stages[0]
        r.stages[0] = s.model_copy(update={"timing": s.timing.model_copy(update={"sm_clock_mhz": mhz})})
    d = differences(a, b)
    assert "host node-a → node-b" in d
    assert "SM clock while timed (MHz) 1980 → 1410" in d, d

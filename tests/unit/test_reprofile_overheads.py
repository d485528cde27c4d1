"""Issue 40's cuts of a re-profile's overheads, on the CPU: the clock state and the SM clock read
through NVML in-process (formats as nvidia-smi's, checked against a recorded H200 row), nvidia-smi
only where NVML is missing; CUPTI's teardown after a session as KPROF_CUPTI_TEARDOWN says; a CUPTI
batch's session start, stop and trace booked as their own phases; one energy window."""

import ctypes
import json
import time
from pathlib import Path

import pytest

from kprof_mcp.capture import gpu_state
from kprof_mcp.capture import timer as timer_mod
from kprof_mcp.capture.timer import Timer
from kprof_mcp.models import ProfileRequest
from kprof_mcp.tools import nvidia_smi, nvml

FIX = Path(__file__).resolve().parents[1] / "fixtures"


def _recorded_row() -> dict:
    """nvidia-smi's CLOCK_FIELDS row as recorded on an H200 (clocks_after of an event profile)."""
    d = json.loads((FIX / "row_programs_v0_event_h200.result.json").read_text())["device"]
    return d["clocks_after"]


class FakeNvml:
    """NVML's entry points used by gpu_state, answering what the recorded row says (or an error)."""

    def __init__(self, row: dict, unsupported: tuple[str, ...] = ()):
        self.row, self.unsupported = row, unsupported

    def _set(self, ref, value) -> int:
        ref._obj.value = value
        return 0

    def __getattr__(self, name):
        row = self.row
        clock = {1: "clocks.sm", 2: "clocks.mem"}
        if name in self.unsupported:
            return lambda *a: 3  # NVML_ERROR_NOT_SUPPORTED
        table = {
            "nvmlDeviceGetClockInfo": lambda h, c, ref: self._set(ref, int(row[clock[c.value]])),
            "nvmlDeviceGetMaxClockInfo": lambda h, c, ref: self._set(
                ref, int(row[clock[c.value].replace("clocks.", "clocks.max.")])
            ),
            "nvmlDeviceGetPowerUsage": lambda h, ref: self._set(ref, round(float(row["power.draw"]) * 1000)),
            "nvmlDeviceGetTemperature": lambda h, s, ref: self._set(ref, int(row["temperature.gpu"])),
            "nvmlDeviceGetPersistenceMode": lambda h, ref: self._set(
                ref, int(row["persistence_mode"] == "Enabled")
            ),
            "nvmlDeviceGetPowerManagementLimit": lambda h, ref: self._set(
                ref, round(float(row["power.limit"]) * 1000)
            ),
            "nvmlDeviceGetEccMode": lambda h, cur, pend: self._set(
                cur, int(row["ecc.mode.current"] == "Enabled")
            ),
            "nvmlDeviceGetMigMode": lambda h, cur, pend: self._set(
                cur, int(row["mig.mode.current"] == "Enabled")
            ),
            "nvmlSystemGetDriverVersion": lambda buf, n: (
                ctypes.memmove(buf, row["driver_version"].encode() + b"\0", len(row["driver_version"]) + 1)
                and 0
            ),
        }
        if name not in table:
            raise AttributeError(name)
        return table[name]


@pytest.fixture
def fake_nvml(monkeypatch):
    def install(lib):
        monkeypatch.setattr(nvml, "_lib", lambda: lib)
        monkeypatch.setattr(nvml, "_handle", lambda lib_, smi: None if lib_ is None else ctypes.c_void_p(1))

    return install


def test_the_state_read_through_nvml_is_nvidia_smis_row(fake_nvml, monkeypatch):
    row = _recorded_row()
    fake_nvml(FakeNvml(row))
    monkeypatch.setattr(nvidia_smi, "clocks", lambda i: pytest.fail("nvidia-smi asked while NVML answers"))
    assert gpu_state.state(0) == row  # the same keys, in the same order, the same formats


def test_what_the_gpu_does_not_support_reads_na_as_nvidia_smi_writes_it(fake_nvml):
    row = _recorded_row()
    fake_nvml(
        FakeNvml(row, unsupported=("nvmlDeviceGetEccMode", "nvmlDeviceGetMigMode", "nvmlDeviceGetPowerUsage"))
    )
    got = gpu_state.state(0)
    assert got["ecc.mode.current"] == got["mig.mode.current"] == got["power.draw"] == "[N/A]"
    assert got["clocks.sm"] == row["clocks.sm"]


def test_without_nvml_the_state_and_the_clock_come_from_nvidia_smi(fake_nvml, monkeypatch):
    fake_nvml(None)
    asked = []

    def query(fields=None, index=None):
        asked.append(list(fields))
        return [{"clocks.sm": "1305"}]

    monkeypatch.setattr(nvidia_smi, "clocks", lambda i: {"clocks.sm": "1305", "from": "nvidia-smi"})
    monkeypatch.setattr(nvidia_smi, "query", query)
    assert gpu_state.state(0)["from"] == "nvidia-smi"
    read = gpu_state.sm_clock_reader(0)
    assert read.source == "nvidia-smi" and read() == 1305.0
    assert asked == [["clocks.sm"]]  # one field, not the 11 of the clock state


def test_the_sm_clock_is_read_through_nvml_when_it_answers(fake_nvml, monkeypatch):
    fake_nvml(FakeNvml(_recorded_row()))
    monkeypatch.setattr(nvml, "sm_clock_reader", lambda smi: lambda: 1305.0)
    monkeypatch.setattr(
        nvidia_smi, "query", lambda *a, **k: pytest.fail("nvidia-smi asked while NVML answers")
    )
    read = gpu_state.sm_clock_reader(0)
    assert read.source == "nvml" and read() == 1305.0


def test_cupti_teardown_is_the_environments_unless_kprof_cupti_teardown_says(monkeypatch):
    import os

    monkeypatch.delenv("TEARDOWN_CUPTI", raising=False)
    monkeypatch.delenv(timer_mod.TEARDOWN_ENV, raising=False)
    assert timer_mod.keep_cupti_attached() is False and "TEARDOWN_CUPTI" not in os.environ  # unset: untouched
    monkeypatch.setenv("TEARDOWN_CUPTI", "0")
    assert timer_mod.keep_cupti_attached() is True and os.environ["TEARDOWN_CUPTI"] == "0"  # inherited
    monkeypatch.setenv(timer_mod.TEARDOWN_ENV, "1")  # kprof's knob wins over what was inherited
    assert timer_mod.keep_cupti_attached() is False and os.environ["TEARDOWN_CUPTI"] == "1"
    monkeypatch.setenv(timer_mod.TEARDOWN_ENV, "0")
    assert timer_mod.keep_cupti_attached() is True and os.environ["TEARDOWN_CUPTI"] == "0"


def test_a_cupti_batch_books_its_session_start_stop_and_trace_apart_from_the_runs(monkeypatch):
    req = ProfileRequest(
        kernel="k", kernel_source="/x", version="v", params={}, mode="event", out_root="/tmp"
    )
    t = Timer(None, False, req, "cpu")

    def batch(fn, n):
        time.sleep(0.05)
        t._cupti_s = {"cupti_start": 0.01, "cupti_stop": 0.02, "cupti_export": 0.005, "python_gc": 0.001}
        return [1.0] * n

    monkeypatch.setattr(t, "_one_batch", batch)
    t._batch(lambda: None, 3)
    t._batch(lambda: None, 3)
    assert t.spent_s["cupti_start"] == pytest.approx(0.02)
    assert t.spent_s["cupti_stop"] == pytest.approx(0.04)
    assert t.spent_s["cupti_export"] == pytest.approx(0.01)
    assert t.spent_s["python_gc"] == pytest.approx(0.002)
    # the runs: the batches' wall time less the session's parts
    assert 0.1 - 0.07 - 0.012 <= t.spent_s["timing_window"] <= 0.5


def test_gc_clock_books_the_collections_run_inside_it():
    import gc

    from kprof_mcp.capture.timer import gc_clock

    with gc_clock() as spent:
        for _ in range(3):
            gc.collect()
    assert spent[0] > 0.0
    with gc_clock() as idle:
        pass
    assert idle[0] == 0.0


def test_event_mode_times_one_energy_window():
    """One window's figures (a list of one), from a fake counter stepping every 20 ms at 500 W."""
    from kprof_mcp.modes import event

    class FakeTorch:
        class cuda:  # noqa: N801
            @staticmethod
            def synchronize():
                pass

    req = ProfileRequest(
        kernel="k", kernel_source="/x", version="v", params={}, mode="event", out_root="/tmp"
    )
    t0 = time.perf_counter()

    def counter():
        time.sleep(0.001)
        return 500.0 * 1e3 * (int((time.perf_counter() - t0) / 0.02) * 0.02)

    got = Timer(FakeTorch, True, req, "events", flush_buf=object()).energy(
        lambda: time.sleep(0.0005), counter, window_s=0.2, windows=event.ENERGY_WINDOWS
    )
    assert event.ENERGY_WINDOWS == 1
    assert len(got["power_w"]) == 1 and got["power_w"][0] == pytest.approx(500.0, rel=0.1)

"""The GPU's SM clock and its clock, power and thermal state read in the profiling process through
NVML (``libnvidia-ml.so.1`` with ctypes, initialised once per process by :mod:`kprof_mcp.tools.nvml`),
with ``nvidia-smi`` as the fallback where NVML is missing (issue 40).

Why: on an H100 a ``nvidia-smi --query-gpu`` of the 11 clock fields took ~0.95 s right after a
CUPTI session (docs/evidence/agent-loop: 1.9 s of a 6.6 s re-profile went to two such reads), an
NVML call microseconds. :func:`state` gives the keys and formats of
``nvidia-smi --query-gpu=<CLOCK_FIELDS> --format=csv,noheader,nounits`` (clocks in MHz, watts with two
decimals, "Enabled"/"Disabled", "[N/A]" where the GPU does not support a field), so ``clocks_after``
reads as before whichever way it was read."""

from __future__ import annotations

import ctypes
from typing import Callable

from ..tools import nvidia_smi, nvml

NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU = 1, 2, 0
NA = "[N/A]"


def _handle(index: int):
    lib = nvml._lib()
    handle = nvml._handle(lib, nvidia_smi.smi_id(index)) if lib is not None else None
    return (lib, handle) if handle is not None else (None, None)


def _uint(lib, fn: str, *args) -> int | None:
    out = ctypes.c_uint()
    try:
        if getattr(lib, fn)(*args, ctypes.byref(out)) != 0:
            return None
    except AttributeError:
        return None
    return int(out.value)


def _modes(lib, fn: str, handle) -> str:
    """A current/pending mode pair (ECC, MIG) as nvidia-smi words the current one."""
    cur, pending = ctypes.c_uint(), ctypes.c_uint()
    try:
        if getattr(lib, fn)(handle, ctypes.byref(cur), ctypes.byref(pending)) != 0:
            return NA
    except AttributeError:
        return NA
    return "Enabled" if cur.value else "Disabled"


def _driver(lib) -> str:
    buf = ctypes.create_string_buffer(96)
    try:
        if lib.nvmlSystemGetDriverVersion(buf, ctypes.c_uint(96)) != 0:
            return NA
    except AttributeError:
        return NA
    return buf.value.decode(errors="replace")


def _num(v: int | None, scale: float = 1.0, fmt: str = "{:.0f}") -> str:
    return NA if v is None else fmt.format(v / scale)


def nvml_state(lib, handle) -> dict[str, str]:
    """``nvidia_smi.CLOCK_FIELDS`` read through NVML (nvidia-smi's nounits formats)."""
    u = lambda fn, *a: _uint(lib, fn, handle, *a)  # noqa: E731
    persistence = u("nvmlDeviceGetPersistenceMode")
    values = {
        "clocks.sm": _num(u("nvmlDeviceGetClockInfo", ctypes.c_int(NVML_CLOCK_SM))),
        "clocks.max.sm": _num(u("nvmlDeviceGetMaxClockInfo", ctypes.c_int(NVML_CLOCK_SM))),
        "clocks.mem": _num(u("nvmlDeviceGetClockInfo", ctypes.c_int(NVML_CLOCK_MEM))),
        "clocks.max.mem": _num(u("nvmlDeviceGetMaxClockInfo", ctypes.c_int(NVML_CLOCK_MEM))),
        "power.draw": _num(u("nvmlDeviceGetPowerUsage"), 1000.0, "{:.2f}"),
        "temperature.gpu": _num(u("nvmlDeviceGetTemperature", ctypes.c_int(NVML_TEMPERATURE_GPU))),
        "driver_version": _driver(lib),
        "persistence_mode": NA if persistence is None else ("Enabled" if persistence else "Disabled"),
        "power.limit": _num(u("nvmlDeviceGetPowerManagementLimit"), 1000.0, "{:.2f}"),
        "ecc.mode.current": _modes(lib, "nvmlDeviceGetEccMode", handle),
        "mig.mode.current": _modes(lib, "nvmlDeviceGetMigMode", handle),
    }
    return {k: values[k] for k in nvidia_smi.CLOCK_FIELDS if k in values}


def state(index: int) -> dict[str, str]:
    """Clock, power and thermal state of CUDA device ``index`` of this process (``clocks_after``):
    NVML in-process, else nvidia-smi; {} when neither answers."""
    lib, handle = _handle(index)
    if handle is not None:
        got = nvml_state(lib, handle)
        if got.get("clocks.sm") not in (None, NA):
            return got
    return nvidia_smi.clocks(index)


def sm_clock_reader(index: int) -> Callable[[], float | None]:
    """A function reading the SM clock (MHz) of CUDA device ``index``: NVML's
    ``nvmlDeviceGetClockInfo`` when it answers, else ``nvidia-smi --query-gpu=clocks.sm`` (one field,
    not the 11 of :func:`state`). The function has ``source`` ("nvml" or "nvidia-smi")."""
    read = nvml.sm_clock_reader(nvidia_smi.smi_id(index))
    if read is not None:
        read.source = "nvml"  # type: ignore[attr-defined]
        return read

    def smi() -> float | None:
        rows = nvidia_smi.query(["clocks.sm"], index=nvidia_smi.smi_id(index))
        try:
            return float(rows[0]["clocks.sm"]) if rows else None
        except (TypeError, ValueError):
            return None

    smi.source = "nvidia-smi"  # type: ignore[attr-defined]
    return smi

"""NVML's total-energy counter, read through ``libnvidia-ml.so.1`` with ctypes (no Python package
needed): millijoules the GPU consumed since the driver loaded (``nvmlDeviceGetTotalEnergyConsumption``,
Volta and later). Best effort: without the library, or on a GPU without the counter, there is no
reader and nothing is reported."""

from __future__ import annotations

import ctypes
from typing import Callable

_LIB: ctypes.CDLL | None = None
_INIT = False


def _lib() -> ctypes.CDLL | None:
    global _LIB, _INIT
    if _INIT:
        return _LIB
    _INIT = True
    try:
        lib = ctypes.CDLL("libnvidia-ml.so.1")
        if lib.nvmlInit_v2() != 0:
            return None
        _LIB = lib
    except (OSError, AttributeError):
        _LIB = None
    return _LIB


def _handle(lib: ctypes.CDLL, smi_id: str) -> ctypes.c_void_p | None:
    handle = ctypes.c_void_p()
    try:
        if smi_id.isdigit():
            rc = lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(int(smi_id)), ctypes.byref(handle))
        else:
            rc = lib.nvmlDeviceGetHandleByUUID(smi_id.encode(), ctypes.byref(handle))
    except AttributeError:
        return None
    return handle if rc == 0 else None


def energy_reader(smi_id: str) -> Callable[[], float | None] | None:
    """A function returning the GPU's energy counter in mJ, for nvidia-smi's GPU ``smi_id`` (an
    index or a UUID); None when NVML or the counter is unavailable."""
    lib = _lib()
    handle = _handle(lib, smi_id) if lib is not None else None
    if handle is None:
        return None

    def read() -> float | None:
        mj = ctypes.c_ulonglong()
        try:
            if lib.nvmlDeviceGetTotalEnergyConsumption(handle, ctypes.byref(mj)) != 0:
                return None
        except AttributeError:
            return None
        return float(mj.value)

    return read if read() is not None else None


def sm_clock_reader(smi_id: str) -> Callable[[], float | None] | None:
    """A function returning the current SM clock in MHz (``nvmlDeviceGetClockInfo``,
    ``NVML_CLOCK_SM``) of nvidia-smi's GPU ``smi_id``; None when NVML is unavailable."""
    lib = _lib()
    handle = _handle(lib, smi_id) if lib is not None else None
    if handle is None:
        return None

    def read() -> float | None:
        mhz = ctypes.c_uint()
        try:
            # 1: NVML_CLOCK_SM
            if lib.nvmlDeviceGetClockInfo(handle, ctypes.c_int(1), ctypes.byref(mhz)) != 0:
                return None
        except AttributeError:
            return None
        return float(mhz.value) or None

    return read if read() is not None else None

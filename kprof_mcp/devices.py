"""The device peak table (``devices.json``) and matching it to the active device.

Peaks live here and only here: the roofline and the classifier read them from a
:class:`DeviceSpec`, never from constants of their own.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

# Tensor-core dtypes whose peak applies when a stage uses the matrix units; every other
# stage is compared with the SIMT FP32 rate.
_TENSOR_PEAK_KEY = {
    "float32": "tfloat32",
    "tfloat32": "tfloat32",
    "bfloat16": "bfloat16",
    "float16": "float16",
    "float8_e4m3fn": "float8",
    "float8_e5m2": "float8",
    "int8": "int8",
    "float64": "float64_tensor",
}


class UnknownDeviceError(LookupError):
    """The active device is not in ``devices.json``: timing works, roofline claims do not."""


# An empty Triton kernel took 0.83 µs (CUPTI) on an H100 SXM
# (docs/evidence/h100-timing-truth/h100_kernel_floor.py, 2026-11-23); devices without their own
# measurement take this, the only one we have.
DEFAULT_MIN_KERNEL_NS = 830.0


@dataclass(frozen=True)
class DeviceSpec:
    """Datasheet figures of one device. Units are in the field names."""

    key: str
    name: str
    arch: str
    sm_count: int
    l2_bytes: int
    memory_bytes: int
    peak_gbps: float
    peak_tflops: dict[str, float] = field(hash=False)
    source: str = ""
    min_kernel_ns: float = DEFAULT_MIN_KERNEL_NS  # the shortest a launch takes (empty kernel, CUPTI)
    # The SM clock the timing modes lock to (kprof_mcp.clocks): one this device holds under a heavy
    # tensor-core load at its power limit, measured. None: unknown, clocks left free.
    sustained_sm_mhz: int | None = None

    def peak_key(self, dtype: str, tensor_cores: bool) -> str:
        """Which row of ``peak_tflops`` bounds a stage computing in ``dtype``."""
        if tensor_cores:
            return _TENSOR_PEAK_KEY.get(dtype, dtype)
        return "float64" if dtype == "float64" else "float32"

    def peak_flops_per_s(self, dtype: str, tensor_cores: bool) -> float | None:
        """Peak FLOP/s for the stage's arithmetic, or None when the datasheet has no such rate."""
        key = self.peak_key(dtype, tensor_cores)
        tflops = self.peak_tflops.get(key)
        if tflops is None and key == "float64_tensor":  # no FP64 tensor cores: the DFMA rate
            tflops = self.peak_tflops.get("float64")
        return None if tflops is None else tflops * 1e12

    @property
    def peak_bytes_per_s(self) -> float:
        return self.peak_gbps * 1e9

    def ridge_flop_per_byte(self, dtype: str, tensor_cores: bool) -> float | None:
        """Ridge point = peak FLOP/s ÷ peak bytes/s, in FLOP/byte (not TFLOP/s ÷ GB/s)."""
        peak = self.peak_flops_per_s(dtype, tensor_cores)
        return None if peak is None else peak / self.peak_bytes_per_s


@lru_cache(maxsize=1)
def load_devices() -> tuple[DeviceSpec, ...]:
    """All devices of the table, in matching order."""
    raw = json.loads(resources.files("kprof_mcp").joinpath("devices.json").read_text())
    return tuple(
        DeviceSpec(
            key=d["key"],
            name=d["name"],
            arch=d["arch"],
            sm_count=int(d["sm_count"]),
            l2_bytes=int(d["l2_bytes"]),
            memory_bytes=int(d["memory_bytes"]),
            peak_gbps=float(d["peak_gbps"]),
            peak_tflops={k: float(v) for k, v in d["peak_tflops"].items()},
            source=d.get("source", ""),
            min_kernel_ns=float(d.get("min_kernel_ns", DEFAULT_MIN_KERNEL_NS)),
            sustained_sm_mhz=int(d["sustained_sm_mhz"]) if d.get("sustained_sm_mhz") else None,
        )
        for d in raw["devices"]
    )


@lru_cache(maxsize=1)
def _patterns() -> list[tuple[DeviceSpec, list[re.Pattern[str]]]]:
    raw = json.loads(resources.files("kprof_mcp").joinpath("devices.json").read_text())
    by_key = {d.key: d for d in load_devices()}
    return [(by_key[d["key"]], [re.compile(p, re.IGNORECASE) for p in d["match"]]) for d in raw["devices"]]


def match_device(device_name: str) -> DeviceSpec:
    """Return the table entry for a device name as torch reports it.

    Raises :class:`UnknownDeviceError` naming the known devices when nothing matches;
    callers keep timing and drop peak-relative figures.
    """
    for spec, patterns in _patterns():
        if any(p.search(device_name) for p in patterns):
            return spec
    known = ", ".join(d.name for d in load_devices())
    raise UnknownDeviceError(
        f"device {device_name!r} is not in kprof_mcp/devices.json (known: {known}); "
        "timings are still measured, but no peak, % of peak or ridge point can be given. "
        "Add an entry with its datasheet peaks to get roofline figures."
    )


def try_match_device(device_name: str | None) -> tuple[DeviceSpec | None, str | None]:
    """(spec, None) when known, (None, reason) otherwise. Never raises."""
    if not device_name:
        return None, "no GPU: CPU timing, no device peaks apply"
    try:
        return match_device(device_name), None
    except UnknownDeviceError as e:
        return None, str(e)

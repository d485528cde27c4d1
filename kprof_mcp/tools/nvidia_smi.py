"""``nvidia-smi`` as an installed program: querying GPUs and resetting locked clocks.
Its output is read by :mod:`kprof_mcp.parsers.nvidia_smi`. Every call is best effort: without
nvidia-smi (no GPU, a container without the driver tools) queries return nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

from ..parsers.nvidia_smi import parse_query

# What kprof records about a GPU: identity, memory, clocks (current and maximum), thermals, MIG.
GPU_FIELDS = [
    "index",
    "name",
    "memory.total",
    "memory.used",
    "driver_version",
    "clocks.sm",
    "clocks.max.sm",
    "clocks.mem",
    "clocks.max.mem",
    "temperature.gpu",
    "power.draw",
    "mig.mode.current",
    "persistence_mode",
]
# Clock, power and thermal state recorded before and after a measurement.
CLOCK_FIELDS = [
    "clocks.sm",
    "clocks.max.sm",
    "clocks.mem",
    "clocks.max.mem",
    "power.draw",
    "temperature.gpu",
    "driver_version",
    "persistence_mode",
    "power.limit",
    "ecc.mode.current",
    "mig.mode.current",
]
_CACHE: tuple[float, list[dict[str, str]]] | None = None


def query(fields: list[str] | None = None, index: int | str | None = None) -> list[dict[str, str]]:
    """``nvidia-smi --query-gpu`` rows (all GPUs, or the one at ``index``); [] when unavailable."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    fields = fields or GPU_FIELDS
    cmd = [exe, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"]
    if index is not None:
        cmd += ["-i", str(index)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout
    except (subprocess.SubprocessError, OSError):
        return []
    return parse_query(out, fields)


def gpus(max_age_s: float = 5.0) -> list[dict[str, str]]:
    """Every visible GPU (cached for a few seconds: validation asks often)."""
    global _CACHE
    if _CACHE and time.monotonic() - _CACHE[0] < max_age_s:
        return _CACHE[1]
    _CACHE = (time.monotonic(), query())
    return _CACHE[1]


def gpu_present() -> bool:
    return bool(gpus())


def smi_id(cuda_index: int) -> str:
    """nvidia-smi's name for the GPU a process sees as CUDA device ``cuda_index``: under
    ``CUDA_VISIBLE_DEVICES=3`` device 0 is nvidia-smi's GPU 3 (an index or a UUID; both work with -i)."""
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    return visible[cuda_index] if 0 <= cuda_index < len(visible) else str(cuda_index)


def clocks(index: int) -> dict[str, str]:
    """Clock, power and thermal state of CUDA device ``index`` of this process, recorded before and
    after a measurement."""
    rows = query(CLOCK_FIELDS, index=smi_id(index))
    return rows[0] if rows else {}


def lock_clocks(gpu: str | None, mhz: int) -> tuple[bool, str]:
    """``nvidia-smi [-i GPU] -lgc MHZ,MHZ``: (whether it took, what nvidia-smi said)."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return False, "no nvidia-smi"
    cmd = [exe, "-lgc", f"{int(mhz)},{int(mhz)}"] + (["-i", gpu] if gpu is not None else [])
    try:
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (subprocess.SubprocessError, OSError) as e:
        return False, f"nvidia-smi -lgc failed: {e}"
    out = [ln for ln in (cp.stdout + cp.stderr).strip().splitlines() if ln.strip()]
    return cp.returncode == 0, (out[0] if out else f"exit {cp.returncode}")[:300]


def reset_clocks(gpu: str | None) -> str:
    """After a profiler that locked clocks was killed: ``nvidia-smi -rgc`` (best effort; says what happened)."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return "no nvidia-smi: clocks not reset"
    cmd = [exe, "-rgc"] + (["-i", gpu] if gpu is not None else [])
    try:
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (subprocess.SubprocessError, OSError) as e:
        return f"clock reset failed: {e}"
    out = (cp.stdout + cp.stderr).strip().splitlines()
    return (
        "clocks reset (nvidia-smi -rgc)"
        if cp.returncode == 0
        else f"clock reset failed (exit {cp.returncode}): {out[-1] if out else ''}"
    )

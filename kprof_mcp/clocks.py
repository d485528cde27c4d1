"""The clock protocol of the modes that time (issue 27): the SM clock locked, before timing, at a
clock the GPU sustains under load, and reset afterwards on every path.

A compute-bound kernel left on the boost clock rides it as power and temperature move it (six event
profiles of matmul v3 on an H100 spread 5.7 %); locked below the clock the GPU falls to at its power
limit, every run gets the same clock setting. (A tensor-core GEMM still runs 3–6 % below it, at a
clock that moves 2–3 % between launches: docs/evidence/h100-thermal. Event mode's timing window,
``ProfileRequest.min_window_ms``, averages that out.) Nsight Compute locks clocks itself (``--clock-control base``);
this module does it for event mode, ``compare_versions``, ``sweep`` and the timeline (``nsys``), for
packages and commands.

* :func:`hold` (a context manager, taken under the GPU's lock): ``nvidia-smi -i GPU -lgc F,F``
  with F the device's ``sustained_sm_mhz`` (``devices.json``), then ``nvidia-smi -rgc`` when the
  block ends, however it ends (return, exception, cancellation, time-out: the runner has already
  killed the child when it raises). A marker file, written before the lock and removed after the
  reset, records it; a process that dies holding it (kill -9) leaves the marker, and the next
  kprof process to start resets that GPU (:func:`recover`). The child reads the marker to record
  the lock in ``params.json``.
* Where locking is refused (not root, MIG, a container) or no sustained clock is known for the
  device, the clocks stay free and the profile says so, once, with the reason.
"""

from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from .locks import cache_dir

# The modes whose own timing kprof does (Nsight Compute locks clocks itself in annotation/ncu).
TIMING_MODES = ("event", "nsys")
LOCK_ENV = "KPROF_SM_LOCK_MHZ"  # overrides devices.json's sustained_sm_mhz (an operator's own measurement)


@dataclass(frozen=True)
class ClockState:
    """What was done about the SM clock for one run."""

    locked_mhz: int | None  # None: the clocks were left free
    note: str  # in words, for the report and params.json


def marker_dir() -> Path:
    return cache_dir() / "clock-locks"


def _marker(gpu: str | None) -> Path:
    name = "".join(c if c.isalnum() or c in "-_" else "_" for c in (gpu or "default"))
    return marker_dir() / f"{name}.json"


def read_marker(gpu: str | None) -> dict | None:
    """The lock kprof holds on ``gpu`` now (nvidia-smi's index or UUID), or None."""
    try:
        d = json.loads(_marker(gpu).read_text())
    except (OSError, ValueError):
        return None
    return d if isinstance(d, dict) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover() -> list[str]:
    """Reset the clocks of every GPU whose lock marker belongs to a process that is gone (it died
    holding the lock: kill -9, a power cut of the host process). Returns what was done."""
    from .tools import nvidia_smi

    notes = []
    d = marker_dir()
    for m in sorted(d.glob("*.json")) if d.is_dir() else []:
        try:
            info = json.loads(m.read_text())
        except (OSError, ValueError):
            info = {}
        pid = int(info.get("pid") or 0)
        if pid and _alive(pid):
            continue
        gpu = info.get("gpu")
        notes.append(
            f"GPU {gpu or 'default'}: a lock left by process {pid or '?'} at {info.get('mhz')} MHz — "
            + nvidia_smi.reset_clocks(gpu)
        )
        try:
            m.unlink()
        except OSError:
            pass
    return notes


@contextmanager
def hold(gpu: str | None, device_name: str | None, wanted: bool) -> Iterator[ClockState]:
    """Lock the SM clock of ``gpu`` (nvidia-smi's index or UUID; None: the only one) for the block
    when ``wanted``; see the module docstring."""
    from .devices import try_match_device
    from .tools import nvidia_smi

    if not wanted:
        yield ClockState(
            None,
            "clock_control='none': the SM clock was left free (boost, power and temperature move "
            "compute-bound times from one profile to the next)",
        )
        return
    spec, _ = try_match_device(device_name or "")
    mhz = getattr(spec, "sustained_sm_mhz", None) if spec else None
    env = os.environ.get(LOCK_ENV, "").strip()
    if env.isdigit() and int(env) > 0:  # the operator's choice over devices.json
        mhz = int(env)
    if not mhz:
        yield ClockState(
            None,
            f"the SM clock was left free: no sustained clock is known for {device_name or 'this GPU'} "
            "(devices.json sustained_sm_mhz); compute-bound times move with boost and power",
        )
        return
    marker = _marker(gpu)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"pid": os.getpid(), "gpu": gpu, "mhz": mhz, "since": time.time()}))
    ok, said = nvidia_smi.lock_clocks(gpu, mhz)
    if not ok:
        try:
            marker.unlink()
        except OSError:
            pass
        yield ClockState(
            None,
            f"locking the SM clock at {mhz} MHz was refused ({said}): the clock was left free "
            "(not root, MIG or a container?); compute-bound times move with boost and power",
        )
        return
    try:
        yield ClockState(
            mhz,
            f"kprof locked the SM clock at {mhz} MHz (nvidia-smi -lgc {mhz},{mhz}: a clock this GPU "
            "sustains at its power limit) for the run, and reset it after (nvidia-smi -rgc)",
        )
    finally:
        nvidia_smi.reset_clocks(gpu)
        try:
            marker.unlink()
        except OSError:
            pass

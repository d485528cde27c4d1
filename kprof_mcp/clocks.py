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
* Kept between jobs (issue 40; ``hold(..., keep=True)``: a process with warm workers, the server):
  the lock taken by the first job stays after it, with its marker, and the next job reuses it
  without calling nvidia-smi — unless another process held the device's lock in between
  (:func:`kprof_mcp.locks.held_before_by_me`), the marker is no longer this process's, or the
  lock wanted differs: then it is taken again. It is reset (``-rgc``, marker removed) after
  ``KPROF_CLOCK_KEEP_S`` seconds without a job (:data:`DEFAULT_KEEP_S`; 0: reset after every job,
  as before), at once when a job fails or a job wants the clocks free or another mode's (Nsight
  Compute's own clock control: :func:`release_kept`), when the engine closes and at exit (atexit:
  SIGTERM and SIGINT run it too); a kill -9 leaves the marker for :func:`recover`, as before.
"""

from __future__ import annotations

import atexit
import json
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from .locks import cache_dir

# The modes whose own timing kprof does (Nsight Compute locks clocks itself in annotation/ncu).
TIMING_MODES = ("event", "nsys")
LOCK_ENV = "KPROF_SM_LOCK_MHZ"  # overrides devices.json's sustained_sm_mhz (an operator's own measurement)
KEEP_ENV = "KPROF_CLOCK_KEEP_S"  # seconds a kept lock outlives its last job (0: reset after every job)
DEFAULT_KEEP_S = 60.0


@dataclass(frozen=True)
class ClockState:
    """What was done about the SM clock for one run."""

    locked_mhz: int | None  # None: the clocks were left free
    note: str  # in words, for the report and params.json
    kept: bool = False  # a lock kept from an earlier job of this process, reused without nvidia-smi


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


def _wanted_mhz(device_name: str | None) -> int | None:
    from .devices import try_match_device

    spec, _ = try_match_device(device_name or "")
    mhz = getattr(spec, "sustained_sm_mhz", None) if spec else None
    env = os.environ.get(LOCK_ENV, "").strip()
    if env.isdigit() and int(env) > 0:  # the operator's choice over devices.json
        mhz = int(env)
    return mhz


def _lock(gpu: str | None, mhz: int) -> tuple[bool, str]:
    """The marker written, then ``nvidia-smi -lgc``; the marker removed again if it was refused."""
    from .tools import nvidia_smi

    marker = _marker(gpu)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"pid": os.getpid(), "gpu": gpu, "mhz": mhz, "since": time.time()}))
    ok, said = nvidia_smi.lock_clocks(gpu, mhz)
    if not ok:
        _unlink_marker(gpu)
    return ok, said


def _unlink_marker(gpu: str | None, only_mine: bool = False) -> None:
    if only_mine and (read_marker(gpu) or {}).get("pid") != os.getpid():
        return
    try:
        _marker(gpu).unlink()
    except OSError:
        pass


def _unlock(gpu: str | None) -> None:
    from .tools import nvidia_smi

    nvidia_smi.reset_clocks(gpu)
    _unlink_marker(gpu)


def _locked_note(mhz: int, kept: bool) -> str:
    if kept:
        return (
            f"kprof locked the SM clock at {mhz} MHz (nvidia-smi -lgc {mhz},{mhz}: a clock this GPU sustains "
            "at its power limit) and kept it locked between jobs (reset after an idle period, nvidia-smi -rgc)"
        )
    return (
        f"kprof locked the SM clock at {mhz} MHz (nvidia-smi -lgc {mhz},{mhz}: a clock this GPU "
        "sustains at its power limit) for the run, and reset it after (nvidia-smi -rgc)"
    )


def keep_s() -> float:
    try:
        return max(0.0, float(os.environ.get(KEEP_ENV, DEFAULT_KEEP_S)))
    except ValueError:
        return DEFAULT_KEEP_S


@dataclass
class _Kept:
    mhz: int
    lock_name: str
    generation: int = 0
    timer: threading.Timer | None = None


_kept: dict[str | None, _Kept] = {}
_kept_mu = threading.RLock()


def _still_mine(gpu: str | None, k: _Kept, mhz: int) -> bool:
    from .locks import held_before_by_me

    m = read_marker(gpu) or {}
    return (
        k.mhz == mhz
        and m.get("pid") == os.getpid()
        and m.get("mhz") == mhz
        and held_before_by_me(k.lock_name)
    )


def release_kept(gpu: str | None = None, all_gpus: bool = False) -> list[str]:
    """Reset now the clock lock kept on ``gpu`` (every GPU with ``all_gpus``); called under the
    device's lock (a job that wants the clocks free or another mode's) or at exit. Returns the GPUs reset."""
    done = []
    with _kept_mu:
        for g in list(_kept) if all_gpus else [gpu]:
            k = _kept.pop(g, None)
            if k is None:
                continue
            if k.timer is not None:
                k.timer.cancel()
            if (read_marker(g) or {}).get("pid") == os.getpid():  # else another process took it over
                _unlock(g)
            done.append(str(g))
    return done


def _idle_reset(gpu: str | None, generation: int) -> None:
    """The kept lock's idle period ended: reset it under the device's lock, unless a job came."""
    from .locks import Cancelled, device_lock

    class _Wait:  # give up after a while: the holder resets or re-locks the clocks itself
        gpu = None
        until = time.monotonic() + 30.0

        @property
        def cancelled(self) -> bool:
            return time.monotonic() > self.until

    with _kept_mu:
        k = _kept.get(gpu)
        if k is None or k.generation != generation:
            return
        name = k.lock_name
    try:
        with device_lock(name, _Wait()):  # type: ignore[arg-type]
            with _kept_mu:
                k = _kept.get(gpu)
                if k is not None and k.generation == generation:
                    release_kept(gpu)
    except Cancelled:
        with _kept_mu:
            if (k := _kept.get(gpu)) is not None and k.generation == generation:
                _kept.pop(gpu, None)  # another process has the GPU: its own protocol resets the clocks


def _schedule_idle_reset(gpu: str | None, k: _Kept) -> None:
    k.generation += 1
    k.timer = threading.Timer(keep_s(), _idle_reset, args=(gpu, k.generation))
    k.timer.daemon = True
    k.timer.start()


atexit.register(release_kept, None, True)


@contextmanager
def hold(
    gpu: str | None, device_name: str | None, wanted: bool, keep: bool = False, lock_name: str | None = None
) -> Iterator[ClockState]:
    """Lock the SM clock of ``gpu`` (nvidia-smi's index or UUID; None: the only one) for the block
    when ``wanted``; see the module docstring. ``keep`` (with the device lock's ``lock_name``):
    keep it locked after the block, for the next job."""
    if not wanted:
        release_kept(gpu)  # the clocks were asked free
        yield ClockState(
            None,
            "clock_control='none': the SM clock was left free (boost, power and temperature move "
            "compute-bound times from one profile to the next)",
        )
        return
    mhz = _wanted_mhz(device_name)
    if not mhz:
        release_kept(gpu)
        yield ClockState(
            None,
            f"the SM clock was left free: no sustained clock is known for {device_name or 'this GPU'} "
            "(devices.json sustained_sm_mhz); compute-bound times move with boost and power",
        )
        return
    keep = keep and lock_name is not None and keep_s() > 0
    with _kept_mu:
        k = _kept.get(gpu)
        if k is not None and k.timer is not None:
            k.timer.cancel()
            k.generation += 1  # an idle reset already waiting for the device lock stands down
        reuse = keep and k is not None and _still_mine(gpu, k, mhz)
        if k is not None and not reuse:
            release_kept(gpu)
    if not reuse:
        ok, said = _lock(gpu, mhz)
        if not ok:
            yield ClockState(
                None,
                f"locking the SM clock at {mhz} MHz was refused ({said}): the clock was left free "
                "(not root, MIG or a container?); compute-bound times move with boost and power",
            )
            return
    if not keep:
        try:
            yield ClockState(mhz, _locked_note(mhz, False))
        finally:
            _unlock(gpu)
        return
    assert lock_name is not None
    with _kept_mu:
        k = _kept.setdefault(gpu, _Kept(mhz, lock_name))
    ok = False
    try:
        yield ClockState(mhz, _locked_note(mhz, True), kept=reuse)
        ok = True
    finally:
        with _kept_mu:
            if ok and _kept.get(gpu) is k:
                _schedule_idle_reset(gpu, k)
            else:  # the job failed, was cancelled or timed out: no lock outlives it
                if _kept.get(gpu) is k:
                    release_kept(gpu)
                else:
                    _unlock(gpu)

"""Whether two profiles can be compared (issue 27): the environment each ran in — GPU, driver,
CUDA, torch and Triton, the SM clock lock, power limit, ECC, MIG, persistence — and what differs.

A baseline on another GPU model is refused (its times say nothing about this one); any other
difference is named beside the comparison, so an agent reading "−3 %" knows whether the driver or
the clock lock changed under it.

Pure: profile results in, a dict or words out.
"""

from __future__ import annotations

from typing import Any

from ..models import ProfileResult

# (label, how to read it from a result); the order is the order differences are named in.
_FIELDS = (
    ("GPU", lambda r: r.device.name),
    ("driver", lambda r: r.device.driver_version),
    ("CUDA", lambda r: r.device.cuda_version),
    ("torch", lambda r: r.device.torch_version),
    ("Triton", lambda r: r.device.triton_version),
    (
        "SM clock lock (MHz)",
        lambda r: (r.device.sm_clock_lock_mhz or "ncu base") if r.device.clocks_locked else "free",
    ),
    ("power limit (W)", lambda r: r.device.clocks_before.get("power.limit")),
    ("ECC", lambda r: r.device.clocks_before.get("ecc.mode.current")),
    ("MIG", lambda r: r.device.clocks_before.get("mig.mode.current")),
    ("persistence", lambda r: r.device.clocks_before.get("persistence_mode")),
    # Profiles from a cluster's workers: the host each ran on (local profiles do not record it).
    ("host", lambda r: (r.profiler.get("cluster") or {}).get("host")),
    ("SM clock while timed (MHz)", lambda r: _sm_clock(r)),
)


def _sm_clock(r: ProfileResult) -> int | None:
    """The median SM clock read during the timing, to 30 MHz (readings move by a step or two)."""
    import statistics

    mhz = [m for s in r.stages for m in s.timing.sm_clock_mhz]
    return int(round(statistics.median(mhz) / 30.0) * 30) if mhz else None


def fingerprint(r: ProfileResult) -> dict[str, Any]:
    """The environment a profile ran in, as ``params.json`` records it (None: not recorded)."""
    out = {}
    for label, get in _FIELDS:
        try:
            out[label] = get(r)
        except (AttributeError, TypeError):
            out[label] = None
    out["temperature (C)"] = r.device.clocks_before.get("temperature.gpu")  # recorded, not compared
    return out


def refusal(baseline: ProfileResult, gpu_names: list[str]) -> str | None:
    """Why ``baseline`` cannot be a baseline on a machine whose GPUs are ``gpu_names`` (nvidia-smi's
    names; empty: no GPU), or None. Only a different GPU model refuses."""
    if baseline.device.kind != "cuda":
        return None
    if not gpu_names:
        return (
            f"the baseline ran on a GPU ({baseline.device.name}) and this machine has none: its times cannot be "
            "compared with CPU timing; profile the baseline again here"
        )
    if baseline.device.name not in gpu_names:
        return (
            f"the baseline ran on {baseline.device.name}, this machine has {sorted(set(gpu_names))}: times on "
            "another GPU model are not comparable; profile the baseline version again on this GPU"
        )
    return None


def differences(baseline: ProfileResult, current: ProfileResult) -> list[str]:
    """What differs between the two environments (the GPU model included: a result loaded from
    elsewhere), as "label previous → current"; [] when nothing recorded differs."""
    a, b = fingerprint(baseline), fingerprint(current)
    out = []
    for label, _ in _FIELDS:
        va, vb = a.get(label), b.get(label)
        if va is None or vb is None or str(va) == str(vb):
            continue
        out.append(f"{label} {va} → {vb}")
    return out

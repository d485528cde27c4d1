"""Profiling modes: one module per mode behind one interface (:class:`.base.Mode`), chosen
from this registry, which raises with the valid names.

==============  ======================  ==============================================
name            module                  engine
==============  ======================  ==============================================
``event``       :mod:`.event`           CUDA events (the wall clock on a CPU)
``annotation``  :mod:`.nsight`          Nsight Compute, small metric set + cheap rules
``ncu``         :mod:`.nsight`          Nsight Compute ``--set full`` + source view
``nsys``        :mod:`.timeline`        torch.profiler (CUPTI via Kineto) timeline
==============  ======================  ==============================================

Importing this package imports no torch or triton: modes import them inside ``capture``.
"""

from __future__ import annotations

from ..safefs import clip
from .base import Launch, Mode, ModeError, PreflightEnv
from .event import EventMode
from .nsight import NsightMode
from .timeline import TimelineMode

MODES: dict[str, Mode] = {
    m.name: m
    for m in (
        EventMode(),
        NsightMode(
            "annotation",
            "default first pass: one Nsight Compute run per profile with a small metric set per "
            "stage (TC%, SM%, DRAM%, occupancy, L2 hit, spills, DRAM bytes vs model) + ncu rule "
            "estimates + roofline, clocks locked to base",
            full_set=False,
        ),
        NsightMode(
            "ncu",
            "deep investigation: ncu --set full (report kept), rule results, every section "
            "(report-verbose.md), SASS with per-instruction samples and stall reasons mapped to source "
            "lines",
            full_set=True,
        ),
        TimelineMode(),
    )
}
DEFAULT_MODE = "annotation"


class ModeNotAvailable(ValueError):
    pass


def get_mode(name: str) -> Mode:
    """The mode called ``name``; otherwise raise saying which modes exist."""
    mode = MODES.get(name) if isinstance(name, str) else None
    if mode is None:
        raise ModeNotAvailable(
            f"unknown mode {clip(name)}; modes: {sorted(MODES)} (built in this version: {[m for m in MODES]})"
        )
    return mode


__all__ = [
    "DEFAULT_MODE",
    "MODES",
    "Launch",
    "Mode",
    "ModeError",
    "ModeNotAvailable",
    "PreflightEnv",
    "get_mode",
]

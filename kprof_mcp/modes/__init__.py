"""Profiling modes: one module per mode behind one interface (:class:`.base.Mode`), chosen
from this registry, which raises with the valid names.

==============  ================  ================  ==========================================
name            module            options           engine
==============  ================  ================  ==========================================
``event``       :mod:`.event`     EventOptions      CUPTI kernel time, CUDA events beside it
                                                    (the wall clock on a CPU)
``annotation``  :mod:`.nsight`    NsightOptions     Nsight Compute, small metric set + cheap rules
``ncu``         :mod:`.nsight`    NsightOptions     Nsight Compute ``--set full`` + source view
``nsys``        :mod:`.timeline`  NsysOptions       Nsight Systems timeline, else torch.profiler
                                                    (CUPTI via Kineto)
==============  ================  ================  ==========================================

Each mode's class says its options model (``kprof_mcp.models.options``, the request's
``options``) and the profilers it records with; the registry checks the model serves the mode.

Importing this package imports no torch or triton: modes import them inside ``capture``.
"""

from __future__ import annotations

from ..safefs import clip
from .base import Launch, Mode, ModeError, PreflightEnv, preflight_env
from .event import EventMode
from .nsight import NsightMode
from .timeline import TimelineMode


def _declared(mode: Mode) -> Mode:
    """``mode``, checked: the model of its options must serve its name (the model's ``mode``
    literal, the request's discriminator), and it names the profilers it records with."""
    options = mode.options_model
    if mode.name not in options.modes() or not mode.profilers:
        raise TypeError(f"{options.__name__} does not serve mode {mode.name!r}: {options.modes()}")
    return mode


MODES: dict[str, Mode] = {
    m.name: m
    for m in (
        _declared(EventMode()),
        _declared(
            NsightMode(
                "annotation",
                "default first pass: one Nsight Compute run per profile with a small metric set per "
                "stage (TC%, SM%, DRAM%, occupancy, L2 hit, spills, DRAM bytes vs model) + ncu rule "
                "estimates + roofline, clocks locked to base",
                full_set=False,
            )
        ),
        _declared(
            NsightMode(
                "ncu",
                "deep investigation: ncu --set full (report kept), rule results, every section "
                "(report-verbose.md), SASS with per-instruction samples and stall reasons mapped to source "
                "lines",
                full_set=True,
            )
        ),
        _declared(TimelineMode()),
    )
}
DEFAULT_MODE = "annotation"


class ModeNotAvailable(ValueError):
    pass


def get_mode(name: str) -> Mode:
    """The mode called ``name``; otherwise raise saying which modes exist."""
    mode = MODES.get(name) if isinstance(name, str) else None
    if mode is None:
        raise ModeNotAvailable(f"unknown mode {clip(name)}; modes: {sorted(MODES)}")
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
    "preflight_env",
]

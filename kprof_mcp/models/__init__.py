"""Request and result models. A frozen request goes in; a result that keeps its raw samples comes
out, and every statistic is derived from those samples. Pydantic alone: this package imports
nothing else from kprof.

=================  ==================================================================
module             what
=================  ==================================================================
:mod:`.request`    ProfileRequest, CompareRequest (with CompareArm), SweepRequest
:mod:`.options`    each mode's options (EventOptions, NsightOptions, NsysOptions): the
                   discriminated union ``ProfileRequest.options``
:mod:`.result`     ProfileResult and its parts (DeviceState, StageResult, Timing, ...),
                   ResultWarning, Diagnosis
:mod:`.batch`      CompareResult (VersionTiming, Comparison, CounterRow), SweepResult
=================  ==================================================================

Units are in field names (``time_ns``, ``bytes``, ``flops``); scaling to µs, TFLOP/s or
GB/s happens in properties named for their unit, and formatting only in ``render``.
"""

from __future__ import annotations

from .batch import CompareResult, Comparison, CounterRow, SweepResult, VersionTiming
from .options import (
    OPTIONS,
    OPTIONS_BY_MODE,
    TIMELINE_ENGINES,
    EventOptions,
    ModeOptions,
    ModeOptionsUnion,
    NsightOptions,
    NsysOptions,
    validation_message,
)
from .request import CompareArm, CompareRequest, ProfileRequest, SweepRequest
from .result import (
    WARNING_KINDS,
    DeviceState,
    Diagnosis,
    KernelTime,
    OpportunityModel,
    ProfileResult,
    Resources,
    ResultWarning,
    StageResult,
    Timing,
)

__all__ = [
    "OPTIONS",
    "OPTIONS_BY_MODE",
    "EventOptions",
    "ModeOptions",
    "ModeOptionsUnion",
    "NsightOptions",
    "NsysOptions",
    "validation_message",
    "TIMELINE_ENGINES",
    "WARNING_KINDS",
    "CompareArm",
    "CompareRequest",
    "CompareResult",
    "Comparison",
    "CounterRow",
    "DeviceState",
    "Diagnosis",
    "KernelTime",
    "OpportunityModel",
    "ProfileRequest",
    "ProfileResult",
    "Resources",
    "ResultWarning",
    "StageResult",
    "SweepRequest",
    "SweepResult",
    "Timing",
    "VersionTiming",
]

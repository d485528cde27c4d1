"""Profiling modes: one registry, one entry per mode, raising with the valid names.

``event`` runs in the worker (``kprof_mcp.worker``); ``annotation`` and ``ncu`` run the same
worker under Nsight Compute and are read back by :mod:`kprof_mcp.modes.nsight`. ``nsys`` is
the timeline mode, recorded with torch.profiler (CUPTI) and analysed by
:mod:`kprof_mcp.timeline`.
"""

from __future__ import annotations

from dataclasses import dataclass


class ModeNotAvailable(ValueError):
    pass


@dataclass(frozen=True)
class Mode:
    name: str
    built: bool
    summary: str
    needs: str


MODES: dict[str, Mode] = {
    "event": Mode("event", True, "CUDA-event timing per stage, L2 flushed, median/IQR, roofline estimate from the "
                                 "FLOP/byte model. Quick A/B; carries Python launch overhead.", "torch (GPU or CPU)"),
    "annotation": Mode("annotation", True, "default first pass: one Nsight Compute run per profile with a small "
                                           "metric set per stage (TC%, SM%, DRAM%, occupancy, L2 hit, spills, "
                                           "DRAM bytes vs model) + ncu rule estimates + roofline, clocks locked "
                                           "to base", "Nsight Compute (ncu) and an NVIDIA GPU"),
    "ncu": Mode("ncu", True, "deep investigation: ncu --set full (report kept), rule results, every section "
                             "(report-verbose.md), SASS with per-instruction samples and stall reasons mapped to "
                             "source lines", "Nsight Compute (ncu) and an NVIDIA GPU"),
    "nsys": Mode("nsys", True, "timeline: kernel and CUDA API summaries, memory operations, ranges per stage, "
                               "stream overlap, launch order, GPU idle gaps, launch overhead, waves; trace JSON, "
                               "CSV tables and a PNG", "torch.profiler (CUPTI via Kineto); CPU activity only without a GPU"),
}


DEFAULT_MODE = "annotation"
NSIGHT_MODES = ("annotation", "ncu")


def get_mode(name: str) -> Mode:
    """The mode called ``name`` if it is built; otherwise raise saying what exists and what runs."""
    built = [m.name for m in MODES.values() if m.built]
    mode = MODES.get(name)
    if mode is None:
        raise ModeNotAvailable(f"unknown mode {name!r}; modes: {sorted(MODES)} (built in this version: {built})")
    if not mode.built:
        raise ModeNotAvailable(
            f"mode {name!r} ({mode.summary}) is not built yet in this version of kprof-mcp; no output is faked. "
            f"Built modes: {built}. Use mode='event' for timing and a roofline estimate.")
    return mode

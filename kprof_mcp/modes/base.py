"""The one interface every profiling mode implements.

A mode owns all of its phases, in the order a profile runs them:

=================  =========  ===========================================================
phase              where      what
=================  =========  ===========================================================
``preflight``      parent     refuse early, saying how to fix it (no GPU, no profiler, MIG);
                              return options the mode needs (a profiler's path), which
                              ``ProfileRequest.with_options`` adds to the request
``launch``         parent     the command prefix that wraps the child (``ncu ...``), if any
``capture``        child      measure, after the harness loaded the package, built inputs and
                              checked correctness; write ``result.json`` (or the raw capture)
``after_run``      parent     once the child exited: read the profiler's output into result
                              models (in another child when a native parser could crash)
``read_output``    child      that reading step, for modes that need one
``report``         parent     the sections it adds to ``report.md``
=================  =========  ===========================================================

A user's command (``profile_command``) goes through the same phases with ``command_launch``
and ``capture_command`` in place of ``launch`` and ``capture``; ``read_output`` sees
``req.command`` set.

The engine calls these and nothing else: no code outside ``modes/`` asks which mode it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only: modes are imported by the server, which must not import torch
    from ..analysis.assessment import Assessment
    from ..capture.context import Capture
    from ..models import ModeOptions, ProfileRequest, ProfileResult
    from ..render.report import ModeReport
    from ..runner import ProgressFn, Record, RunControl


class ModeError(Exception):
    """A mode cannot run here or failed in a way the caller can act on (message says how)."""

    def __init__(self, message: str, kind: str = "mode"):
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class PreflightEnv:
    """What the parent knows before anything runs."""

    cpu: bool  # no GPU will be used (none visible, or forced)
    force_cpu: bool  # forced by KPROF_FORCE_CPU / --cpu
    gpus: list[dict[str, str]]  # nvidia-smi rows
    clock_control: str
    timeline_engine: str = "auto"  # nsys mode: auto, nsys or kineto


def preflight_env(
    req: ProfileRequest, cpu: bool, force_cpu: bool, gpus: list[dict[str, str]]
) -> PreflightEnv:
    """What ``req``'s preflight is told: the machine, its clock control, and the timeline
    recorder it asked for (only nsys mode's options have one)."""
    return PreflightEnv(
        cpu=cpu,
        force_cpu=force_cpu,
        gpus=gpus,
        clock_control=req.clock_control,
        timeline_engine=getattr(req.options, "timeline_engine", "auto"),
    )


@dataclass
class Launch:
    """How the parent starts the capture child: a profiler's argument vector in front of it,
    whether that profiler locks clocks (reset if the run is killed), and the profiler's facts
    (version, command, metric names) recorded in ``profiler.json``."""

    prefix: list[str] | None = None
    locks_clocks: bool = False
    profiler: dict[str, Any] = field(default_factory=dict)
    scratch: Path | None = None  # where the profiler writes before the profile directory exists


class Mode:
    """Base class with the defaults of a mode that measures inside the child and needs nothing
    else (see the module docstring for the phases)."""

    name: str = ""
    summary: str = ""
    needs: str = ""
    # The model of this mode's options (``ProfileRequest.options``: kprof_mcp.models.options) and
    # the profilers it records with (``device_info``'s profilers say which modes use each):
    # "cupti" (torch.profiler), "ncu", "nsys". Each mode's class says both; the registry checks
    # that the model serves the mode's name.
    options_model: type[ModeOptions]
    profilers: tuple[str, ...] = ()
    needs_gpu = False  # refused without a GPU (preflight)
    prepare_first = False  # compile and autotune in a plain child before the first profiled run
    # A command's step timed in a plain child before the profiled run on a GPU (engine/plain.py): the
    # timeline's what-ifs taken against the unprofiled step (nsys, whichever recorder: Nsight Systems or
    # torch.profiler both slow the host).
    plain_pass = False
    query_smi_in_child = True  # False when a profiler wraps the child: one more process for it to trace
    # compare_versions in this mode: "timing" (the interleaved timing alone), "counters" (the
    # timing, then every arm profiled in this mode, counters side by side) or "none" (refused).
    compare_role = "none"
    timing_note: str | None = None  # above report.md's timing table
    samples_note: str = ""  # after it
    # Where this mode's profiler cannot read the GPU's performance counters (ERR_NVGPUCTRPERM),
    # the mode the engine profiles in instead (kprof_mcp.engine.run); None: the error stands.
    counters_fallback: str | None = None

    # ------------------------------------------------------------------ parent
    def preflight(self, env: PreflightEnv) -> dict[str, Any]:
        """Raise :class:`ModeError` when this mode cannot run here; return request fields it needs."""
        return {}

    def launch(self, req: ProfileRequest, stages: list[str], scratch: Path) -> Launch:
        return Launch()

    def after_run(
        self,
        req: ProfileRequest,
        record: Record,
        launch: Launch,
        work_dir: Path,
        on_progress: ProgressFn | None,
        control: RunControl | None,
        timeout_s: float,
    ) -> None:
        """Complete ``work_dir`` after the capture child exited (default: it is complete)."""

    def counters_denied(self, log: str) -> bool:
        """Whether the profiler's log says the GPU's performance counters could not be read."""
        return False

    def report(
        self, result: ProfileResult, assessment: Assessment, others: list[ProfileResult]
    ) -> ModeReport:
        from ..render.report import ModeReport

        return ModeReport(timing_note=self.timing_note, samples_note=self.samples_note)

    # ------------------------------------------------------------------ child
    def capture(self, cap: Capture) -> None:
        """Measure; write ``result.json`` (or what ``read_output`` needs) into ``cap.work_dir``."""
        raise NotImplementedError

    def cache_control(self, result: ProfileResult) -> str:
        """params.json's ``cache_control``: what was done to caches between measured runs."""
        return "none"

    def read_output(
        self, req: ProfileRequest, work_dir: Path, log: str, profiler: dict[str, Any]
    ) -> ProfileResult:
        raise ModeError(f"mode {self.name!r} has no output to read")

    # ------------------------------------------------------------------ a user's command (profile_command)
    def command_launch(self, req: ProfileRequest, scratch: Path) -> Launch:
        """The prefix that wraps a command's child (``python -m kprof_mcp.child command``)."""
        return Launch()

    def capture_command(self, cc: Any) -> None:
        """Child: run the command (``cc.run()``, a :class:`kprof_mcp.capture.recording.CommandCapture`)
        inside this mode's recording; write ``result.json`` (or what ``read_output`` needs)."""
        raise ModeError(f"mode {self.name!r} cannot profile a command")

    def describe(self) -> dict[str, Any]:
        return {"built": True, "summary": self.summary, "needs": self.needs}

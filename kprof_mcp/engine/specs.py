"""Checked requests (specs) and what running them produced (outcomes).

Every spec has ``run(engine, on_progress, control)``, the one protocol :meth:`Engine.execute`
calls to run it here (:class:`kprof_mcp.noise.NoiseSpec` has it too): each runs itself through
the engine's matching method, so nothing switches on a spec's type. The engine is typed here by
:class:`Runs`, the three methods the specs call, so that this module never imports the facade.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .. import child_io, clocks
from ..analysis.assessment import Assessment
from ..models import CompareRequest, CompareResult, ProfileRequest, ProfileResult, SweepRequest, SweepResult
from .config import KprofError

if TYPE_CHECKING:
    from .. import runner


class Runs(Protocol):
    """What a spec's ``run`` calls of the engine (:class:`~kprof_mcp.engine.facade.Engine` is one)."""

    def run_checked(
        self, spec: ProfileSpec, on_progress: runner.ProgressFn | None, control: runner.RunControl | None
    ) -> ProfileOutcome: ...

    def run_compare(
        self, spec: CompareSpec, on_progress: runner.ProgressFn | None, control: runner.RunControl | None
    ) -> CompareOutcome: ...

    def run_sweep(
        self, spec: SweepSpec, on_progress: runner.ProgressFn | None, control: runner.RunControl | None
    ) -> SweepOutcome: ...


@dataclass
class ProfileSpec:
    """A validated profile request (see :meth:`Engine.check_profile`)."""

    req: ProfileRequest
    base: ProfileResult | None
    source: Path
    cpu: bool
    stages: list[str]
    timeout: float
    baseline: str | None = None
    allow_mismatch: bool = False  # a baseline of other parameters, device or mode compared, not refused

    def run(
        self, engine: Runs, on_progress: runner.ProgressFn | None, control: runner.RunControl | None
    ) -> ProfileOutcome:
        """Run this profile (:meth:`Engine.run_checked`)."""
        return engine.run_checked(self, on_progress, control)


@dataclass
class ProfileOutcome:
    result: ProfileResult
    assessment: Assessment | None  # None (and contract "") where rendering is left to a cluster's server
    contract: str
    profile_dir: Path

    def dirs(self) -> list[Path]:
        """The directories this outcome wrote, its own first."""
        return [self.profile_dir]


@dataclass
class CompareSpec:
    """A validated comparison (see :meth:`Engine.check_compare`)."""

    req: CompareRequest
    cpu: bool
    timeout: float
    # Nsight modes: each arm's validated profile, run after the timing (counters side by side).
    arm_specs: list[ProfileSpec] = field(default_factory=list)
    clock_control: str = "base"  # the timing's SM clock: locked (kprof_mcp.clocks) or "none" (free)

    def run(
        self, engine: Runs, on_progress: runner.ProgressFn | None, control: runner.RunControl | None
    ) -> CompareOutcome:
        """Run this comparison (:meth:`Engine.run_compare`)."""
        return engine.run_compare(self, on_progress, control)


@dataclass
class CompareOutcome:
    result: CompareResult
    markdown: str
    compare_dir: Path

    def dirs(self) -> list[Path]:
        """The comparison's directory, then its arms' profiles (Nsight modes) in ``profiles``' order."""
        return [self.compare_dir, *(Path(p) for p in self.result.profiles.values())]


@dataclass
class SweepSpec:
    """A validated sweep (see :meth:`Engine.check_sweep`)."""

    req: SweepRequest
    cpu: bool
    timeout: float
    clock_control: str = "base"  # the timing's SM clock: locked (kprof_mcp.clocks) or "none" (free)

    def run(
        self, engine: Runs, on_progress: runner.ProgressFn | None, control: runner.RunControl | None
    ) -> SweepOutcome:
        """Run this sweep (:meth:`Engine.run_sweep`)."""
        return engine.run_sweep(self, on_progress, control)


@dataclass
class SweepOutcome:
    result: SweepResult
    rows: list[dict[str, Any]]
    markdown: str
    png: bytes | None
    sweep_dir: Path

    def dirs(self) -> list[Path]:
        """The sweep's directory."""
        return [self.sweep_dir]


def checked_dirs(record: runner.Record, out_root: str, started: float) -> tuple[Path, Path]:
    """The run directories the child's record names, refused unless this run created them under its
    output root (:func:`kprof_mcp.child_io.run_dirs`)."""
    try:
        return child_io.run_dirs(record.work_dir, record.profile_dir, out_root, started)
    except child_io.ForgedRecord as e:
        raise KprofError(
            f"the profiling process's record names a run directory this run did not create ({e}): refused, "
            "nothing was written there"
        ) from None


def with_clock(spec: ProfileSpec, clock: clocks.ClockState | None) -> ProfileSpec:
    """``spec`` with the SM clock the engine holds locked for its run in the request (the child
    records it; it does not look for the lock's marker)."""
    if clock is None or clock.locked_mhz is None:
        return spec
    return dataclasses.replace(
        spec, req=spec.req.model_copy(update={"sm_clock_locked_mhz": clock.locked_mhz})
    )

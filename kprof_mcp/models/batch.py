"""What a comparison (``compare.json``) and a sweep (``sweep.json``) produced."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, computed_field

from .result import DeviceState, ProfileResult, ResultWarning, Timing


class VersionTiming(BaseModel):
    """One version's samples in a comparison, per round (ns)."""

    version: str  # the arm's label: the version name, with its parameters when parameter sets differ
    method: str
    rounds_ns: list[list[float]]
    sm_clock_mhz: list[float] = Field(default_factory=list)
    energy_mj_per_run: list[float] = Field(
        default_factory=list
    )  # per energy window (NVML), versions alternating
    power_w: list[float] = Field(default_factory=list)
    kernel_version: str | None = None  # the version the label names (set for parameter-set comparisons)
    params: dict[str, Any] | None = None  # this arm's parameters (set for parameter-set comparisons)

    @property
    def samples_ns(self) -> list[float]:
        return [v for r in self.rounds_ns for v in r]

    @property
    def timing(self) -> Timing:
        """All rounds pooled, with the statistics every other timing uses."""
        return Timing(
            samples_ns=self.samples_ns,
            method=self.method,
            l2_flushed=self.method.startswith("cupti"),
            stop_reason=f"{len(self.rounds_ns)} rounds",
            sm_clock_mhz=self.sm_clock_mhz,
        )

    @computed_field
    @property
    def runs(self) -> int:
        return len(self.samples_ns)

    @computed_field
    @property
    def median_ns(self) -> float:
        return self.timing.median_ns

    @computed_field
    @property
    def rel_iqr(self) -> float:
        return self.timing.rel_iqr


class Comparison(BaseModel):
    """``version`` against ``baseline``: speed-up = baseline median ÷ version median (> 1: faster)."""

    version: str
    baseline: str
    speedup: float
    ci_low: float
    ci_high: float
    confidence: float = 0.95
    verdict: str = Field(
        description="'faster', 'slower', 'no significant difference', or 'refused' (either side failed its "
        "integrity checks after timing: no verdict)"
    )
    sentence: str


class CounterRow(BaseModel):
    """One measurement of one stage, for every arm of a comparison profiled under Nsight Compute,
    with each arm's change against the first (the baseline)."""

    stage: str
    metric: str  # the StageResult field or derived key ('bottleneck', 'top_opportunity', ...)
    label: str  # what the renderer prints: name and unit
    values: list[float | str | None]  # per arm, in arm order; None: not measured for that arm
    changes: list[str | None]  # per arm; None for the baseline and where either side is missing


class CompareResult(BaseModel):
    """compare.json: every version's raw samples, the comparisons and the warnings."""

    kernel: str
    params: dict[str, Any]
    param_order: list[str]
    device: DeviceState
    versions: list[VersionTiming]
    comparisons: list[Comparison]
    rounds: int
    runs_per_round: int
    order: str  # how versions were interleaved
    cache_control: str
    correctness: dict[str, Any] = Field(default_factory=dict)
    warnings: list[ResultWarning] = Field(default_factory=list)
    created_at: str
    compare_dir: str | None = None
    request: dict[str, Any] = Field(default_factory=dict)
    # Nsight modes: every arm profiled under Nsight Compute after the timing, counters side by side.
    counter_mode: str | None = None
    counters: list[CounterRow] = Field(default_factory=list)
    profiles: dict[str, str] = Field(
        default_factory=dict, description="each arm's profile_dir (Nsight modes)"
    )


class SweepResult(BaseModel):
    """sweep.json: one event-mode-like result per (value, version), in sweep order."""

    kernel: str
    param: str
    values: list[Any]
    versions: list[str]
    points: list[ProfileResult]
    skipped: list[dict[str, Any]] = Field(
        default_factory=list, description="points that could not run, and why"
    )
    device: DeviceState
    warnings: list[ResultWarning] = Field(default_factory=list)
    created_at: str
    sweep_dir: str | None = None
    request: dict[str, Any] = Field(default_factory=dict)

"""The structured part of a profile's tool answer (MCP structured output): the same
assessment as the contract, as fields with units in their names."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..analysis.peaks import AtClock
from ..models import ProfileResult, ResultWarning
from ..models.causes import described
from .contract import opportunity_name
from .diagnosis import Assessment, assess


class StageSummary(BaseModel):
    name: str
    duration_us: float = Field(
        description="median of the timed runs (event mode on a GPU: the kernels' own time "
        "from CUPTI; Nsight modes: ncu gpu__time_duration)"
    )
    iqr_us: float
    runs: int
    timing_method: str = Field(
        default="",
        description="how duration_us was measured: cupti_kernel_sum, "
        "cuda_events, cpu_wall_clock, ncu ..., gpu span ...",
    )
    launch_inclusive_us: float | None = Field(
        default=None,
        description="event mode: median CUDA-event time around each launch (launch latency included)",
    )
    sm_clock_mhz: list[float] = Field(
        default_factory=list, description="SM clock read after each timed batch"
    )
    energy_mj_per_run: float | None = Field(
        default=None,
        description="event mode on a GPU: median energy per run (mJ, NVML; runs back to back, no L2 flush)",
    )
    power_w: float | None = Field(
        default=None, description="event mode on a GPU: median mean power (W) meanwhile"
    )
    achieved_tflops: float
    achieved_gbps: float = Field(description="model bytes / median time")
    pct_peak_flops: float | None = Field(
        default=None,
        description="model FLOP/s, % of the FLOP peak at the SM clock the stage ran (sm_clock_mhz_ran); null "
        "above 100 % (no such figure is a result: the stage is 'suspect', its key issue says why)",
    )
    pct_peak_bandwidth: float | None = Field(
        default=None,
        description="model bytes/s, % of peak DRAM bandwidth (not clock-scaled); null above 100 %",
    )
    pct_of_roofline: float | None = Field(
        default=None,
        description="model FLOP/s over min(FLOP peak at the clock it ran, intensity x peak bandwidth), %; "
        "null above 100 %",
    )
    sm_clock_mhz_ran: float | None = Field(
        default=None,
        description="the SM clock the % figures are at, where it is under the one the datasheet peak "
        "assumes (Nsight Compute's measured clock, else the median clock read per timed batch); null: at "
        "the datasheet peak, and then no *_nominal figure",
    )
    pct_peak_flops_nominal: float | None = Field(
        default=None, description="pct_peak_flops against the datasheet (boost-clock) peak, beside it"
    )
    pct_of_roofline_nominal: float | None = Field(
        default=None, description="pct_of_roofline against the datasheet (boost-clock) peak, beside it"
    )
    kernel_recorded: bool | None = Field(
        default=None,
        description="false: CUPTI recorded no kernel in the timed runs and CUDA events stand in (the stage "
        "is 'suspect'); true: the kernels' own time; null: no kernel recorder was asked",
    )
    bottleneck: str | None = None
    tc_pct: float | None = None
    dram_pct: float | None = None
    occupancy_pct: float | None = None
    sm_pct: float | None = Field(default=None, description="SM throughput % (Nsight modes)")
    l2_hit_pct: float | None = None
    dram_bytes_over_model: float | None = Field(
        default=None, description="measured DRAM bytes / model bytes; > 1.25 means over-fetch (Nsight modes)"
    )
    missing_metrics: list[str] = Field(default_factory=list, description="asked for but absent: shown as n/a")


class OpportunitySummary(BaseModel):
    name: str
    est_gain_pct: float = Field(description="estimated % speed-up of the whole profile")
    trigger: str = Field(description="metric=value that triggered it")
    stage: str | None = Field(
        default=None, description="the stage it concerns; null for a whole-plan finding"
    )
    source: str = Field(
        description="'kprof' (our model), 'ncu' (Nsight Compute's rule estimate) or 'timeline'"
    )
    cause: str = Field(default="", description="the cause key, one of: " + described())


class ProfileSummary(BaseModel):
    status: str = Field(
        default="done",
        description="'done' (the contract is here), 'queued' or 'running' (call get_profile(job_id) later)",
    )
    job_id: str | None = Field(default=None, description="the job's id, for get_profile / cancel_profile")
    queue_position: int | None = Field(
        default=None, description="place in the GPU queue while queued (1 = next)"
    )
    progress: float | None = Field(default=None, description="0..1 while queued or running")
    message: str | None = None
    gpu: str | None = Field(default=None, description="index of the GPU the job runs or ran on")
    profile_dir: str | None = Field(
        default=None, description="directory of this run's artifacts; pass it as baseline or to read_params"
    )
    kernel: str | None = None
    version: str | None = None
    mode: str | None = None
    device: str | None = None
    device_kind: str | None = Field(default=None, description="'cuda' or 'cpu' (CPU timing: no GPU claims)")
    params: dict[str, Any] | None = None
    total_duration_us: float | None = None
    stages: list[StageSummary] = Field(default_factory=list)
    bottleneck: str | None = None
    opportunities: list[OpportunitySummary] = Field(default_factory=list, description="the contract's top 3")
    warnings: list[ResultWarning] = Field(default_factory=list)
    baseline: str | None = None


def _med(vals: list[float]) -> float | None:
    import statistics

    return float(statistics.median(vals)) if vals else None


def _at_clock(c: AtClock | None) -> dict[str, float | None]:
    """The stage's % of the peaks at the clock it ran (analysis/peaks.py), none above 100 %."""
    if c is None:
        return {}

    def pct(v: float | None) -> float | None:
        return None if v is None or v > 100.0 else v

    return dict(
        pct_peak_flops=pct(c.pct_peak_flops),
        pct_peak_bandwidth=pct(c.pct_peak_bandwidth),
        pct_of_roofline=pct(c.pct_of_roofline),
        sm_clock_mhz_ran=c.clock_mhz,
        pct_peak_flops_nominal=pct(c.pct_peak_flops_nominal),
        pct_of_roofline_nominal=pct(c.pct_of_roofline_nominal),
    )


def profile_summary(
    result: ProfileResult, assessment: Assessment | None = None, **fields: Any
) -> ProfileSummary:
    """The summary of a finished profile; ``fields`` are the job's own (job_id, gpu, profile_dir, ...)."""
    a = assessment or assess(result)
    return ProfileSummary(
        status="done",
        progress=1.0,
        kernel=result.kernel,
        version=result.version,
        mode=result.mode,
        device=result.device.name,
        device_kind=result.device.kind,
        params=result.params,
        total_duration_us=a.total_time_ns / 1e3,
        stages=[
            StageSummary(
                name=s.name,
                duration_us=s.timing.median_ns / 1e3,
                iqr_us=s.timing.iqr_ns / 1e3,
                runs=s.timing.runs,
                timing_method=s.timing.method,
                sm_clock_mhz=list(s.timing.sm_clock_mhz),
                energy_mj_per_run=_med(s.timing.energy_mj_per_run),
                power_w=_med(s.timing.power_w),
                launch_inclusive_us=s.launch_timing.median_ns / 1e3 if s.launch_timing is not None else None,
                achieved_tflops=s.achieved_flops_per_s / 1e12,
                achieved_gbps=s.achieved_bytes_per_s / 1e9,
                **_at_clock(sa.at_clock),
                kernel_recorded=s.timing.kernel_recorded,
                bottleneck=sa.diagnosis.bottleneck if sa.diagnosis else None,
                tc_pct=s.tc_pct,
                dram_pct=s.dram_pct,
                occupancy_pct=s.occupancy_pct,
                sm_pct=s.sm_pct,
                l2_hit_pct=s.l2_hit_pct,
                dram_bytes_over_model=s.over_fetch_ratio,
                missing_metrics=s.missing_metrics,
            )
            for sa in a.stages
            for s in [sa.stage]
        ],
        bottleneck=a.bottleneck,
        opportunities=[
            OpportunitySummary(
                name=opportunity_name(o, a),
                est_gain_pct=round(o.est_gain_pct, 1),
                trigger=o.trigger,
                stage=o.stage,
                source=o.source,
                cause=o.cause,
            )
            for o in a.opportunities[:3]
        ],
        warnings=list(a.warnings),
        **fields,
    )

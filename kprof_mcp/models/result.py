"""What a profile produced: the device, each stage's raw samples and the statistics derived from
them, the warnings, the result itself and the structured diagnosis.

Units are in field names (``time_ns``, ``bytes``, ``flops``); scaling to µs, TFLOP/s or
GB/s happens in properties named for their unit, and formatting only in ``render``.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from pydantic import BaseModel, Field, computed_field, field_validator

from .causes import described


class DeviceState(BaseModel):
    kind: str  # "cuda" or "cpu"
    name: str
    index: int | None = None
    sm_count: int | None = None
    l2_bytes: int | None = None
    memory_bytes: int | None = None
    compute_capability: str | None = None
    spec_key: str | None = None  # row of devices.json
    spec_name: str | None = None
    spec_note: str | None = None  # why no spec matched
    peak_gbps: float | None = None
    clocks_locked: bool | None = None  # None: unknown
    clock_control: str = "none"
    sm_clock_lock_mhz: int | None = (
        None  # the SM clock kprof locked for the run (kprof_mcp.clocks); None: not
    )
    clocks_before: dict[str, Any] = Field(default_factory=dict)
    clocks_after: dict[str, Any] = Field(default_factory=dict)
    driver_version: str | None = None
    cuda_version: str | None = None
    torch_version: str | None = None
    triton_version: str | None = None
    python_version: str | None = None
    triton_interpret: bool = False


class Resources(BaseModel):
    """Compile-time resources of a stage's kernel (Triton ``CompiledKernel``)."""

    kernel_name: str | None = None
    registers_per_thread: int | None = None
    spilled_registers: int | None = None  # Triton's n_spills
    shared_memory_bytes: int | None = None
    num_warps: int | None = None
    num_stages: int | None = None
    # Instructions of the kernel's SASS listing by class (tensor_core, fp_arith, global_mem, ...):
    # static counts, not executed ones (parsers/sass.py); None where no cubin was compiled.
    sass_mix: dict[str, int] | None = None
    # The same count over the instructions inside the listing's loops (backward branches): the code that
    # runs once per trip. None where no cubin was compiled, or before it was recorded; {} without a loop.
    sass_loop_mix: dict[str, int] | None = None
    # What the kernel's TTIR says its work is, by source line (parsers/ttir.py): dots and their input
    # precision, libdevice calls, fast math, fp64 arithmetic, integer division, 64-bit index math,
    # atomics; static, as {"kind", "detail", "line", "count"}. None where no TTIR was compiled.
    ir_ops: list[dict[str, Any]] | None = None

    @property
    def local_spill_bytes(self) -> int | None:
        return None if self.spilled_registers is None else 4 * self.spilled_registers


class OpportunityModel(BaseModel):
    name: str
    est_gain_pct: float = Field(
        description="estimated % speed-up if this cause were removed: 1/(1 − share) − 1"
    )
    trigger: str = Field(description="metric=value that triggered it")
    share_pct: float = Field(default=0.0, description="share of the time this change would remove, %")
    cause: str = Field(default="", description="what the opportunity is about, one of: " + described())


class Timing(BaseModel):
    """Raw samples of one timed region; statistics are derived."""

    samples_ns: list[float]
    method: str  # "cupti_kernel_sum", "cuda_events", "cpu_wall_clock", or a mode's own description
    l2_flushed: bool
    stop_reason: str  # "converged", "budget", "max_runs"
    kernel_recorded: bool | None = Field(
        default=None,
        description="True: CUPTI recorded the kernels of every timed run (the samples are their time); "
        "False: CUPTI was asked and recorded none in some run, or could not run, and CUDA events around "
        "the launches stand in (the time is not a kernel's: the stage is 'suspect'); null: no kernel "
        "recorder was asked (the CPU, a CUDA-event or Nsight timing), or a result recorded before this field",
    )
    sm_clock_mhz: list[float] = Field(
        default_factory=list, description="SM clock read after each timed batch (nvidia-smi), when recorded"
    )
    energy_mj_per_run: list[float] = Field(
        default_factory=list,
        description="energy per run (mJ, NVML's energy "
        "counter) of each energy window: runs back to back, no L2 flush",
    )
    power_w: list[float] = Field(
        default_factory=list, description="mean GPU power (W) over each energy window"
    )

    @computed_field
    @property
    def runs(self) -> int:
        return len(self.samples_ns)

    @computed_field
    @property
    def median_ns(self) -> float:
        return statistics.median(self.samples_ns)

    @computed_field
    @property
    def iqr_ns(self) -> float:
        if len(self.samples_ns) < 4:
            return max(self.samples_ns) - min(self.samples_ns)
        q = statistics.quantiles(self.samples_ns, n=4, method="inclusive")
        return q[2] - q[0]

    @computed_field
    @property
    def min_ns(self) -> float:
        return min(self.samples_ns)

    @computed_field
    @property
    def rel_iqr(self) -> float:
        return self.iqr_ns / self.median_ns if self.median_ns > 0 else float("inf")

    def median_ci_ns(self) -> tuple[float, float]:
        """The median's 95 % confidence interval from order statistics (no assumption on the
        distribution; independent runs assumed): ranks n/2 ± 0.98·√n."""
        xs = sorted(self.samples_ns)
        n = len(xs)
        half = 0.98 * math.sqrt(n)
        lo, hi = max(0, math.floor(n / 2 - half) - 1), min(n - 1, math.ceil(n / 2 + half))
        return xs[lo], xs[hi]

    def rel_ci_half(self) -> float:
        """Half the width of the median's 95 % CI as a fraction of the median."""
        lo, hi = self.median_ci_ns()
        return (hi - lo) / 2 / self.median_ns if self.median_ns > 0 else float("inf")


class KernelTime(BaseModel):
    """One kernel of a stage, timed by CUPTI over the timed runs."""

    name: str
    launches_per_run: float
    median_ns: float  # per launch
    total_median_ns: float  # per run: all its launches


class StageResult(BaseModel):
    name: str
    timing: Timing
    flops: float
    bytes_model: float
    int_ops: float | None = None  # the integer and logic operations the model says the work needs
    tensor_cores: bool
    dtype: str
    peak_flops_per_s: float | None = None
    peak_bytes_per_s: float | None = None
    min_kernel_ns: float | None = None  # the device's shortest launch (devices.json): a floor under any gain
    grid_blocks: int | None = None
    sm_count: int | None = None
    persistent: bool = False  # programs loop over the work: waves < 1 by design, no "fill the GPU" advice
    tiling: dict[str, Any] | None = None
    resources: Resources | None = None
    # Counter metrics (annotation/ncu modes); event mode leaves them None (rendered "n/a").
    tc_pct: float | None = None
    dram_pct: float | None = None
    occupancy_pct: float | None = None
    l2_hit_pct: float | None = None
    # Further Nsight Compute measurements (None: not measured in this mode, or missing in the report).
    sm_pct: float | None = None  # SM throughput, % of peak (the compute figure for non-tensor-core work)
    theoretical_occupancy_pct: float | None = None
    measured_local_bytes: float | None = None  # local-memory load+store bytes (spills) counted by ncu
    l1_bytes: float | None = None  # all L1TEX traffic bytes (ncu): spills' share of it is their cost
    measured_waves_per_sm: float | None = None  # ncu's launch__waves_per_multiprocessor (occupancy-aware)
    registers_per_thread: float | None = None
    shared_mem_per_block_bytes: float | None = None
    dram_bytes: float | None = None  # measured DRAM read+write bytes
    dram_read_bytes: float | None = None  # of which read (a plan's stages re-reading its data)
    sm_clock_hz: float | None = None  # SM clock during the profiled launch
    ncu_kernels: list[str] = Field(
        default_factory=list, description="kernel names ncu profiled for this stage"
    )
    # Event mode on a GPU: ``timing`` is the kernels' own time (CUPTI); this is the same stage timed
    # with CUDA events around each launch, which adds launch latency and event overhead.
    launch_timing: Timing | None = None
    kernel_times: list[KernelTime] = Field(
        default_factory=list, description="each kernel of the stage per run (CUPTI), in launch order"
    )
    ncu_rules: list[dict[str, Any]] = Field(default_factory=list, description="Nsight Compute rule results")
    missing_metrics: list[str] = Field(default_factory=list, description="metrics asked for but absent (n/a)")
    accounting: dict[str, float] = Field(
        default_factory=dict,
        description="where the time went, as Nsight Compute counted it (annotation/ncu): "
        "stall_<reason> (cycles stalled per issued instruction), pipe_<x>_pct, instruction counts, global "
        "atomics/reductions, load/store sectors and requests, shared-memory bank conflicts, threads per "
        "instruction; kprof_mcp.parsers.ncu.ACCOUNTING names the counters",
    )

    @property
    def counters_measured(self) -> bool:
        return self.tc_pct is not None or self.dram_pct is not None or self.sm_pct is not None

    @computed_field
    @property
    def over_fetch_ratio(self) -> float | None:
        """Measured DRAM bytes ÷ the model's minimum bytes: >1 means extra traffic (uncoalesced or
        strided access, re-reads that miss L2); <1 means part of the data stayed in L2."""
        if self.dram_bytes is None or not self.bytes_model:
            return None
        return self.dram_bytes / self.bytes_model

    @property
    def has_model(self) -> bool:
        """Whether the stage has a FLOP/byte model (a command's stage may not: no roofline then)."""
        return bool(self.flops or self.bytes_model)

    @computed_field
    @property
    def sol_ns(self) -> float | None:
        """Speed-of-light time at the device's datasheet peaks: max(FLOPs / peak FLOP/s, model
        bytes / peak bytes/s). The assessment rescales the FLOP term to the SM clock the stage
        actually ran at (Nsight Compute locks it to base)."""
        if not self.peak_bytes_per_s or not self.has_model:
            return None
        t_mem = self.bytes_model / self.peak_bytes_per_s
        t_math = self.flops / self.peak_flops_per_s if self.peak_flops_per_s else 0.0
        return 1e9 * max(t_mem, t_math)

    @computed_field
    @property
    def measured_dram_bytes_per_s(self) -> float | None:
        if self.dram_bytes is None or self.seconds <= 0:
            return None
        return self.dram_bytes / self.seconds

    @property
    def seconds(self) -> float:
        return self.timing.median_ns * 1e-9

    @computed_field
    @property
    def achieved_flops_per_s(self) -> float:
        return self.flops / self.seconds if self.seconds > 0 else 0.0

    @computed_field
    @property
    def achieved_bytes_per_s(self) -> float:
        return self.bytes_model / self.seconds if self.seconds > 0 else 0.0

    @computed_field
    @property
    def intensity_flop_per_byte(self) -> float | None:
        return self.flops / self.bytes_model if self.bytes_model > 0 else None

    @computed_field
    @property
    def ridge_flop_per_byte(self) -> float | None:
        if self.peak_flops_per_s and self.peak_bytes_per_s:
            return self.peak_flops_per_s / self.peak_bytes_per_s
        return None

    @computed_field
    @property
    def pct_peak_flops(self) -> float | None:
        if not self.has_model:
            return None
        return 100.0 * self.achieved_flops_per_s / self.peak_flops_per_s if self.peak_flops_per_s else None

    @computed_field
    @property
    def pct_peak_bandwidth(self) -> float | None:
        if not self.has_model:
            return None
        return 100.0 * self.achieved_bytes_per_s / self.peak_bytes_per_s if self.peak_bytes_per_s else None

    @computed_field
    @property
    def roofline_region(self) -> str | None:
        """'memory' when the model's intensity is left of the ridge, else 'compute'."""
        if self.intensity_flop_per_byte is None or self.ridge_flop_per_byte is None:
            return None
        return "memory" if self.intensity_flop_per_byte < self.ridge_flop_per_byte else "compute"

    @computed_field
    @property
    def pct_of_roofline(self) -> float | None:
        """Achieved FLOP/s ÷ attainable FLOP/s = min(peak, intensity × bandwidth)."""
        if not (self.peak_flops_per_s and self.peak_bytes_per_s and self.intensity_flop_per_byte):
            return None
        attainable = min(self.peak_flops_per_s, self.intensity_flop_per_byte * self.peak_bytes_per_s)
        return 100.0 * self.achieved_flops_per_s / attainable

    @computed_field
    @property
    def waves_per_sm(self) -> float | None:
        """Waves per SM: Nsight Compute's occupancy-aware figure when measured, otherwise blocks
        launched ÷ SMs (an upper bound: it assumes one resident block per SM)."""
        if self.measured_waves_per_sm is not None:
            return self.measured_waves_per_sm
        if self.grid_blocks and self.sm_count:
            return self.grid_blocks / self.sm_count
        return None


WARNING_KINDS = (
    "device",
    "clocks",
    "noise",
    "few_runs",
    "resolution",
    "no_spread",
    "concurrency",
    "autotune",
    "metrics_missing",
    "matching",
    "timeline",
    "artifact",
    "integrity",  # an integrity check after timing failed (kprof_mcp/capture/integrity.py)
    "timing",  # a stage's time is not its kernels' (no kernel seen by CUPTI or ncu: CUDA events instead)
    "inputs",  # compare_versions: the arms ran on different parameters, each on its own inputs
    "note",
)


class ResultWarning(BaseModel):
    """Something that limits how far a result can be trusted, typed so that an agent can act on
    it without parsing prose. ``kind`` is one of :data:`WARNING_KINDS`."""

    kind: str = Field(description=" | ".join(WARNING_KINDS))
    message: str
    stage: str | None = Field(default=None, description="the stage it concerns; null for the whole profile")


class ProfileResult(BaseModel):
    """Everything a profile produced. ``result.json`` in the profile directory."""

    kernel: str
    version: str
    mode: str
    plan_kind: str
    params: dict[str, Any]
    param_order: list[str]
    device: DeviceState
    stages: list[StageResult]
    plan_total: Timing | None = None
    data_bytes: float | None = Field(
        default=None,
        description="bytes of device memory the version's data occupies (the distinct storages of the package's "
        "inputs, outputs and scratch, and what the version's build allocated): reading each byte once is the least "
        "DRAM reading the plan needs",
    )
    scratch_bytes: float | None = Field(
        default=None,
        description="of data_bytes, the device memory the version's build allocated (a split kernel's partials, a "
        "workspace between its stages): data the result does not need once the stages keep it on chip",
    )
    warnings: list[ResultWarning] = Field(default_factory=list)
    correctness: dict[str, Any] = Field(default_factory=dict)
    created_at: str
    profile_dir: str | None = None
    request: dict[str, Any] = Field(default_factory=dict)
    phases_s: dict[str, float] = Field(default_factory=dict, description="wall seconds of each worker phase")
    timings: dict[str, Any] = Field(
        default_factory=dict,
        description="where the profile's wall time went (issue 40): wall_s (from the request's submission "
        "to result.json), phases (seconds, in order: the server's and the profiling process's), "
        "unaccounted_s (wall_s minus their sum), in_child (the phases measured in the profiling process); "
        "stopping: the timing's stopping rule and targets",
    )
    profiler: dict[str, Any] = Field(
        default_factory=dict,
        description="Nsight Compute run: version, command, "
        "passes, clock and cache control, report file, parser",
    )
    timeline: dict[str, Any] = Field(
        default_factory=dict, description="nsys mode: kprof_mcp.analysis.timeline.Timeline"
    )
    noise_floor: dict[str, Any] = Field(
        default_factory=dict,
        description="the between-profile spread measured on this GPU (kprof noise) that applies "
        "to this profile's time scale: pct, the A/A measurement it comes from; empty when none was measured",
    )
    command: dict[str, Any] = Field(
        default_factory=dict,
        description="profile_command: the argument vector, working "
        "directory, exit status, ranges found and the tail of its output",
    )

    @field_validator("warnings", mode="before")
    @classmethod
    def _typed_warnings(cls, v: Any) -> Any:
        # result.json files written before warnings were typed hold plain strings.
        return [{"kind": "note", "message": w} if isinstance(w, str) else w for w in (v or [])]

    def total_time_ns(self) -> float:
        if self.plan_total is not None:
            return self.plan_total.median_ns
        return sum(s.timing.median_ns for s in self.stages)


class Diagnosis(BaseModel):
    """Structured output of classify_bottleneck and of each profile's stages."""

    bottleneck: str = Field(
        description="'Memory-bound', 'Compute-bound', 'Latency-bound', or 'suspect' (a profile's stage "
        "whose figures cannot be its kernel's work: no kernel recorded in its timed runs, or a figure above a "
        "device peak; its Key Issue says why and no opportunity ranks on it)",
    )
    locality_issue: bool = Field(description="True when the L2 hit rate is under 80 %")
    unhealthy: list[str] = Field(description="metric=value for each metric outside its healthy range")
    opportunities: list[OpportunityModel] = Field(description="ranked by estimated gain, largest first")
    compute_source: str = Field(
        description="which input gave compute utilisation: tc_pct, compute_pct or none"
    )
    root_cause: str
    notes: list[str] = Field(default_factory=list)

    @classmethod
    def from_analysis(cls, d: Any) -> Diagnosis:
        """From :class:`kprof_mcp.analysis.diagnosis.Diagnosis` (read by attribute: models
        import nothing else from kprof)."""
        return cls(
            bottleneck=d.bottleneck,
            locality_issue=d.locality_issue,
            unhealthy=list(d.unhealthy),
            opportunities=[
                OpportunityModel(
                    name=o.name,
                    est_gain_pct=round(o.est_gain_pct, 1),
                    trigger=o.trigger,
                    share_pct=round(100 * o.share, 1),
                    cause=o.cause,
                )
                for o in d.opportunities
            ],
            compute_source=d.compute_source,
            root_cause=d.root_cause,
            notes=list(d.notes),
        )

"""What to profile: a kernel profile (or a user's command), a comparison, a sweep. Frozen and
separate from any result."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

TIMELINE_ENGINES = ("auto", "nsys", "kineto")  # nsys mode's recorders (ProfileRequest.timeline_engine)


class ProfileRequest(BaseModel):
    """What to profile. Frozen and hashable, separate from any result."""

    model_config = ConfigDict(frozen=True)

    kernel: str
    kernel_source: str  # resolved path of the package (dir or .py)
    version: str
    params: dict[str, Any]
    mode: str = "event"
    out_root: str
    budget_ms: float = 2000.0  # per stage: stop timing after this much GPU time
    min_runs: int = 10
    max_runs: int = 10000
    target_rel_iqr: float = 0.01  # stop once IQR/median is under this (after min_runs)
    # ... or once the median is known this well: half the width of its 95 % confidence interval
    # (distribution-free, from order statistics), as a fraction of the median.
    target_rel_ci: float = 0.0025
    # On a GPU, neither target may stop timing before this much timed time (capped by budget_ms):
    # a GPU's clock state lasts longer than a few runs, so ten runs agreeing within 1 % say little
    # about the next profile. Measured on an H100 at a locked clock (docs/evidence/h100-thermal/
    # window_check.py): matmul v3's median moved 1.43 % across 8 calls stopped after 10 runs, 0.56 %
    # over 300 ms windows and 0.24 % over 1000 ms; softmax v2 0.74 %, 0.16 %, 0.07 %.
    min_window_ms: float = 1000.0
    warmup_ms: float = 100.0
    force_cpu: bool = False
    # Nsight Compute modes (annotation, ncu): filled by the engine after its preflight.
    ncu_path: str | None = None
    ncu_launches: int = 1  # profiled launches per stage; >1 gives a spread of ncu durations
    clock_control: str = "base"  # ncu --clock-control: "base" locks SM clocks to base, "none" leaves them
    # Compile, autotune and check correctness, then stop: run without a profiler before the first
    # Nsight run of a source/params, so Triton's autotuner never benchmarks under instrumentation.
    prepare_only: bool = False
    # The preparation run's correctness results: the profiled child then skips its own check
    # (set by the engine when it prepared in a warm worker right before this run).
    correctness_checked: dict[str, Any] | None = None
    # A file the child waits for before it builds inputs or launches anything: the engine starts
    # the profiled child while the warm worker prepares, and writes there {"ok": true,
    # "correctness": ...} when preparation succeeded, or {"ok": false, "message": ...}.
    wait_for: str | None = None
    timeline_iters: int = 5  # nsys mode: plan iterations recorded back to back
    # nsys mode: "auto" (Nsight Systems when a working one is found, else CUPTI via torch.profiler),
    # "nsys" (Nsight Systems or an error) or "kineto" (torch.profiler). The engine fills the rest
    # after its preflight: the Nsight Systems to run, or why none could be used.
    timeline_engine: str = "auto"
    nsys_path: str | None = None
    timeline_fallback: str | None = None
    # profile_command: the user's Python command (an argument vector, ``python`` first) instead of
    # a kernel package. Stages are its ranges whose names match ``include`` (fnmatch patterns;
    # empty: every range; no range at all: its kernels grouped by name). ``stage_models`` gives
    # FLOPs/bytes per stage when the caller knows them ({"flops", "bytes", "dtype", "tensor_cores"}).
    command: list[str] | None = None
    command_cwd: str | None = None
    include: list[str] = Field(default_factory=list)
    stage_models: dict[str, dict[str, Any]] = Field(default_factory=dict)
    max_kernels: int = 200  # Nsight Compute on a command: at most this many kernels profiled
    warmup_occurrences: int = 1  # a command's first occurrences of each range left out (JIT, set-up)


class CompareArm(BaseModel):
    """One side of a comparison: a version at a parameter set, under a label ('v3', or
    'v3 [K=4095]' when parameter sets differ)."""

    model_config = ConfigDict(frozen=True)

    label: str
    version: str
    params: dict[str, Any]


class CompareRequest(BaseModel):
    """Two or more versions of one kernel (or one version at two or more parameter sets), timed
    in one process, round by round in rotating order (``compare_versions``). Frozen, separate
    from its result."""

    model_config = ConfigDict(frozen=True)

    kernel: str
    kernel_source: str
    versions: list[str]  # the first is the baseline every other is compared with
    params: dict[str, Any]  # the shared parameters (the first parameter set's, with param sets)
    # Every (version, parameter set) compared, the baseline first; empty: each version at ``params``.
    arms: list[CompareArm] = Field(default_factory=list)
    mode: str = (
        "event"  # annotation/ncu: each arm is also profiled under Nsight Compute (counters side by side)
    )
    out_root: str
    budget_ms: float = 4000.0  # timed GPU time over all versions and rounds
    rounds: int = 20  # at most; fewer when the budget is spent
    runs_per_round: int = 0  # 0: chosen from the first version's time (~budget/rounds/versions)
    warmup_ms: float = 100.0
    force_cpu: bool = False
    seed: int = 0  # the bootstrap's


class SweepRequest(BaseModel):
    """One or more versions across values of one parameter (``sweep``), in one process."""

    model_config = ConfigDict(frozen=True)

    kernel: str
    kernel_source: str
    versions: list[str]
    param: str
    values: list[Any]
    params: dict[str, Any]  # the other parameters (defaults where absent)
    out_root: str
    budget_ms: float = 300.0  # per stage and point
    warmup_ms: float = 50.0
    force_cpu: bool = False

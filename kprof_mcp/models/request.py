"""What to profile: a kernel profile (or a user's command), a comparison, a sweep. Frozen and
separate from any result."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from .options import (
    OPTION_DEFAULTS,
    EventOptions,
    ModeOptions,
    ModeOptionsUnion,
    build_options,
    clip,
    int_in,
)

# A request's flat form (its JSON: params.json's neighbours result.json and capture.json, the child's
# and a cluster worker's request file) in this order, every mode's options among the shared fields.
FLAT_ORDER = (
    "kernel",
    "kernel_source",
    "version",
    "params",
    "mode",
    "out_root",
    "budget_ms",
    "min_runs",
    "max_runs",
    "target_rel_iqr",
    "target_rel_ci",
    "min_window_ms",
    "warmup_ms",
    "force_cpu",
    "ncu_path",
    "ncu_launches",
    "clock_control",
    "prepare_only",
    "correctness_checked",
    "wait_for",
    "sm_clock_locked_mhz",
    "timeline_iters",
    "timeline_engine",
    "nsys_path",
    "timeline_fallback",
    "python_backtrace",
    "command",
    "command_cwd",
    "include",
    "stage_models",
    "max_kernels",
    "warmup_occurrences",
)


class ProfileRequest(BaseModel):
    """What to profile. Frozen, separate from any result.

    ``options`` holds the mode and its own options (:mod:`.options`, told apart by ``mode``);
    the fields here are every mode's. The request may also be given flat, as its JSON is
    written: ``mode`` and any mode's options beside the shared fields (an option of another mode
    is checked by its model, then left out). It is serialized flat, every option of every mode
    in :data:`FLAT_ORDER` (another mode's at its default), so ``result.json``'s ``request`` keeps
    its keys.
    """

    model_config = ConfigDict(frozen=True)

    kernel: str
    kernel_source: str  # resolved path of the package (dir or .py)
    version: str
    params: dict[str, Any]
    options: ModeOptionsUnion = Field(default_factory=EventOptions)
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
    # "base": the SM clock locked for the run (by ncu to base in annotation/ncu, by kprof to the
    # device's sustained clock in event/nsys), reset after; "none" leaves clocks free.
    clock_control: str = "base"
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
    # The SM clock the engine holds locked for this run (MHz; set by the engine under the clock
    # protocol): the child records it as the run's clock state. A confined warm worker cannot read
    # the lock's marker, and took a kept lock for free clocks (issue 40: every CUPTI batch then read
    # "throttled" at the locked base clock and was set aside until twice the budget was spent).
    sm_clock_locked_mhz: int | None = None
    # profile_command: the user's Python command (an argument vector, ``python`` first) instead of
    # a kernel package. Stages are its ranges whose names match ``include`` (fnmatch patterns;
    # empty: every range; no range at all: its kernels grouped by name). ``stage_models`` gives
    # FLOPs/bytes per stage when the caller knows them ({"flops", "bytes", "dtype", "tensor_cores"}).
    command: list[str] | None = None
    command_cwd: str | None = None
    include: list[str] = Field(default_factory=list)
    stage_models: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # a command's first occurrences of each range left out (JIT, set-up; event and nsys)
    warmup_occurrences: Annotated[int, int_in("warmup_occurrences", 0, 100, "an integer")] = 1
    # A confined command (the server's profile_command): the workspace it was checked against. The
    # child then runs ``python -m X`` only as X's file under the working directory, read once, and
    # pytest with kprof's own --rootdir/--confcutdir/-c there. None: ``kprof run``, the user's own.
    command_root: str | None = None
    # nsys mode's plain pass (a command only): the command run once more without a profiler, its ranges'
    # entry times recorded and nothing else (``plain_steps_only``); the engine hands its step time to the
    # traced run (``plain_steps``: {"range", "occurrences", "step_ns", "interval_ns"}), against which the timeline's
    # what-ifs are taken (:func:`kprof_mcp.analysis.replay.gains`).
    plain_steps_only: bool = False
    plain_steps: dict[str, Any] | None = None

    @property
    def mode(self) -> str:
        return self.options.mode

    def __getattr__(self, name: str) -> Any:
        # The flat form, read: ``req.ncu_path`` is ``req.options.ncu_path``, or the option's
        # default where the mode has no such option (as when every mode's options were fields).
        if name in OPTION_DEFAULTS:
            return getattr(self.__dict__.get("options"), name, OPTION_DEFAULTS[name])
        return super().__getattr__(name)  # pydantic's: private attributes

    @model_validator(mode="before")
    @classmethod
    def _from_flat(cls, data: Any) -> Any:
        """The flat form: ``mode`` and the options beside the shared fields, gathered into
        ``options`` (merged over an ``options`` given too); ``clock_control`` checked."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        flat = {k: data.pop(k) for k in OPTION_DEFAULTS if k in data}
        given = data.get("options")
        if "mode" not in data and not flat and given is not None:
            return data  # the nested form: the discriminated union validates it
        if isinstance(given, ModeOptions):
            given = given.model_dump()
        given = dict(given or {})
        mode = data.pop("mode", given.pop("mode", "event"))
        command = bool(data.get("command"))
        data["options"] = build_options(mode, {**given, **flat}, command)
        if "clock_control" in data and data["clock_control"] not in ("base", "none"):
            raise ValueError(
                f"clock_control={clip(data['clock_control'])}: 'base' or 'none'"
                if command
                else f"clock_control={clip(data['clock_control'])}: 'base' (default: the SM clock "
                "locked for the run — ncu's base clock in annotation/ncu, the device's sustained "
                "clock in event/nsys — and reset after) or 'none' (clocks free, e.g. under MIG)"
            )
        return data

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        shared = handler(self)
        if not isinstance(shared, dict) or "options" not in shared:
            return shared
        fields = {**OPTION_DEFAULTS, **shared.pop("options"), **shared}
        if fields.get("command_root") is None:  # a kernel's request and `kprof run`'s keep their keys
            fields.pop("command_root", None)
        if not fields.get("plain_steps_only"):  # nor does a request without nsys mode's plain pass
            fields.pop("plain_steps_only", None)
        if fields.get("plain_steps") is None:
            fields.pop("plain_steps", None)
        return {**{k: fields.pop(k) for k in FLAT_ORDER if k in fields}, **fields}  # any other after them

    def with_options(self, **values: Any) -> ProfileRequest:
        """A copy whose options also have ``values`` (what the mode's preflight found: the
        profiler to run), checked by the options' model."""
        if not values:
            return self
        opts = build_options(self.mode, {**self.options.model_dump(exclude={"mode"}), **values})
        return self.model_copy(update={"options": opts})


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
    sm_clock_locked_mhz: int | None = None  # as ProfileRequest's: set by the engine


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
    sm_clock_locked_mhz: int | None = None  # as ProfileRequest's: set by the engine

"""The :class:`Engine` facade: every capability of kprof-mcp as one method that documents it
and delegates to the module of the ``engine`` package that implements it. The facade imports its
parts, never the reverse: each part takes the engine as a :class:`~.state.EngineState` (the
engine passes itself), and the specs call it back through :class:`~.specs.Runs`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import clocks, runner
from ..models import ProfileResult
from ..modes import DEFAULT_MODE
from ..warm import WorkerPool
from . import batch, catalogue, info, profile, run
from . import command as user_command
from .catalogue import PackageDescription, PackageError
from .config import Config
from .specs import CompareOutcome, CompareSpec, ProfileOutcome, ProfileSpec, SweepOutcome, SweepSpec
from .state import kernel_scope, with_workers

if TYPE_CHECKING:
    from ..noise import NoiseSpec


class Engine:
    def __init__(
        self, config: Config | None = None, eager_workers: bool = False, pool: WorkerPool | None = None
    ):
        self.config = config or Config()
        self.describe_cache: dict[tuple[str, float], PackageDescription] = {}
        self.pool: WorkerPool | None = pool  # workers started before the engine (kprof_mcp.launch)
        self.remote = None  # a cluster.ClusterRunner: jobs run on a Dask cluster (cluster.connect)
        if self.pool is None and self.config.warm:
            self.pool = WorkerPool(runner.child_env, force_cpu=self.config.force_cpu, eager=eager_workers)
        if self.pool is not None:  # its workers import workspace packages: confined (issue 38)
            self.pool.confine(kernel_scope(self.config))
        # A kprof process that died holding a GPU's clock lock (kill -9) left its marker: reset that GPU.
        self.clock_recovery: list[str] = clocks.recover()

    def execute(
        self,
        spec: ProfileSpec | CompareSpec | SweepSpec | NoiseSpec,
        on_progress: runner.ProgressFn | None = None,
        control: runner.RunControl | None = None,
    ):
        """Run a checked request (:meth:`check_profile`, :meth:`check_command`, :meth:`check_compare`,
        :meth:`check_sweep`, :meth:`check_noise`) here, or on a Dask cluster once
        :func:`kprof_mcp.cluster.connect` has set ``remote``: the one entry point the server's job
        queue, the CLI and the Python API share. Here each spec runs itself:
        ``spec.run(engine, on_progress, control)``."""
        if self.remote is not None:
            run.guard(self, spec)  # the package is packed from here; locally the run checks under its lock
            return self.remote.run(spec, on_progress or (lambda f, m: None), with_workers(self, control))
        try:
            return spec.run(self, on_progress, with_workers(self, control))
        finally:
            if self.pool is not None:  # the next job's worker warms once this job's directory is written
                self.pool.replenish()

    def start_workers(self, gpus: list[str | None]) -> None:
        """Start the warm workers ahead of the first profile (the server does, at start-up)."""
        if self.pool is not None:
            self.pool.start(describe=True)
            for g in gpus:
                self.pool.start(g)

    def close(self) -> None:
        """Stop the warm workers (their process groups are killed), reset the SM clocks kept locked
        between jobs, and leave the cluster."""
        if self.pool is not None:
            self.pool.close()
            clocks.release_kept(all_gpus=True)
        if self.remote is not None:
            self.remote.close()

    # ------------------------------------------------------------------ kernels
    def resolve_kernel(self, kernel: str) -> Path:
        """The package (directory or file) a kernel name or path names, under the workspace or
        the kernel directories."""
        return catalogue.resolve_kernel(self, kernel)

    def packages(self) -> list[PackageDescription | PackageError]:
        """Every available kernel package with versions, parameters (defaults, bounds) and stages,
        or why it failed to load."""
        return catalogue.packages(self)

    def describe_package(self, kernel: str) -> PackageDescription:
        """One kernel package's versions, parameters (defaults, bounds) and stages."""
        return catalogue.describe_package(self, kernel)

    def cpu_sized(self, kernel: str, given: set[str]) -> dict[str, Any]:
        """Without a GPU: the package's CPU-sized defaults of the parameters not in ``given``
        (``{}`` on a GPU); announce them with :func:`~.catalogue.cpu_sized_line`."""
        return catalogue.cpu_sized(self, kernel, given)

    def list_kernels(self) -> list[dict[str, Any]]:
        """:meth:`packages` as the JSON the ``describe`` child reports (a failed one: ``name``,
        ``source``, ``error``, no params or versions)."""
        return [p.to_dict() for p in self.packages()]

    def describe_kernel(self, kernel: str) -> dict[str, Any]:
        """:meth:`describe_package` as the JSON the ``describe`` child reports."""
        return self.describe_package(kernel).to_dict()

    # ------------------------------------------------------------------ validation
    @staticmethod
    def validate_params(desc: PackageDescription, params: dict[str, Any] | None) -> dict[str, Any]:
        """Bounds and names checked in the server, before any process starts."""
        return catalogue.validate_params(desc, params)

    # ------------------------------------------------------------------ paths
    def root_of(self, p: Path) -> Path:
        """The trusted root ``p`` lies under: the workspace, or the operator's ``out_root``
        outside it. Below the root nothing is trusted: no link is ever followed there."""
        return catalogue.root_of(self, p)

    def confine(self, path: str, what: str) -> Path:
        """``path`` (relative to the workspace, or absolute) taken lexically under the workspace
        (or the out_root), with no symbolic link on any component: the path it names is the path
        that will be read, written or run. Refused with a reason otherwise; the message never
        says where a link points."""
        return catalogue.confine(self, path, what)

    def load_result(self, profile_dir: str, what: str = "profile_dir") -> ProfileResult:
        """The result (result.json) of the finished profile in ``profile_dir``."""
        return catalogue.load_result(self, profile_dir, what)

    def read_params(self, profile_dir: str) -> dict[str, Any]:
        """The params.json of the finished profile in ``profile_dir``."""
        return catalogue.read_params(self, profile_dir)

    # ------------------------------------------------------------------ profile
    def profile(
        self,
        kernel: str,
        version: str | None = None,
        params: dict[str, Any] | None = None,
        mode: str = DEFAULT_MODE,
        baseline: str | None = None,
        on_progress: runner.ProgressFn | None = None,
        timeout_s: float | None = None,
        ncu_launches: int = 1,
        clock_control: str = "base",
        timeline_iters: int = 5,
        control: runner.RunControl | None = None,
        timeline_engine: str = "auto",
        allow_mismatch: bool = False,
    ) -> ProfileOutcome:
        """Check correctness, then measure every stage in ``mode``; write the artifacts; return
        the contract.

        event: kernel time from CUPTI (CUDA events beside it). annotation: one Nsight Compute run with a small metric set
        (and the SpeedOfLight/LaunchStats/Occupancy rules). ncu: ``--set full`` with source-level
        SASS metrics. Only launches inside each stage's NVTX range are profiled.
        """
        spec = self.check_profile(
            kernel,
            version,
            params,
            mode,
            baseline,
            timeout_s,
            ncu_launches,
            clock_control,
            timeline_iters,
            timeline_engine,
            allow_mismatch,
        )
        return self.execute(spec, on_progress, control)

    def check_noise(
        self, cases: list[tuple[str, str, dict]] | None = None, rounds: int = 8, clock_control: str = "base"
    ):
        """Validate a noise-floor measurement (:mod:`kprof_mcp.noise`): A/A event profiles of each
        case, alternating, on this machine's GPU (the floor is kept in this machine's cache)."""
        return batch.check_noise(self, cases, rounds, clock_control)

    def check_profile(
        self,
        kernel: str,
        version: str | None = None,
        params: dict[str, Any] | None = None,
        mode: str = DEFAULT_MODE,
        baseline: str | None = None,
        timeout_s: float | None = None,
        ncu_launches: int = 1,
        clock_control: str = "base",
        timeline_iters: int = 5,
        timeline_engine: str = "auto",
        allow_mismatch: bool = False,
    ) -> ProfileSpec:
        """Validate every argument of a profile (fast; nothing runs on the GPU) and return what
        :meth:`run_checked` needs. Every bad input raises :class:`KprofError` saying what is valid; a
        baseline of other parameters, device or mode among them unless ``allow_mismatch``."""
        return profile.check_profile(
            self,
            kernel,
            version,
            params,
            mode,
            baseline,
            timeout_s,
            ncu_launches,
            clock_control,
            timeline_iters,
            timeline_engine,
            allow_mismatch,
        )

    # ------------------------------------------------------------------ a user's command
    def profile_command(self, command: list[str], **kw: Any) -> ProfileOutcome:
        """Run the user's Python command in ``mode`` and profile it: stages are its ranges (see
        :meth:`check_command`). Returns the same outcome as a kernel profile."""
        on_progress, control = kw.pop("on_progress", None), kw.pop("control", None)
        return self.execute(self.check_command(command, **kw), on_progress, control)

    def check_command(
        self,
        command: list[str],
        cwd: str | None = None,
        mode: str = DEFAULT_MODE,
        include: list[str] | None = None,
        stage_models: dict[str, dict[str, Any]] | None = None,
        timeout_s: float | None = None,
        max_kernels: int = 200,
        clock_control: str = "base",
        timeline_engine: str = "auto",
        warmup_occurrences: int = 1,
        python_backtrace: bool = False,
    ) -> ProfileSpec:
        """Validate a ``profile_command`` request: an argument vector starting with ``python`` (a
        script under the workspace, or ``-m module``), a working directory under the workspace,
        include patterns, per-stage FLOP/byte models, limits. Nothing runs yet."""
        return user_command.check_command(
            self,
            command,
            cwd,
            mode,
            include,
            stage_models,
            timeout_s,
            max_kernels,
            clock_control,
            timeline_engine,
            warmup_occurrences,
            python_backtrace,
        )

    def run_checked(
        self,
        spec: ProfileSpec,
        on_progress: runner.ProgressFn | None = None,
        control: runner.RunControl | None = None,
    ) -> ProfileOutcome:
        """Run a validated profile (see :meth:`check_profile`) in child processes, holding the
        machine-wide lock of its device: two kprof processes (two servers, a server and the CLI)
        never profile on the same GPU at once."""
        return run.run_checked(self, spec, on_progress, control)

    # ------------------------------------------------------------------ compare
    def compare(
        self,
        kernel: str,
        versions: list[str],
        params: dict[str, Any] | None = None,
        budget_ms: float | None = None,
        rounds: int = 20,
        timeout_s: float | None = None,
        on_progress: runner.ProgressFn | None = None,
        control: runner.RunControl | None = None,
        param_sets: list[dict[str, Any]] | None = None,
        mode: str = "event",
        clock_control: str = "base",
    ) -> CompareOutcome:
        """Time two or more versions (or one version at two or more parameter sets) in one
        process, interleaved round by round, and say whether each is faster than the first
        (ratio of medians, 95 % CI); in an Nsight mode also profile each and put the counters
        side by side."""
        return self.execute(
            self.check_compare(
                kernel, versions, params, budget_ms, rounds, timeout_s, param_sets, mode, clock_control
            ),
            on_progress,
            control,
        )

    def check_compare(
        self,
        kernel: str,
        versions: list[str],
        params: dict[str, Any] | None = None,
        budget_ms: float | None = None,
        rounds: int = 20,
        timeout_s: float | None = None,
        param_sets: list[dict[str, Any]] | None = None,
        mode: str = "event",
        clock_control: str = "base",
    ) -> CompareSpec:
        """Validate a comparison (fast; nothing runs): the kernel, 1–8 distinct known versions,
        parameters (and 2–8 distinct parameter sets, each on top of ``params``), 2–8 arms in all
        (versions × parameter sets), the mode, the budget (100 ms–60 s of timed GPU time) and
        rounds (3–200)."""
        return batch.check_compare(
            self, kernel, versions, params, budget_ms, rounds, timeout_s, param_sets, mode, clock_control
        )

    def run_compare(
        self,
        spec: CompareSpec,
        on_progress: runner.ProgressFn | None = None,
        control: runner.RunControl | None = None,
    ) -> CompareOutcome:
        """Run a validated comparison in a child, holding the device's lock; in an Nsight mode
        then profile every arm under the same lock and put its counters beside the others';
        write compare.md."""
        return batch.run_compare(self, spec, on_progress, control)

    # ------------------------------------------------------------------ sweep
    def sweep(
        self,
        kernel: str,
        param: str,
        values: list[Any],
        versions: list[str] | None = None,
        params: dict[str, Any] | None = None,
        budget_ms: float | None = None,
        timeout_s: float | None = None,
        on_progress: runner.ProgressFn | None = None,
        control: runner.RunControl | None = None,
        clock_control: str = "base",
    ) -> SweepOutcome:
        """Profile versions across the values of one parameter: a table and a plot."""
        return self.execute(
            self.check_sweep(kernel, param, values, versions, params, budget_ms, timeout_s, clock_control),
            on_progress,
            control,
        )

    def check_sweep(
        self,
        kernel: str,
        param: str,
        values: list[Any],
        versions: list[str] | None = None,
        params: dict[str, Any] | None = None,
        budget_ms: float | None = None,
        timeout_s: float | None = None,
        clock_control: str = "base",
    ) -> SweepSpec:
        """Validate a sweep (nothing runs): the kernel, its parameter, 1–32 values (each within the
        parameter's bounds), 1–4 versions (default: the latest), the other parameters."""
        return batch.check_sweep(
            self, kernel, param, values, versions, params, budget_ms, timeout_s, clock_control
        )

    def run_sweep(
        self,
        spec: SweepSpec,
        on_progress: runner.ProgressFn | None = None,
        control: runner.RunControl | None = None,
    ) -> SweepOutcome:
        """Run a validated sweep in a child, holding the device's lock; write sweep.md/.csv/.png."""
        return batch.run_sweep(self, spec, on_progress, control)

    # ------------------------------------------------------------------ analysis
    # SPEC.md's classification from a few metrics (the MCP tool's arguments, one by one).
    classify = staticmethod(info.classify)

    # ------------------------------------------------------------------ devlog
    def update_devlog(
        self,
        kernel: str,
        profile_dir: str,
        issues: list[str] | None = None,
        insights: list[str] | None = None,
        allow_mismatch: bool = False,
    ) -> tuple[Path, str]:
        """Append SPEC.md's devlog template to ``docs/kernels/<kernel>.md`` under a file lock. "vs
        Previous" is the last entry measured the same way (parameters, device, mode); with
        ``allow_mismatch``, the last entry whatever it measured, the differences heading it."""
        return info.update_devlog(self, kernel, profile_dir, issues, insights, allow_mismatch)

    # ------------------------------------------------------------------ device
    def device_info(self) -> dict[str, Any]:
        """The active device (via nvidia-smi, no torch import), its table peaks, clocks and profilers."""
        return info.device_info(self)

    def calibrate(
        self, clock_control: str = "base", timeout_s: float = 600.0, on_progress=None
    ) -> tuple[dict[str, Any], Path]:
        """Measure each pipe's and memory level's peak on the GPU (``kprof device --calibrate``):
        the document, written to ``<workspace>/out/device/calibration-<key>.json``, and its path."""
        from . import calibrate

        return calibrate.calibrate(self, clock_control, timeout_s, on_progress)

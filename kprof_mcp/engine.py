"""The engine: every capability of kprof-mcp as plain Python, with no MCP in it.

A profile goes validate → mode registry → device lock → runner → store → render:
:meth:`Engine.check_profile` checks every argument and runs the mode's preflight (nothing
starts); :meth:`Engine.run_checked` takes the device's lock, runs the child (wrapped in the
mode's profiler, if any), lets the mode complete the directory, computes the assessment once
and renders the contract and report from it, then gives the directory its final name.

The MCP server (``server.py``) and the CLI (``cli.py``) are thin layers over :class:`Engine`.
Expected failures raise :class:`KprofError` with a message that says what is wrong and what
is valid. Nothing here imports torch or triton: kernels are loaded and run in child processes.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from . import clocks, runner, safefs, store
from .analysis import diagnosis as dx
from .analysis.assessment import Assessment, assess
from .devices import load_devices, try_match_device
from .kernel.api import NAME_RE, Param, ParamError
from .locks import Cancelled, device_lock, lock_name
from .models import (
    TIMELINE_ENGINES,
    CompareArm,
    CompareRequest,
    CompareResult,
    Diagnosis,
    ProfileRequest,
    ProfileResult,
    ResultWarning,
    SweepRequest,
    SweepResult,
)
from .modes import DEFAULT_MODE, MODES, ModeError, ModeNotAvailable, PreflightEnv, get_mode
from .packages import KernelNotFound, available, check_package, package_roots, resolve
from .render import last_devlog_metrics, render_contract, render_devlog_entry, render_report
from .tools import ncu as ncu_tool
from .tools import nsys as nsys_tool
from .tools import nvidia_smi
from .warm import WorkerPool


class KprofError(Exception):
    """An expected failure; the message is written for the caller to act on."""


@dataclass
class Config:
    workspace: Path = field(default_factory=lambda: Path(os.environ.get("KPROF_WORKSPACE", os.getcwd())))
    out_root: Path | None = None  # default: <workspace>/out/profiles
    kernel_dirs: list[Path] = field(
        default_factory=lambda: [
            Path(p) for p in os.environ.get("KPROF_KERNEL_PATH", "").split(os.pathsep) if p
        ]
    )
    timeout_s: float = float(os.environ.get("KPROF_TIMEOUT_S", "900"))
    # profile_kernel answers within this many seconds: the contract if done, else a job id
    # (clients commonly give up on a call after 60 s).
    wait_s: float = float(os.environ.get("KPROF_WAIT_S", "45"))
    gpus: list[str] | None = None  # GPU indices jobs may use (default: all visible)
    budget_ms: float | None = None  # per-stage timing budget; default by device kind
    force_cpu: bool = os.environ.get("KPROF_FORCE_CPU") == "1"
    # Warm workers (kprof_mcp.warm): one long-lived child per GPU, so re-profiles skip imports,
    # the CUDA context and the JIT of unchanged kernels. Off: a fresh process for every child.
    warm: bool = os.environ.get("KPROF_WARM", "1") != "0"
    # Jobs run on a Dask cluster's workers (kprof-mcp --cluster): the GPUs and profilers are theirs,
    # so a request is not checked against this machine's; each worker checks it (cluster.remote_job).
    remote_gpus: bool = False
    # python -m in a command: only modules under the working directory or ALLOWED_MODULES (with
    # their path arguments confined) for the server's profile_command, whose caller is an agent;
    # the CLI's `kprof run` turns it off (the user runs their own command; links are still refused).
    confine_modules: bool = True

    @classmethod
    def from_options(
        cls,
        workspace: str | None = None,
        kernel_dirs: list[str] | None = None,
        timeout_s: float | None = None,
        force_cpu: bool = False,
        wait_s: float | None = None,
        gpus: list[str] | None = None,
    ) -> Config:
        """Build from command-line options; unset ones keep their environment/default values."""
        kwargs: dict[str, Any] = {}
        if workspace:
            kwargs["workspace"] = Path(workspace)
        if kernel_dirs:
            kwargs["kernel_dirs"] = [Path(d) for d in kernel_dirs]
        if timeout_s:
            kwargs["timeout_s"] = timeout_s
        if force_cpu:
            kwargs["force_cpu"] = True
        if wait_s is not None:
            kwargs["wait_s"] = wait_s
        if gpus:
            kwargs["gpus"] = gpus
        return cls(**kwargs)

    def __post_init__(self) -> None:
        self.workspace = Path(self.workspace).resolve()
        self.out_root = (
            Path(self.out_root).resolve() if self.out_root else self.workspace / "out" / "profiles"
        )
        self.kernel_dirs = [Path(p).resolve() for p in self.kernel_dirs]


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


def _clock_control(value: str) -> str:
    if value not in ("base", "none"):
        raise KprofError(
            f"clock_control={safefs.clip(value)}: 'base' (default: the SM clock locked at the device's "
            "sustained clock for the timing, reset after) or 'none' (clocks free)"
        )
    return value


@dataclass
class ProfileOutcome:
    result: ProfileResult
    assessment: Assessment
    contract: str
    profile_dir: Path


class _Preparation:
    """The preparation run (compile, autotune, correctness; no profiler) in the warm worker, on a
    thread, while the profiled child starts: its end is written to ``gate`` as JSON, which the
    child waits for before it builds inputs (``ProfileRequest.wait_for``)."""

    def __init__(self, prep_req: str, timeout: float, control: runner.RunControl, gate: Path):
        import threading

        self._gate, self._error = gate, None
        self._thread = threading.Thread(
            target=self._run, args=(prep_req, timeout, control), daemon=True, name="kprof-prepare"
        )
        self._thread.start()

    def _run(self, prep_req: str, timeout: float, control: runner.RunControl) -> None:
        import json

        said: dict[str, Any]
        try:
            record = runner.run_profile(prep_req, timeout, None, control=control)
            said = {"ok": True, "correctness": record.get("correctness")}
        except Exception as e:  # noqa: BLE001 — reported by error(); the child must hear of it either way
            self._error = e
            said = {"ok": False, "message": str(e)}
        tmp = self._gate.with_suffix(".tmp")
        tmp.write_text(json.dumps(said))
        tmp.replace(self._gate)  # atomic: the child never reads half a file

    def join(self) -> None:
        self._thread.join()

    def error(self) -> Exception | None:
        return self._error


def _output_tail(log: str, lines: int = 30, chars: int = 4000) -> str:
    """The end of a command's output, without kprof's own progress lines."""
    from .protocol import PROGRESS_PREFIX

    kept = [ln for ln in log.splitlines() if not ln.startswith(PROGRESS_PREFIX)]
    return "\n".join(kept[-lines:])[-chars:]


def _in_range(name: str, value: Any, lo: float, hi: float, what: str) -> None:
    """``value`` is None or a number from ``lo`` to ``hi``, else a KprofError saying so."""
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi
    ):
        raise KprofError(f"{name}={safefs.clip(value)}: give {what} from {lo} to {hi}")


@dataclass
class CompareSpec:
    """A validated comparison (see :meth:`Engine.check_compare`)."""

    req: CompareRequest
    cpu: bool
    timeout: float
    # Nsight modes: each arm's validated profile, run after the timing (counters side by side).
    arm_specs: list[ProfileSpec] = field(default_factory=list)
    clock_control: str = "base"  # the timing's SM clock: locked (kprof_mcp.clocks) or "none" (free)


@dataclass
class CompareOutcome:
    result: CompareResult
    markdown: str
    compare_dir: Path


@dataclass
class SweepSpec:
    """A validated sweep (see :meth:`Engine.check_sweep`)."""

    req: SweepRequest
    cpu: bool
    timeout: float
    clock_control: str = "base"  # the timing's SM clock: locked (kprof_mcp.clocks) or "none" (free)


@dataclass
class SweepOutcome:
    result: SweepResult
    rows: list[dict[str, Any]]
    markdown: str
    png: bytes | None
    sweep_dir: Path


@dataclass(frozen=True)
class Rendered:
    assessment: Assessment
    contract: str
    report: str


def render_profile(
    result: ProfileResult, baseline: ProfileResult | None = None, others: list[ProfileResult] | None = None
) -> Rendered:
    """Assess a result once and render its contract and report.md (with its mode's sections)."""
    a = assess(result)
    mode_report = get_mode(result.mode).report(result, a, others or [])
    return Rendered(
        a,
        render_contract(result, baseline, assessment=a),
        render_report(result, baseline, assessment=a, mode=mode_report),
    )


# python -m MODULE runs a module under the working directory, or one of these (their arguments
# checked by _refused_option and for paths outside the workspace).
ALLOWED_MODULES = frozenset({"pytest"})


def _refused_option(tool: str, arg: str, following: str) -> str | None:
    """Why an allowed tool's option is refused (it would load code or options by name), or None."""
    if tool != "pytest":
        return None
    if arg == "--pyargs":
        return "it imports test packages by name from the installation, outside the workspace"
    if (arg == "-p" and not following.startswith("no:")) or (
        arg.startswith("-p") and len(arg) > 2 and not arg[2:].startswith("no:")
    ):
        return "it loads a plugin module by name (-p no:NAME, which disables one, is accepted)"
    if (arg in ("-o", "--override-ini") and following.startswith("addopts")) or arg.startswith(
        ("--override-ini=addopts", "-oaddopts")
    ):
        return "addopts can add any option"
    return None


class Engine:
    def __init__(
        self, config: Config | None = None, eager_workers: bool = False, pool: WorkerPool | None = None
    ):
        self.config = config or Config()
        self._describe_cache: dict[tuple[str, float], dict[str, Any]] = {}
        self.pool: WorkerPool | None = pool  # workers started before the engine (kprof_mcp.launch)
        self.remote = None  # a cluster.ClusterRunner: jobs run on a Dask cluster (cluster.connect)
        if self.pool is None and self.config.warm:
            self.pool = WorkerPool(runner.child_env, force_cpu=self.config.force_cpu, eager=eager_workers)
        # A kprof process that died holding a GPU's clock lock (kill -9) left its marker: reset that GPU.
        self.clock_recovery: list[str] = clocks.recover()

    def execute(
        self,
        spec: ProfileSpec | CompareSpec | SweepSpec,
        on_progress: runner.ProgressFn | None = None,
        control: runner.RunControl | None = None,
    ):
        """Run a checked request (:meth:`check_profile`, :meth:`check_command`, :meth:`check_compare`,
        :meth:`check_sweep`) here, or on a Dask cluster once :func:`kprof_mcp.cluster.connect` has
        set ``remote``: the one entry point the server's job queue, the CLI and the Python API share."""
        if self.remote is not None:
            self._guard(spec)  # the package is packed from here; locally the run checks under its lock
            return self.remote.run(spec, on_progress or (lambda f, m: None), self._control(control))
        from .noise import NoiseSpec

        if isinstance(spec, NoiseSpec):
            from . import noise

            return noise.run(self, spec, on_progress, self._control(control))
        if isinstance(spec, CompareSpec):
            return self.run_compare(spec, on_progress, control)
        if isinstance(spec, SweepSpec):
            return self.run_sweep(spec, on_progress, control)
        return self.run_checked(spec, on_progress, control)

    def start_workers(self, gpus: list[str | None]) -> None:
        """Start the warm workers ahead of the first profile (the server does, at start-up)."""
        if self.pool is not None:
            self.pool.start(describe=True)
            for g in gpus:
                self.pool.start(g)

    def close(self) -> None:
        """Stop the warm workers (their process groups are killed) and leave the cluster."""
        if self.pool is not None:
            self.pool.close()
        if self.remote is not None:
            self.remote.close()

    def _control(self, control: runner.RunControl | None) -> runner.RunControl:
        """The caller's control (a new one if none) with this engine's warm workers."""
        control = control if control is not None else runner.RunControl()
        if control.pool is None:
            control.pool = self.pool
        return control

    # ------------------------------------------------------------------ kernels
    def _target_cpu(self) -> bool:
        """Whether jobs will time on the CPU: forced, or no GPU here (a cluster's workers have theirs)."""
        return self.config.force_cpu or (not self.config.remote_gpus and not nvidia_smi.gpu_present())

    def _check_package(self, source: Path) -> Path:
        """No link on the way to the package or inside it (checked again right before each load)."""
        try:
            return check_package(Path(source), package_roots(self.config.workspace, self.config.kernel_dirs))
        except KernelNotFound as e:
            raise KprofError(str(e)) from None

    def _guard(self, spec: ProfileSpec | CompareSpec | SweepSpec) -> None:
        """Right before a run, what a queued request was checked against is checked again: the
        output root is a real directory under the workspace (created without following links),
        the package or the command's script has no link on the way or inside. A file swapped for
        a link while the request waited is refused, not run."""
        out = self.config.out_root
        try:
            root = self.root_of(out)
            root.mkdir(parents=True, exist_ok=True)  # the operator's workspace may not exist yet
            safefs.make_dirs(root, out)
        except safefs.UnsafePath as e:
            raise KprofError(f"output directory: {e}") from None
        except OSError as e:
            raise KprofError(f"output directory {out}: {e.strerror or e}") from None
        req = spec.req
        if isinstance(req, ProfileRequest) and req.command:
            self._check_command_targets(list(req.command), self.confine(req.command_cwd or ".", "cwd"))
        else:
            self._check_package(Path(req.kernel_source))

    def _describe(self, source: Path) -> dict[str, Any]:
        self._check_package(source)
        mtime = max(
            (p.stat().st_mtime for p in ([source] if source.is_file() else source.rglob("*.py"))), default=0.0
        )
        key = (str(source), mtime)
        if key not in self._describe_cache:
            try:
                self._describe_cache[key] = runner.describe(source, pool=self.pool)
            except runner.WorkerError as e:
                raise KprofError(str(e)) from None
        return self._describe_cache[key]

    def resolve_kernel(self, kernel: str) -> Path:
        if not isinstance(kernel, str) or not kernel.strip():
            raise KprofError("kernel must be a non-empty name or path")
        try:
            return resolve(kernel.strip(), self.config.workspace, self.config.kernel_dirs)
        except KernelNotFound as e:
            raise KprofError(str(e)) from None

    def list_kernels(self) -> list[dict[str, Any]]:
        """Every available kernel package with versions, parameters (defaults, bounds) and stages."""
        out = []
        for name, path in available(self.config.kernel_dirs).items():
            try:
                out.append(self._describe(path))
            except KprofError as e:
                out.append({"name": name, "source": str(path), "error": str(e), "params": [], "versions": []})
        return out

    def describe_kernel(self, kernel: str) -> dict[str, Any]:
        return self._describe(self.resolve_kernel(kernel))

    # ------------------------------------------------------------------ validation
    @staticmethod
    def validate_params(desc: dict[str, Any], params: dict[str, Any] | None) -> dict[str, Any]:
        """Bounds and names checked in the server, before any process starts."""
        specs = {
            p["name"]: Param(
                p["name"],
                p["default"],
                p.get("min"),
                p.get("max"),
                tuple(p["choices"]) if p.get("choices") else None,
            )
            for p in desc["params"]
        }
        params = dict(params or {})
        unknown = sorted(set(params) - set(specs))
        valid = ", ".join(f"{n} {s.range_text()} (default {s.default})" for n, s in specs.items())
        if unknown:
            raise KprofError(
                f"unknown parameter(s) {safefs.clip(unknown)} for kernel {desc['name']!r}; valid: {valid}"
            )
        try:
            return {n: s.validate(params.get(n, s.default)) for n, s in specs.items()}
        except ParamError as e:
            raise KprofError(f"{e}. Parameters of {desc['name']!r}: {valid}") from None

    # ------------------------------------------------------------------ paths
    def root_of(self, p: Path) -> Path:
        """The trusted root ``p`` lies under: the workspace, or the operator's ``out_root``
        outside it. Below the root nothing is trusted: no link is ever followed there."""
        root = safefs.root_of(p, [self.config.workspace, self.config.out_root])
        if root is None:
            raise KprofError(f"{p} is outside the workspace")
        return root

    def confine(self, path: str, what: str) -> Path:
        """``path`` (relative to the workspace, or absolute) taken lexically under the workspace
        (or the out_root), with no symbolic link on any component: the path it names is the path
        that will be read, written or run. Refused with a reason otherwise; the message never
        says where a link points."""
        if not isinstance(path, str) or not path or "\x00" in path:
            raise KprofError(f"{what}: a non-empty path is required")
        ws = self.config.workspace
        root = safefs.root_of(path, [ws, self.config.out_root])
        if root is None:
            raise KprofError(
                f"{what}: {safefs.clip(path)} is outside the workspace {ws}; only paths under the "
                "workspace can be used (relative paths are taken from the workspace)"
            )
        parts = safefs.parts_under(root, path)
        p = Path(root, *parts)
        try:
            k = safefs.kind(root, p)
        except safefs.UnsafePath as e:
            raise KprofError(f"{what}: {e}") from None
        if k == "link":
            raise KprofError(
                f"{what}: {safefs.clip('/'.join(parts))} is a symbolic link: kprof reads, writes and runs "
                "only real files and directories under the workspace, never through a link"
            )
        return p

    def _profile_dir(self, path: str, what: str) -> Path:
        p = self.confine(path, what)
        root = self.root_of(p)
        try:
            k = safefs.kind(root, p)
            if k == "file" and p.name in ("params.json", "result.json", "report.md"):
                p, k = p.parent, "dir"
        except safefs.UnsafePath as e:
            raise KprofError(f"{what}: {e}") from None
        if k != "dir":
            raise KprofError(
                f"{what}: {safefs.clip(path)} is not a directory (give a profile_dir returned by "
                "profile_kernel)"
            )
        if p.name.endswith(".partial"):
            raise KprofError(f"{what}: {p} is an unfinished profile (the run failed or is still running)")
        return p

    def load_result(self, profile_dir: str, what: str = "profile_dir") -> ProfileResult:
        try:
            p = self._profile_dir(profile_dir, what)
            return store.load_result(p, what, root=self.root_of(p))
        except store.StoreError as e:
            raise KprofError(str(e)) from None

    def read_params(self, profile_dir: str) -> dict[str, Any]:
        try:
            p = self._profile_dir(profile_dir, "profile_dir")
            return store.read_params(p, root=self.root_of(p))
        except store.StoreError as e:
            raise KprofError(str(e)) from None

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
        )
        return self.execute(spec, on_progress, control)

    def check_noise(
        self, cases: list[tuple[str, str, dict]] | None = None, rounds: int = 8, clock_control: str = "base"
    ):
        """Validate a noise-floor measurement (:mod:`kprof_mcp.noise`): A/A event profiles of each
        case, alternating, on this machine's GPU (the floor is kept in this machine's cache)."""
        from . import noise

        if self.remote is not None:
            raise KprofError(
                "measure_noise runs on this machine's GPU and keeps the floor in its cache; on a cluster, "
                "run `kprof noise` on each worker's host (its profiles read the floor there)"
            )
        try:
            return noise.check(self, cases, rounds, clock_control)
        except noise.NoiseError as e:
            raise KprofError(str(e)) from None

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
    ) -> ProfileSpec:
        """Validate every argument of a profile (fast; nothing runs on the GPU) and return what
        :meth:`run_checked` needs. Every bad input raises :class:`KprofError` saying what is valid."""
        try:
            mode_obj = get_mode(mode)
        except ModeNotAvailable as e:
            raise KprofError(str(e)) from None
        _in_range("timeout_s", timeout_s, 1, 86400, "seconds")
        base = self.load_result(baseline, "baseline") if baseline else None
        if base is not None and not self.config.remote_gpus:
            from .analysis.fingerprint import refusal

            why = refusal(base, [] if self._target_cpu() else [g.get("name", "") for g in nvidia_smi.gpus()])
            if why:
                raise KprofError(f"baseline {safefs.clip(baseline)}: {why}")
        source = self.resolve_kernel(kernel)
        desc = self._describe(source)
        versions = [v["name"] for v in desc["versions"]]
        if version is None:
            version = versions[-1]
        if version not in versions:
            raise KprofError(
                f"kernel {desc['name']!r} has no version {safefs.clip(version)}; valid: {versions}"
            )
        checked = self.validate_params(desc, params)
        cpu = self._target_cpu()
        budget = self.config.budget_ms if self.config.budget_ms is not None else (3000.0 if cpu else 2000.0)
        if isinstance(ncu_launches, bool) or not isinstance(ncu_launches, int) or not 1 <= ncu_launches <= 20:
            raise KprofError(f"ncu_launches={safefs.clip(ncu_launches)}: give an integer from 1 to 20")
        if (
            isinstance(timeline_iters, bool)
            or not isinstance(timeline_iters, int)
            or not 1 <= timeline_iters <= 50
        ):
            raise KprofError(f"timeline_iters={safefs.clip(timeline_iters)}: give an integer from 1 to 50")
        if timeline_engine not in TIMELINE_ENGINES:
            raise KprofError(
                f"timeline_engine={safefs.clip(timeline_engine)}: 'auto' (Nsight Systems when a working "
                "one is found, else CUPTI via torch.profiler; default), 'nsys' (Nsight Systems or an "
                "error) or 'kineto' (torch.profiler)"
            )
        if clock_control not in ("base", "none"):
            raise KprofError(
                f"clock_control={safefs.clip(clock_control)}: 'base' (default: the SM clock locked for "
                "the run — ncu's base clock in annotation/ncu, the device's sustained clock in "
                "event/nsys — and reset after) or 'none' (clocks free, e.g. under MIG)"
            )
        try:
            extra = (
                {}
                if self.config.remote_gpus
                else mode_obj.preflight(
                    PreflightEnv(
                        cpu=cpu,
                        force_cpu=self.config.force_cpu,
                        gpus=nvidia_smi.gpus(),
                        clock_control=clock_control,
                        timeline_engine=timeline_engine,
                    )
                )
            )
        except ModeError as e:
            raise KprofError(str(e)) from None
        req = ProfileRequest(
            kernel=desc["name"],
            kernel_source=str(source),
            version=version,
            params=checked,
            mode=mode,
            out_root=str(self.config.out_root),
            budget_ms=budget,
            min_runs=3 if cpu else 30,
            force_cpu=self.config.force_cpu,
            ncu_launches=ncu_launches,
            clock_control=clock_control,
            timeline_iters=timeline_iters,
            timeline_engine=timeline_engine,
            **extra,
        )
        stages = next(v["stages"] for v in desc["versions"] if v["name"] == version)
        return ProfileSpec(
            req=req,
            base=base,
            source=source,
            cpu=cpu,
            stages=[st["name"] for st in stages],
            timeout=float(timeout_s or self.config.timeout_s),
            baseline=baseline,
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
    ) -> ProfileSpec:
        """Validate a ``profile_command`` request: an argument vector starting with ``python`` (a
        script under the workspace, or ``-m module``), a working directory under the workspace,
        include patterns, per-stage FLOP/byte models, limits. Nothing runs yet."""
        try:
            mode_obj = get_mode(mode)
        except ModeNotAvailable as e:
            raise KprofError(str(e)) from None
        if not isinstance(command, list):
            raise KprofError(
                "command must be a list of strings (an argument vector, never a shell string), e.g. "
                "[\"python\", \"train.py\", \"--steps\", \"5\"]"
            )
        workdir = self.confine(cwd or ".", "cwd")
        if safefs.kind(self.root_of(workdir), workdir) != "dir":
            raise KprofError(f"cwd: {safefs.clip(cwd or '.')} is not a directory under the workspace")
        self._check_command_targets(command, workdir)
        _in_range("timeout_s", timeout_s, 1, 86400, "seconds")
        include = list(include or [])
        if len(include) > 32 or not all(isinstance(p, str) and p and len(p) <= 200 for p in include):
            raise KprofError(
                "include: at most 32 non-empty range-name patterns (fnmatch: 'forward', 'layer*')"
            )
        models = {}
        for name, m in (stage_models or {}).items():
            if not isinstance(m, dict) or set(m) - {"flops", "bytes", "dtype", "tensor_cores"}:
                raise KprofError(
                    f"stage_models[{safefs.clip(name)}]: give {{\"flops\": N, \"bytes\": N, \"dtype\": "
                    "\"bfloat16\", \"tensor_cores\": true}} (FLOPs and bytes of one occurrence of the "
                    "range)"
                )
            for k in ("flops", "bytes"):
                v = m.get(k, 0)
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < 1e18:
                    raise KprofError(f"stage_models[{safefs.clip(name)}].{k}={safefs.clip(v)}: a number ≥ 0")
            models[str(name)] = dict(m)
        if isinstance(max_kernels, bool) or not isinstance(max_kernels, int) or not 1 <= max_kernels <= 5000:
            raise KprofError(f"max_kernels={safefs.clip(max_kernels)}: give an integer from 1 to 5000")
        if clock_control not in ("base", "none"):
            raise KprofError(f"clock_control={safefs.clip(clock_control)}: 'base' or 'none'")
        if timeline_engine not in TIMELINE_ENGINES:
            raise KprofError(f"timeline_engine={safefs.clip(timeline_engine)}: 'auto', 'nsys' or 'kineto'")
        if (
            isinstance(warmup_occurrences, bool)
            or not isinstance(warmup_occurrences, int)
            or not 0 <= warmup_occurrences <= 100
        ):
            raise KprofError(
                f"warmup_occurrences={safefs.clip(warmup_occurrences)}: an integer from 0 to 100"
            )
        cpu = self._target_cpu()
        try:
            extra = mode_obj.preflight(
                PreflightEnv(
                    cpu=cpu,
                    force_cpu=self.config.force_cpu,
                    gpus=nvidia_smi.gpus(),
                    clock_control=clock_control,
                    timeline_engine=timeline_engine,
                )
            )
        except ModeError as e:
            raise KprofError(str(e)) from None
        req = ProfileRequest(
            kernel="command",
            kernel_source=str(workdir),
            version="command",
            params={},
            mode=mode,
            out_root=str(self.config.out_root),
            force_cpu=self.config.force_cpu,
            clock_control=clock_control,
            timeline_engine=timeline_engine,
            command=list(command),
            command_cwd=str(workdir),
            include=include,
            stage_models=models,
            max_kernels=max_kernels,
            warmup_occurrences=warmup_occurrences,
            **extra,
        )
        return ProfileSpec(
            req=req,
            base=None,
            source=workdir,
            cpu=cpu,
            stages=[],
            timeout=float(timeout_s or self.config.timeout_s),
        )

    def _check_command_targets(self, command: list[str], workdir: Path) -> None:
        """What the command will run is workspace code: a script under the workspace, a module
        that resolves to a file under the working directory, or an allowed tool (pytest) whose
        path arguments stay in the workspace. No link on the way to any of them. Checked when the
        request comes and again right before it runs."""
        from .capture.recording import parse_argv

        try:
            kind, target, rest = parse_argv(command)
        except ValueError as e:
            raise KprofError(str(e)) from None
        if kind == "path":
            script = self.confine(target if Path(target).is_absolute() else str(workdir / target), "script")
            try:
                safefs.check_file(self.root_of(script), script)
            except safefs.UnsafePath as e:
                raise KprofError(f"script: {e} (paths are relative to cwd)") from None
            return
        module = self._workspace_module(target, workdir)
        if module is not None:
            return
        if not self.config.confine_modules:
            import importlib.util

            if importlib.util.find_spec(target.split(".")[0]) is None:
                raise KprofError(
                    f"module {safefs.clip(target)} not found: neither installed nor in cwd ({workdir})"
                )
            return
        if target not in ALLOWED_MODULES:
            raise KprofError(
                f"module {safefs.clip(target)}: python -m runs only a module under the working directory "
                f"(its file under the workspace, e.g. pkg/train.py for pkg.train) or one of "
                f"{sorted(ALLOWED_MODULES)}; for other code, write a script in the workspace that calls it"
            )
        self._check_tool_args(target, rest, workdir)

    def _workspace_module(self, target: str, workdir: Path) -> Path | None:
        """The file ``python -m target`` runs when it lies under the working directory (which is
        first on sys.path): ``a/b.py`` or ``a/b/__main__.py`` for ``a.b``; None when it is not there."""
        names = target.split(".")
        if not all(n.isidentifier() for n in names):
            raise KprofError(f"module {safefs.clip(target)} is not a dotted module name")
        base = workdir.joinpath(*names)
        root = self.root_of(workdir)
        for candidate in (base.with_name(names[-1] + ".py"), base / "__main__.py"):
            try:
                k = safefs.kind(root, candidate)
            except safefs.UnsafePath as e:
                raise KprofError(f"module {safefs.clip(target)}: {e}") from None
            if k == "link":
                raise KprofError(
                    f"module {safefs.clip(target)}: {candidate.relative_to(root)} is a symbolic link; "
                    "kprof runs only real files under the workspace"
                )
            if k == "file":
                return candidate
        top = workdir / names[0]
        if (
            safefs.kind(root, top) != "missing"
            or safefs.kind(root, top.with_name(names[0] + ".py")) != "missing"
        ):
            raise KprofError(
                f"module {safefs.clip(target)}: {names[0]} is in the working directory but "
                f"{'/'.join(names)}.py (or its __main__.py) is not"
            )
        return None

    def _check_tool_args(self, tool: str, args: list[str], workdir: Path) -> None:
        """An allowed tool's arguments may not reach outside the workspace: options that load code
        by name are refused, and every argument that names a path (absolute, ``~``, with ``/`` or
        ``..``; also after ``--opt=``) is confined like a script, relative to cwd."""
        for i, a in enumerate(args):
            why = _refused_option(tool, a, args[i + 1] if i + 1 < len(args) else "")
            if why:
                raise KprofError(f"{tool} option {safefs.clip(a)} is refused: {why}")
            value = a.partition("=")[2] if a.startswith("--") else "" if a.startswith("-") else a
            path = value.split("::")[0]
            if path.startswith("~"):
                raise KprofError(f"{tool} argument {safefs.clip(a)}: '~' paths are outside the workspace")
            if path.startswith("/") or "/" in path or path == "..":
                self.confine(path if Path(path).is_absolute() else str(workdir / path), f"{tool} argument")

    def run_checked(
        self,
        spec: ProfileSpec,
        on_progress: runner.ProgressFn | None = None,
        control: runner.RunControl | None = None,
    ) -> ProfileOutcome:
        """Run a validated profile (see :meth:`check_profile`) in child processes, holding the
        machine-wide lock of its device: two kprof processes (two servers, a server and the CLI)
        never profile on the same GPU at once."""
        control = self._control(control)
        try:
            with device_lock(lock_name(spec.cpu, control), control, on_progress):
                with self._clocks(spec.req.mode, spec.req.clock_control, spec.cpu, control) as clock:
                    return self._run_locked(spec, on_progress, control, clock)
        except Cancelled as e:
            raise KprofError(str(e)) from None

    @contextmanager
    def _clocks(
        self, mode: str, clock_control: str, cpu: bool, control: runner.RunControl | None
    ) -> Iterator[clocks.ClockState | None]:
        """The clock protocol (:mod:`kprof_mcp.clocks`) around a run that kprof times itself (event,
        nsys; compare and sweep time in event mode), taken under the GPU's lock; None otherwise."""
        if cpu or mode not in clocks.TIMING_MODES:
            yield None
            return
        gpu = control.gpu if control is not None and control.gpu is not None else nvidia_smi.smi_id(0)
        rows = nvidia_smi.gpus()
        name = next(
            (g.get("name") for g in rows if gpu in (g.get("index"), g.get("uuid"))),
            rows[0].get("name") if rows else None,
        )
        with clocks.hold(gpu, name, clock_control != "none") as state:
            yield state

    def _run_locked(
        self,
        spec: ProfileSpec,
        on_progress: runner.ProgressFn | None,
        control: runner.RunControl | None,
        clock: clocks.ClockState | None = None,
    ) -> ProfileOutcome:
        self._guard(spec)  # again under the lock: the request may have waited in the queue
        req, timeout, cpu = spec.req, spec.timeout, spec.cpu
        mode = get_mode(req.mode)
        gpus = nvidia_smi.gpus()
        prep_key = store.prepared_key(
            spec.source, req.version, req.params, gpus[0]["name"] if gpus else "cpu"
        )
        warm = control is not None and control.pool is not None
        prepare = mode.prepare_first and not req.command and (warm or not store.is_prepared(prep_key))
        prep_req = req.model_copy(update={"prepare_only": True, "mode": "event"}).model_dump_json()
        with tempfile.TemporaryDirectory(prefix="kprof-run-") as scratch:
            prep = None
            try:
                launch = (
                    mode.command_launch(req, Path(scratch))
                    if req.command
                    else mode.launch(req, spec.stages, Path(scratch))
                )
                if prepare and warm and launch.prefix:
                    # In a warm worker preparing is cheap (its JIT is cached), so it runs every time, while
                    # the profiled child starts under its profiler (imports, CUDA context) and waits for it
                    # before touching the GPU; the preparation's correctness check stands for the child's.
                    if on_progress:
                        on_progress(
                            0.01,
                            "compiling, autotuning and checking correctness outside the profiler, "
                            "while the profiler starts",
                        )
                    gate = Path(scratch) / "prepared.json"
                    req = req.model_copy(update={"wait_for": str(gate)})
                    prep = _Preparation(prep_req, timeout, control, gate)
                elif prepare:
                    # Compile and autotune without instrumentation first: under a profiler the
                    # autotuner's timings are distorted, and Triton would cache the config it picked there.
                    if on_progress:
                        on_progress(
                            0.01, "compiling, autotuning and checking correctness outside the profiler"
                        )
                    try:
                        done = runner.run_profile(prep_req, timeout, None, control=control)
                    except runner.WorkerError as e:
                        raise KprofError(str(e)) from None
                    store.mark_prepared(prep_key)
                    if done.get("warm_worker") and done.get("correctness"):
                        req = req.model_copy(update={"correctness_checked": done["correctness"]})
                try:
                    record = runner.run_profile(
                        req.model_dump_json(),
                        timeout,
                        on_progress,
                        prefix=launch.prefix,
                        control=control,
                        locks_clocks=launch.locks_clocks,
                        command="command" if req.command else "run",
                        fresh=bool(req.command),
                    )
                except runner.WorkerError as e:
                    if prep is not None:
                        prep.join()
                        if prep.error() is not None:  # the child only reported that preparation failed
                            raise KprofError(str(prep.error())) from None
                    explain = getattr(mode, "explain_failure", None)
                    raise KprofError(
                        explain(str(e), e.detail.get("log", "")) if explain else str(e)
                    ) from None
                if prep is not None:
                    prep.join()
                    if prep.error() is not None:
                        raise KprofError(str(prep.error()))
                    store.mark_prepared(prep_key)
                work_dir, final_dir = Path(record["work_dir"]), Path(record["profile_dir"])
                mode.after_run(req, record, launch, work_dir, on_progress, control, timeout)
            except ModeError as e:
                raise KprofError(str(e)) from None
        if not cpu and not launch.prefix and not req.command:
            store.mark_prepared(prep_key)  # compiled and autotuned without instrumentation
        try:
            result = store.load_result(work_dir, "profile")
            if req.command:  # what the command printed: the report keeps its tail
                result.command["output_tail"] = _output_tail(record.get("log", ""))
            if result.device.kind == "cuda":  # the between-profile spread measured on this GPU (kprof noise)
                from . import noise

                result.noise_floor = noise.floors(result.device.name, result)
            if clock is not None:
                result.device.clock_control = clock.note
                result.device.clocks_locked = clock.locked_mhz is not None
                result.device.sm_clock_lock_mhz = clock.locked_mhz
                if clock.locked_mhz is None:  # why, in place of the child's plain "not locked"
                    result.warnings = [
                        w
                        for w in result.warnings
                        if not (w.kind == "clocks" and w.message.startswith("clocks not locked by kprof"))
                    ]
                    result.warnings.append(ResultWarning(kind="clocks", message=clock.note))
            if req.command or clock is not None or result.noise_floor:
                store.write_result(work_dir, result)
            r = render_profile(result, spec.base, store.sibling_versions(result, final_dir))
            store.finish_profile(work_dir, final_dir, {"report.md": r.report, "contract.md": r.contract})
        except store.StoreError as e:
            raise KprofError(str(e)) from None
        except OSError as e:
            # Disk full (or any write error) while writing the reports: the directory keeps its
            # .partial name, so nothing half-written looks like a finished profile.
            raise KprofError(
                f"writing the profile's reports failed: {e.strerror or e} ({type(e).__name__}); the "
                f"incomplete artifacts are in {work_dir} (a *.partial directory, never read as a "
                "finished profile). Free disk space and profile again."
            ) from None
        return ProfileOutcome(
            result=result, assessment=r.assessment, contract=r.contract, profile_dir=final_dir
        )

    # ------------------------------------------------------------------ compare
    def _run_child(
        self,
        spec: CompareSpec | SweepSpec,
        command: str,
        on_progress: runner.ProgressFn | None,
        control: runner.RunControl | None,
        then: Any = None,
    ) -> tuple[Path, Path, Any]:
        """Run ``python -m kprof_mcp.child <command>`` on ``spec.req`` holding the device's lock,
        then ``then(control)`` (if given) under the same lock; return (work_dir, final_dir, what
        ``then`` returned)."""
        control = self._control(control)
        try:
            with device_lock(lock_name(spec.cpu, control), control, on_progress):
                self._guard(spec)  # again under the lock: the request may have waited in the queue
                # The timing child runs under the clock protocol; an Nsight comparison's arm profiles
                # (then) run after it, under Nsight Compute's own clock control.
                with self._clocks("event", getattr(spec, "clock_control", "base"), spec.cpu, control):
                    record = runner.run_profile(
                        spec.req.model_dump_json(),
                        spec.timeout,
                        on_progress,
                        control=control,
                        command=command,
                    )
                after = then(control) if then is not None else None
        except (Cancelled, runner.WorkerError) as e:
            raise KprofError(str(e)) from None
        return Path(record["work_dir"]), Path(record["profile_dir"]), after

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
        if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
            raise KprofError(
                f"versions={safefs.clip(versions)}: give a list of version names, the baseline first"
            )
        try:
            mode_obj = get_mode(mode)
        except ModeNotAvailable as e:
            raise KprofError(str(e)) from None
        if mode_obj.compare_role == "none":
            roles = sorted(n for n, m in MODES.items() if m.compare_role != "none")
            raise KprofError(
                f"mode={safefs.clip(mode)}: compare_versions runs in {roles} (event: the timing alone; "
                f"Nsight modes: the timing, then each version's counters side by side); profile each "
                f"version with profile_kernel(mode={safefs.clip(mode)}) instead"
            )
        source = self.resolve_kernel(kernel)
        desc = self._describe(source)
        known = [v["name"] for v in desc["versions"]]
        unknown = [v for v in versions if v not in known]
        if unknown:
            raise KprofError(
                f"kernel {desc['name']!r} has no version(s) {safefs.clip(unknown)}; valid: {known}"
            )
        if len(set(versions)) != len(versions) or not versions or len(versions) > 8:
            raise KprofError(
                f"versions={safefs.clip(versions)}: give 1 to 8 distinct versions, the baseline first"
            )
        _in_range("timeout_s", timeout_s, 1, 86400, "seconds")
        _in_range("budget_ms", budget_ms, 100, 60000, "milliseconds of timed GPU time")
        if isinstance(rounds, bool) or not isinstance(rounds, int) or not 3 <= rounds <= 200:
            raise KprofError(f"rounds={safefs.clip(rounds)}: give an integer from 3 to 200")
        arms = self._arms(desc, versions, params, param_sets)
        cpu = self._target_cpu()
        budget = budget_ms if budget_ms is not None else (1500.0 if cpu else 4000.0)
        timeout = float(timeout_s or self.config.timeout_s)
        req = CompareRequest(
            kernel=desc["name"],
            kernel_source=str(source),
            versions=list(versions),
            params=arms[0].params,
            arms=arms,
            mode=mode,
            out_root=str(self.config.out_root),
            budget_ms=float(budget),
            rounds=rounds,
            force_cpu=self.config.force_cpu,
        )
        arm_specs = (
            [self.check_profile(kernel, a.version, a.params, mode=mode, timeout_s=timeout) for a in arms]
            if mode_obj.compare_role == "counters"
            else []
        )
        return CompareSpec(
            req=req,
            cpu=cpu,
            timeout=timeout,
            arm_specs=arm_specs,
            clock_control=_clock_control(clock_control),
        )

    def _arms(
        self,
        desc: dict[str, Any],
        versions: list[str],
        params: dict[str, Any] | None,
        param_sets: list[dict[str, Any]] | None,
    ) -> list[CompareArm]:
        """Every (version, parameter set) to compare, the baseline (first version at the first
        set) first, labelled by version and, where sets differ, by the parameters that differ."""
        if param_sets is None:
            if len(versions) < 2:
                raise KprofError(
                    f"versions={safefs.clip(versions)}: give 2 to 8 versions, the baseline first, or one "
                    "version with param_sets (2 to 8 parameter sets). To check the noise floor, compare "
                    "a version with its copy under another name."
                )
            checked = self.validate_params(desc, params)
            return [CompareArm(label=v, version=v, params=checked) for v in versions]
        if (
            not isinstance(param_sets, list)
            or not 2 <= len(param_sets) <= 8
            or not all(isinstance(p, dict) for p in param_sets)
        ):
            raise KprofError(
                f"param_sets={safefs.clip(param_sets)}: give a list of 2 to 8 parameter dicts, each "
                "applied on top of params, the baseline's first, e.g. [{'K': 4096}, {'K': 4095}]"
            )
        sets = [self.validate_params(desc, {**(params or {}), **p}) for p in param_sets]
        if len({repr(sorted(s.items())) for s in sets}) != len(sets):
            raise KprofError(
                f"param_sets={safefs.clip(param_sets)}: two of them are the same after defaults are "
                "filled in; give distinct parameter sets"
            )
        if len(versions) * len(sets) > 8:
            raise KprofError(
                f"{len(versions)} versions × {len(sets)} parameter sets = {len(versions) * len(sets)} "
                "arms; compare at most 8 at once"
            )
        differ = [k for k in sets[0] if len({repr(s[k]) for s in sets}) > 1]
        return [
            CompareArm(label=f"{v} [{', '.join(f'{k}={s[k]}' for k in differ)}]", version=v, params=s)
            for s in sets
            for v in versions
        ]

    def run_compare(
        self,
        spec: CompareSpec,
        on_progress: runner.ProgressFn | None = None,
        control: runner.RunControl | None = None,
    ) -> CompareOutcome:
        """Run a validated comparison in a child, holding the device's lock; in an Nsight mode
        then profile every arm under the same lock and put its counters beside the others';
        write compare.md."""
        from .analysis.compare import counter_table
        from .render.compare import render_compare

        n = len(spec.arm_specs)
        timing_share = 1.0 if not n else 0.3

        def timing_progress(f: float, msg: str) -> None:
            if on_progress:
                on_progress(timing_share * f, msg)

        def profile_arms(control: runner.RunControl) -> list[ProfileOutcome]:
            outs = []
            for i, (arm, arm_spec) in enumerate(zip(spec.req.arms, spec.arm_specs)):

                def arm_progress(f: float, msg: str, i=i, label=arm.label) -> None:
                    if on_progress:
                        on_progress(
                            timing_share + (1 - timing_share) * (i + f) / n,
                            f"{label} ({spec.req.mode}): {msg}",
                        )

                try:
                    outs.append(self._run_locked(arm_spec, arm_progress, control))
                except KprofError as e:
                    raise KprofError(
                        f"the timing comparison finished, but profiling {arm.label} in mode "
                        f"{spec.req.mode!r} failed: {e}"
                    ) from None
            return outs

        work_dir, final_dir, outs = self._run_child(
            spec, "compare", timing_progress, control, then=profile_arms if n else None
        )
        try:
            result = CompareResult.model_validate_json((work_dir / "compare.json").read_text())
            if outs:
                result = result.model_copy(
                    update={
                        "counter_mode": spec.req.mode,
                        "counters": counter_table([o.result for o in outs]),
                        "profiles": {a.label: str(o.profile_dir) for a, o in zip(spec.req.arms, outs)},
                    }
                )
                (work_dir / "compare.json").write_text(result.model_dump_json(indent=2))
            md = render_compare(result)
            store.finish_profile(work_dir, final_dir, {"compare.md": md})
        except (OSError, ValueError) as e:
            raise KprofError(f"writing the comparison failed: {e} (artifacts in {work_dir})") from None
        return CompareOutcome(result=result, markdown=md, compare_dir=final_dir)

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
        source = self.resolve_kernel(kernel)
        desc = self._describe(source)
        known = [v["name"] for v in desc["versions"]]
        versions = versions or [known[-1]]
        if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
            raise KprofError(f"versions={safefs.clip(versions)}: give a list of version names")
        unknown = [v for v in versions if v not in known]
        if unknown or not 1 <= len(versions) <= 4 or len(set(versions)) != len(versions):
            raise KprofError(f"versions={safefs.clip(versions)}: give 1 to 4 distinct versions of {known}")
        pnames = [p["name"] for p in desc["params"]]
        if param not in pnames:
            raise KprofError(
                f"kernel {desc['name']!r} has no parameter {safefs.clip(param)}; valid: {pnames}"
            )
        if not isinstance(values, list) or not 1 <= len(values) <= 32:
            raise KprofError(f"values={safefs.clip(values)}: give a list of 1 to 32 values of {param!r}")
        if params and param in params:
            raise KprofError(
                f"{param!r} is the swept parameter: give its values in `values`, not in `params`"
            )
        for v in values:  # each point's bounds, before anything runs
            self.validate_params(desc, {**(params or {}), param: v})
        base = self.validate_params(desc, params)
        base.pop(param, None)
        _in_range("timeout_s", timeout_s, 1, 86400, "seconds")
        _in_range("budget_ms", budget_ms, 20, 10000, "milliseconds per stage and point")
        cpu = self._target_cpu()
        req = SweepRequest(
            kernel=desc["name"],
            kernel_source=str(source),
            versions=list(versions),
            param=param,
            values=list(values),
            params=base,
            out_root=str(self.config.out_root),
            budget_ms=float(budget_ms or (200.0 if cpu else 300.0)),
            force_cpu=self.config.force_cpu,
        )
        return SweepSpec(
            req=req,
            cpu=cpu,
            timeout=float(timeout_s or self.config.timeout_s),
            clock_control=_clock_control(clock_control),
        )

    def run_sweep(
        self,
        spec: SweepSpec,
        on_progress: runner.ProgressFn | None = None,
        control: runner.RunControl | None = None,
    ) -> SweepOutcome:
        """Run a validated sweep in a child, holding the device's lock; write sweep.md/.csv/.png."""
        import pandas as pd

        from .analysis.sweep import sweep_rows
        from .render.plots import plot_sweep
        from .render.sweep import render_sweep

        work_dir, final_dir, _ = self._run_child(spec, "sweep", on_progress, control)
        try:
            result = SweepResult.model_validate_json((work_dir / "sweep.json").read_text())
            rows = sweep_rows(result)
            pd.DataFrame(rows).to_csv(work_dir / "sweep.csv", index=False)
            png = None
            try:
                plot_sweep(
                    rows,
                    result.param,
                    work_dir / "sweep.png",
                    f"{result.kernel}: {', '.join(result.versions)} over {result.param} ({result.device.name})",
                )
                png = (work_dir / "sweep.png").read_bytes()
            except Exception as e:  # noqa: BLE001 — a plotting failure must not lose the table
                from .models import ResultWarning

                result.warnings.append(ResultWarning(kind="artifact", message=f"sweep.png not written: {e}"))
            md = render_sweep(result, rows)
            store.finish_profile(work_dir, final_dir, {"sweep.md": md})
        except (OSError, ValueError) as e:
            raise KprofError(f"writing the sweep failed: {e} (artifacts in {work_dir})") from None
        return SweepOutcome(result=result, rows=rows, markdown=md, png=png, sweep_dir=final_dir)

    # ------------------------------------------------------------------ analysis
    @staticmethod
    def classify(
        tc_pct: float | None,
        dram_pct: float | None,
        occupancy_pct: float | None = None,
        l2_hit_pct: float | None = None,
        local_spill_bytes: float | None = None,
        waves_per_sm: float | None = None,
        compute_pct: float | None = None,
        dram_bytes_over_model: float | None = None,
        duration_us: float | None = None,
        sol_us: float | None = None,
        grid_blocks: int | None = None,
        sm_count: int | None = None,
        local_bytes_share_pct: float | None = None,
        accounting: dict[str, float] | None = None,
        tensor_work: bool = False,
        flops: float | None = None,
        dtype: str | None = None,
        tensor_peak_tflops: float | None = None,
    ) -> Diagnosis:
        """SPEC.md's classification and the ranked opportunities the given metrics support, with
        the same time model as a profile (:func:`kprof_mcp.analysis.diagnosis.opportunities`):
        given the measured duration and the speed-of-light time, no estimate exceeds
        duration/sol − 1; without them each cause is credited at most 95 % of the time."""
        for name, v, hi in (
            ("tc_pct", tc_pct, 100),
            ("dram_pct", dram_pct, 100),
            ("occupancy_pct", occupancy_pct, 100),
            ("l2_hit_pct", l2_hit_pct, 100),
            ("compute_pct", compute_pct, 100),
        ):
            if v is not None and not (0 <= v <= hi * 1.05):  # counters can read a little over 100
                raise KprofError(f"{name}={v} is outside 0..{hi} (percent of peak)")
        if local_spill_bytes is not None and local_spill_bytes < 0:
            raise KprofError(f"local_spill_bytes={local_spill_bytes} must be >= 0")
        if waves_per_sm is not None and waves_per_sm < 0:
            raise KprofError(f"waves_per_sm={waves_per_sm} must be >= 0")
        if dram_bytes_over_model is not None and not 0 <= dram_bytes_over_model < 1e6:
            raise KprofError(f"dram_bytes_over_model={dram_bytes_over_model} must be a ratio >= 0")
        for name, v in (("duration_us", duration_us), ("sol_us", sol_us)):
            if v is not None and not v > 0:
                raise KprofError(f"{name}={v} must be > 0 microseconds")
        if (duration_us is None) != (sol_us is None):
            raise KprofError(
                "give duration_us and sol_us together (the measured time and the speed-of-light time "
                "max(FLOPs / peak FLOP/s, bytes / peak bytes/s)), or neither"
            )
        for name, v in (("grid_blocks", grid_blocks), ("sm_count", sm_count)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise KprofError(f"{name}={safefs.clip(v)} must be a positive integer")
        if local_bytes_share_pct is not None and not 0 <= local_bytes_share_pct <= 100:
            raise KprofError(f"local_bytes_share_pct={local_bytes_share_pct} is outside 0..100")
        evidence = Engine._classify_evidence(
            accounting, tensor_work, flops, dtype, tensor_peak_tflops, tc_pct
        )
        m = dx.Metrics(
            tc_pct=tc_pct,
            dram_pct=dram_pct,
            occupancy_pct=occupancy_pct,
            l2_hit_pct=l2_hit_pct,
            local_spill_bytes=local_spill_bytes,
            waves_per_sm=waves_per_sm,
            compute_pct=compute_pct,
            over_fetch_ratio=dram_bytes_over_model,
            time_ns=duration_us * 1e3 if duration_us else None,
            sol_ns=sol_us * 1e3 if sol_us else None,
            grid_blocks=grid_blocks,
            sm_count=sm_count,
            local_share=local_bytes_share_pct / 100.0 if local_bytes_share_pct is not None else None,
            **evidence,
        )
        return Diagnosis.from_analysis(dx.diagnose(m))

    @staticmethod
    def _classify_evidence(
        accounting: dict[str, float] | None,
        tensor_work: bool,
        flops: float | None,
        dtype: str | None,
        tensor_peak_tflops: float | None,
        tc_pct: float | None,
    ) -> dict[str, Any]:
        """The accounting evidence ``classify`` was given, checked: the keys of a profile's
        ``accounting`` (kprof_mcp.parsers.ncu.ACCOUNTING), finite numbers ≥ 0."""
        import math

        from .analysis.accounting import account
        from .analysis.assessment import _ELEM_BYTES
        from .parsers.ncu import ACCOUNTING

        if not accounting:
            return {}
        if not isinstance(accounting, dict):
            raise KprofError(
                "accounting: give a profile's accounting, {\"stall_long_scoreboard\": 3.1, "
                "\"pipe_fma_pct\": 67.6, ...}"
            )
        unknown = sorted(set(accounting) - set(ACCOUNTING))
        if unknown:
            raise KprofError(
                f"accounting: unknown key(s) {safefs.clip(unknown)}; valid: {safefs.clip(sorted(ACCOUNTING), 2000)}"
            )
        for k, v in accounting.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise KprofError(f"accounting[{k!r}]={safefs.clip(v)} must be a finite number >= 0")
        if dtype is not None and dtype not in _ELEM_BYTES:
            raise KprofError(f"dtype={safefs.clip(dtype)}: one of {sorted(_ELEM_BYTES)}")
        for name, v in (("flops", flops), ("tensor_peak_tflops", tensor_peak_tflops)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1e21):
                raise KprofError(f"{name}={safefs.clip(v)} must be a positive number")
        return dict(
            accounting=account({k: float(v) for k, v in accounting.items()}, tc_pct),
            tensor_work=bool(tensor_work),
            flops=flops,
            elem_bytes=_ELEM_BYTES.get(dtype or ""),
            tensor_peak_flops_per_s=tensor_peak_tflops * 1e12 if tensor_peak_tflops else None,
        )

    # ------------------------------------------------------------------ devlog
    def update_devlog(
        self,
        kernel: str,
        profile_dir: str,
        issues: list[str] | None = None,
        insights: list[str] | None = None,
    ) -> tuple[Path, str]:
        """Append SPEC.md's devlog template to ``docs/kernels/<kernel>.md`` under a file lock."""
        if not isinstance(kernel, str) or not NAME_RE.match(kernel):
            raise KprofError(
                f"kernel {safefs.clip(kernel)} must be a plain name ({NAME_RE.pattern}): it names the file "
                "docs/kernels/<kernel>.md"
            )
        result = self.load_result(profile_dir)
        if result.kernel != kernel:
            raise KprofError(f"profile_dir holds a profile of {result.kernel!r}, not {kernel!r}")
        for label, items in (("issues", issues), ("insights", insights)):
            for it in items or []:
                if not isinstance(it, str) or len(it) > 2000:
                    raise KprofError(f"{label}: each entry must be a string of at most 2000 characters")
        ws = self.config.workspace
        path = ws / "docs" / "kernels" / f"{kernel}.md"
        try:
            ref = str(self._profile_dir(profile_dir, "profile_dir").relative_to(ws))
        except (ValueError, KprofError):
            ref = str(result.profile_dir)
        a = assess(result)

        def entry_for(text: str) -> str:
            return render_devlog_entry(
                result,
                last_devlog_metrics(text, result),
                [i.strip() for i in issues or []],
                [i.strip() for i in insights or []],
                ref,
                assessment=a,
            )

        try:
            entry = store.append_devlog(ws, path, f"# {kernel} — development log\n\n", entry_for)
        except store.StoreError as e:
            raise KprofError(str(e)) from None
        return path, entry

    # ------------------------------------------------------------------ device
    def device_info(self) -> dict[str, Any]:
        """The active device (via nvidia-smi, no torch import), its table peaks, clocks and profilers."""
        gpus = nvidia_smi.gpus()
        info: dict[str, Any] = {"gpus": gpus, "force_cpu": self.config.force_cpu}
        if gpus and not self.config.force_cpu:
            g = gpus[0]
            spec, note = try_match_device(g["name"])
            info["active"] = g
            info["spec"] = (
                None
                if spec is None
                else {
                    "key": spec.key,
                    "name": spec.name,
                    "sm_count": spec.sm_count,
                    "l2_bytes": spec.l2_bytes,
                    "peak_gbps": spec.peak_gbps,
                    "peak_tflops": spec.peak_tflops,
                    "source": spec.source,
                    "ridge_flop_per_byte": {
                        k: round(v * 1e12 / (spec.peak_gbps * 1e9), 1) for k, v in spec.peak_tflops.items()
                    },
                }
            )
            info["spec_note"] = note
            info["timing"] = "CUDA events on the GPU"
        else:
            info["active"] = None
            info["spec"] = None
            info["spec_note"] = (
                "no NVIDIA GPU visible (nvidia-smi absent or lists none)" if not gpus else "KPROF_FORCE_CPU=1"
            )
            info["timing"] = "CPU wall clock (Triton interpreter / torch CPU); no GPU roofline"
        info["clock_control"] = (
            "clock_control='base' (default) locks the SM clock for every run: event, nsys, "
            "compare and sweep at the device's sustained clock (devices.json sustained_sm_mhz, "
            "nvidia-smi -lgc; reset after), annotation/ncu by Nsight Compute (--clock-control "
            "base). 'none' leaves clocks free. Readings are recorded in params.json."
        )
        if self.clock_recovery:
            info["clock_recovery"] = self.clock_recovery
        info["profilers"] = _profilers()
        info["modes"] = {m.name: m.describe() for m in MODES.values()}
        info["known_devices"] = [d.name for d in load_devices()]
        info["warm_workers"] = (
            self.pool.status()
            if self.pool is not None
            else "off: every profile starts fresh processes (KPROF_WARM=0, or the CLI)"
        )
        return info


def _profilers() -> dict[str, Any]:
    ncu = ncu_tool.find_ncu()
    nsys = nsys_tool.check_nsys()
    return {
        "cupti": {
            "usable": nvidia_smi.gpu_present(),
            "used_by": ["event", "nsys"],
            "note": "event mode's kernel times (torch.profiler), CUDA events beside them",
        },
        "ncu": {
            "path": str(ncu) if ncu else None,
            "usable_by_kprof": ncu is not None,
            "used_by": ["annotation", "ncu"],
            "note": "set KPROF_NCU to choose an installation; counters need root or "
            "NVreg_RestrictProfilingToAdminUsers=0",
        },
        "nsys": {
            "path": str(nsys.path) if nsys.path else None,
            "version": nsys.version,
            "usable_by_kprof": nsys.usable,
            "used_by": ["nsys"],
            "problem": nsys.problem,
            "note": "mode 'nsys' records with Nsight Systems when it is usable (set KPROF_NSYS to choose one), "
            "else with CUPTI via torch.profiler, and its report says which",
        },
    }

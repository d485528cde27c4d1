"""The engine: every capability of kprof-mcp as plain Python, with no MCP in it.

The MCP server (``server.py``) and the CLI (``cli.py``) are thin layers over
:class:`Engine`. Expected failures raise :class:`KprofError` with a message that says what
is wrong and what is valid; the layers above turn it into a tool error or an exit code.

Nothing here imports torch or triton: kernels are loaded and run in child processes.
"""

from __future__ import annotations

import contextlib
import json
import os

import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import analysis, render, runner
from . import ncu as ncu_lib
from .devices import load_devices, try_match_device
from .kernel_api import NAME_RE, ParamError, Param
from .models import Diagnosis, ProfileRequest, ProfileResult
from .modes import DEFAULT_MODE, MODES, NSIGHT_MODES, ModeNotAvailable, get_mode
from .registry import KernelNotFound, available, resolve


class KprofError(Exception):
    """An expected failure; the message is written for the caller to act on."""


@dataclass
class Config:
    workspace: Path = field(default_factory=lambda: Path(os.environ.get("KPROF_WORKSPACE", os.getcwd())))
    out_root: Path | None = None  # default: <workspace>/out/profiles
    kernel_dirs: list[Path] = field(default_factory=lambda: [
        Path(p) for p in os.environ.get("KPROF_KERNEL_PATH", "").split(os.pathsep) if p])
    timeout_s: float = float(os.environ.get("KPROF_TIMEOUT_S", "900"))
    # profile_kernel answers within this many seconds: the contract if done, else a job id
    # (clients commonly give up on a call after 60 s).
    wait_s: float = float(os.environ.get("KPROF_WAIT_S", "45"))
    gpus: list[str] | None = None  # GPU indices jobs may use (default: all visible)
    budget_ms: float | None = None  # per-stage timing budget; default by device kind
    force_cpu: bool = os.environ.get("KPROF_FORCE_CPU") == "1"

    @classmethod
    def from_options(cls, workspace: str | None = None, kernel_dirs: list[str] | None = None,
                     timeout_s: float | None = None, force_cpu: bool = False, wait_s: float | None = None,
                     gpus: list[str] | None = None) -> "Config":
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
        self.out_root = Path(self.out_root).resolve() if self.out_root else self.workspace / "out" / "profiles"
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


@dataclass
class ProfileOutcome:
    result: ProfileResult
    contract: str
    profile_dir: Path


class Engine:
    def __init__(self, config: Config | None = None):
        self.config = config or Config()
        self._describe_cache: dict[tuple[str, float], dict[str, Any]] = {}
        self._ncu_cache: dict[str, dict[str, Any]] = {}

    # ------------------------------------------------------------------ kernels
    def _describe(self, source: Path) -> dict[str, Any]:
        mtime = max((p.stat().st_mtime for p in ([source] if source.is_file() else source.rglob("*.py"))),
                    default=0.0)
        key = (str(source), mtime)
        if key not in self._describe_cache:
            try:
                self._describe_cache[key] = runner.describe(source)
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
        specs = {p["name"]: Param(p["name"], p["default"], p.get("min"), p.get("max"),
                                  tuple(p["choices"]) if p.get("choices") else None) for p in desc["params"]}
        params = dict(params or {})
        unknown = sorted(set(params) - set(specs))
        valid = ", ".join(f"{n} {s.range_text()} (default {s.default})" for n, s in specs.items())
        if unknown:
            raise KprofError(f"unknown parameter(s) {unknown} for kernel {desc['name']!r}; valid: {valid}")
        try:
            return {n: s.validate(params.get(n, s.default)) for n, s in specs.items()}
        except ParamError as e:
            raise KprofError(f"{e}. Parameters of {desc['name']!r}: {valid}") from None

    # ------------------------------------------------------------------ paths
    def confine(self, path: str, what: str) -> Path:
        """Resolve ``path`` (relative to the workspace; symlinks followed) and refuse escapes."""
        if not isinstance(path, str) or not path or "\x00" in path:
            raise KprofError(f"{what}: a non-empty path is required")
        raw = Path(path)
        p = (raw if raw.is_absolute() else self.config.workspace / raw).resolve()
        roots = [self.config.workspace, self.config.out_root]
        if not any(p == r or r in p.parents for r in roots):
            raise KprofError(f"{what}: {path!r} resolves to {p}, outside the workspace {self.config.workspace}; "
                             "only profile directories under the workspace can be read")
        return p

    def _profile_dir(self, path: str, what: str) -> Path:
        p = self.confine(path, what)
        if p.is_file() and p.name in ("params.json", "result.json", "report.md"):
            p = p.parent
        if not p.is_dir():
            raise KprofError(f"{what}: {path!r} is not a directory (give a profile_dir returned by profile_kernel)")
        if p.name.endswith(".partial"):
            raise KprofError(f"{what}: {p} is an unfinished profile (the run failed or is still running)")
        return p

    def load_result(self, profile_dir: str, what: str = "profile_dir") -> ProfileResult:
        p = self._profile_dir(profile_dir, what)
        f = p / "result.json"
        if not f.is_file():
            raise KprofError(f"{what}: {p} has no result.json: it is not a complete kprof profile directory")
        try:
            return ProfileResult.model_validate_json(f.read_text())
        except ValueError as e:
            raise KprofError(f"{what}: {f} is corrupt or from an incompatible version: {str(e)[:300]}") from None

    def read_params(self, profile_dir: str) -> dict[str, Any]:
        p = self._profile_dir(profile_dir, "profile_dir")
        f = p / "params.json"
        if not f.is_file():
            raise KprofError(f"profile_dir: {p} has no params.json")
        try:
            return json.loads(f.read_text())
        except json.JSONDecodeError as e:
            raise KprofError(f"profile_dir: {f} is not valid JSON ({e})") from None

    # ------------------------------------------------------------------ profile
    def profile(self, kernel: str, version: str | None = None, params: dict[str, Any] | None = None,
                mode: str = DEFAULT_MODE, baseline: str | None = None, on_progress: runner.ProgressFn | None = None,
                timeout_s: float | None = None, ncu_launches: int = 1, clock_control: str = "base",
                timeline_iters: int = 5, control: runner.RunControl | None = None) -> ProfileOutcome:
        """Check correctness, then measure every stage in ``mode``; write the artifacts; return
        the contract.

        event: CUDA-event timing. annotation: one Nsight Compute run with a small metric set
        (and the SpeedOfLight/LaunchStats/Occupancy rules). ncu: ``--set full`` with source-level
        SASS metrics. Only launches inside each stage's NVTX range are profiled.
        """
        spec = self.check_profile(kernel, version, params, mode, baseline, timeout_s, ncu_launches, clock_control,
                                  timeline_iters)
        return self.run_checked(spec, on_progress, control)

    def check_profile(self, kernel: str, version: str | None = None, params: dict[str, Any] | None = None,
                      mode: str = DEFAULT_MODE, baseline: str | None = None, timeout_s: float | None = None,
                      ncu_launches: int = 1, clock_control: str = "base", timeline_iters: int = 5) -> "ProfileSpec":
        """Validate every argument of a profile (fast; nothing runs on the GPU) and return what
        :meth:`run_checked` needs. Every bad input raises :class:`KprofError` saying what is valid."""
        try:
            get_mode(mode)
        except ModeNotAvailable as e:
            raise KprofError(str(e)) from None
        if timeout_s is not None and (isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float))
                                      or not 1 <= timeout_s <= 86400):
            raise KprofError(f"timeout_s={timeout_s!r}: give seconds from 1 to 86400")
        base = self.load_result(baseline, "baseline") if baseline else None
        source = self.resolve_kernel(kernel)
        desc = self._describe(source)
        versions = [v["name"] for v in desc["versions"]]
        if version is None:
            version = versions[-1]
        if version not in versions:
            raise KprofError(f"kernel {desc['name']!r} has no version {version!r}; valid: {versions}")
        checked = self.validate_params(desc, params)
        cpu = self.config.force_cpu or not _gpu_present()
        budget = self.config.budget_ms if self.config.budget_ms is not None else (3000.0 if cpu else 2000.0)
        if isinstance(ncu_launches, bool) or not isinstance(ncu_launches, int) or not 1 <= ncu_launches <= 20:
            raise KprofError(f"ncu_launches={ncu_launches!r}: give an integer from 1 to 20")
        if isinstance(timeline_iters, bool) or not isinstance(timeline_iters, int) or not 1 <= timeline_iters <= 50:
            raise KprofError(f"timeline_iters={timeline_iters!r}: give an integer from 1 to 50")
        if clock_control not in ("base", "none"):
            raise KprofError(f"clock_control={clock_control!r}: 'base' (ncu locks SM clocks to base; default) or "
                             "'none' (clocks free, e.g. under MIG)")
        nsight = mode in NSIGHT_MODES
        ncu_path = self._ncu_preflight(mode, cpu, clock_control) if nsight else None
        req = ProfileRequest(kernel=desc["name"], kernel_source=str(source), version=version, params=checked,
                             mode=mode, out_root=str(self.config.out_root), budget_ms=budget,
                             min_runs=3 if cpu else 30, force_cpu=self.config.force_cpu,
                             ncu_path=str(ncu_path) if ncu_path else None, ncu_launches=ncu_launches,
                             clock_control=clock_control, timeline_iters=timeline_iters)
        stages = next(v["stages"] for v in desc["versions"] if v["name"] == version)
        return ProfileSpec(req=req, base=base, source=source, cpu=cpu, stages=[st["name"] for st in stages],
                           timeout=float(timeout_s or self.config.timeout_s), baseline=baseline)

    def run_checked(self, spec: "ProfileSpec", on_progress: runner.ProgressFn | None = None,
                    control: runner.RunControl | None = None) -> ProfileOutcome:
        """Run a validated profile (see :meth:`check_profile`) in child processes, holding the
        machine-wide lock of its device: two kprof processes (two servers, a server and the CLI)
        never profile on the same GPU at once."""
        with device_lock(_lock_name(spec.cpu, control), control, on_progress):
            return self._run_locked(spec, on_progress, control)

    def _run_locked(self, spec: "ProfileSpec", on_progress: runner.ProgressFn | None,
                    control: runner.RunControl | None) -> ProfileOutcome:
        req, timeout, cpu = spec.req, spec.timeout, spec.cpu
        nsight = req.mode in NSIGHT_MODES
        prep_key = _prepared_key(spec.source, req.version, req.params)
        if nsight and not _prepared(prep_key):
            # Compile and autotune without instrumentation first: under ncu the autotuner's
            # timings are distorted, and Triton would cache the config it picked there.
            if on_progress:
                on_progress(0.01, "first Nsight profile of this source/params: compiling and autotuning outside ncu")
            try:
                runner.run_profile(req.model_copy(update={"prepare_only": True, "mode": "event"}).model_dump_json(),
                                   timeout, None, control=control)
            except runner.WorkerError as e:
                raise KprofError(str(e)) from None
            _mark_prepared(prep_key)
        if nsight:
            work_dir, final_dir = self._run_nsight(req, spec.stages, timeout, on_progress, control)
        else:
            try:
                record = runner.run_profile(req.model_dump_json(), timeout, on_progress, control=control)
            except runner.WorkerError as e:
                raise KprofError(str(e)) from None
            work_dir, final_dir = Path(record["work_dir"]), Path(record["profile_dir"])
            if not cpu:
                _mark_prepared(prep_key)  # compiled and autotuned without instrumentation
        try:
            return self._write_reports(req, spec.base, work_dir, final_dir)
        except OSError as e:
            # Disk full (or any write error) while writing the reports: the directory keeps its
            # .partial name, so nothing half-written looks like a finished profile.
            raise KprofError(f"writing the profile's reports failed: {e.strerror or e} ({type(e).__name__}); the "
                             f"incomplete artifacts are in {work_dir} (a *.partial directory, never read as a "
                             "finished profile). Free disk space and profile again.") from None

    def _write_reports(self, req: ProfileRequest, base: ProfileResult | None, work_dir: Path,
                       final_dir: Path) -> ProfileOutcome:
        result = ProfileResult.model_validate_json((work_dir / "result.json").read_text())
        if req.mode == "nsys":
            result.timeline["nsys"] = _nsys_note()
            (work_dir / "result.json").write_text(result.model_dump_json(indent=2))
        contract = render.render_contract(result, base)
        others = self._sibling_versions(result, final_dir)
        (work_dir / "report.md").write_text(render.render_report(result, base, others))
        (work_dir / "contract.md").write_text(contract)
        # Only a finished directory carries the final name: a crash leaves *.partial behind.
        work_dir.rename(final_dir)
        return ProfileOutcome(result=result, contract=contract, profile_dir=final_dir)

    def _sibling_versions(self, result: ProfileResult, final_dir: Path) -> list[ProfileResult]:
        """The latest finished profile of every *other* version of this kernel with the same
        parameters and mode: the report's comparison table across versions."""
        latest: dict[str, ProfileResult] = {}
        parent = final_dir.parent
        if not parent.is_dir():
            return []
        for d in sorted(parent.iterdir()):
            if d.name.endswith(".partial") or not (d / "result.json").is_file() or d == final_dir:
                continue
            try:
                r = ProfileResult.model_validate_json((d / "result.json").read_text())
            except ValueError:
                continue
            if r.version != result.version and r.params == result.params and r.mode == result.mode:
                latest[r.version] = r  # names sort by timestamp: the last one wins
        return [latest[v] for v in sorted(latest)]

    # ------------------------------------------------------------------ Nsight Compute
    def _ncu_preflight(self, mode: str, cpu: bool, clock_control: str) -> Path:
        """Fail before any process starts, saying how to fix it: no GPU, no ncu, MIG + clock lock."""
        if cpu:
            why = "KPROF_FORCE_CPU=1 is set" if self.config.force_cpu else "no NVIDIA GPU is visible (nvidia-smi)"
            raise KprofError(f"mode {mode!r} reads GPU performance counters with Nsight Compute, but {why}. "
                             "mode='event' works without a GPU (CPU timing through the Triton interpreter).")
        path = ncu_lib.find_ncu()
        if path is None:
            raise KprofError(ncu_lib.not_found_message())
        gpus = _nvidia_smi_gpus()
        if clock_control == "base" and gpus and gpus[0].get("mig.mode.current", "").lower() == "enabled":
            raise KprofError("this GPU is in MIG mode, where Nsight Compute cannot lock clocks "
                             "(--clock-control base): pass clock_control='none' (results then depend on boost "
                             "and thermals; the report says so), or profile on a GPU without MIG.")
        return path

    def _ncu_setup(self, path: Path) -> dict[str, Any]:
        key = str(path)
        if key not in self._ncu_cache:
            try:
                version = ncu_lib.ncu_version(path)
            except ncu_lib.NcuError as e:
                raise KprofError(str(e)) from None
            catalog = ncu_lib.metric_catalog(path, version)
            chosen, unknown = ncu_lib.resolve_metrics(catalog)
            self._ncu_cache[key] = {"version": version, "chosen": chosen, "unknown": unknown,
                                    "catalog": "ncu --query-metrics" if catalog else "none (query failed)"}
        return self._ncu_cache[key]

    def _run_nsight(self, req: ProfileRequest, stages: list[str], timeout: float,
                    on_progress: runner.ProgressFn | None,
                    control: runner.RunControl | None = None) -> tuple[Path, Path]:
        import tempfile

        assert req.ncu_path
        path = Path(req.ncu_path)
        setup = self._ncu_setup(path)
        with tempfile.TemporaryDirectory(prefix="kprof-ncu-") as tmp:
            base = Path(tmp) / "profile"
            try:
                cmd = ncu_lib.build_command(path, req.mode, stages, base, list(setup["chosen"].values()),
                                            req.clock_control, "all")
            except ValueError as e:
                raise KprofError(str(e)) from None
            t0 = time.perf_counter()
            try:
                record = runner.run_profile(req.model_dump_json(), timeout, on_progress, prefix=cmd, control=control,
                                            locks_clocks=req.clock_control == "base")
            except runner.WorkerError as e:
                raise KprofError(_ncu_hint(str(e), e.detail.get("log", ""))) from None
            wall = time.perf_counter() - t0
            work_dir, final_dir = Path(record["work_dir"]), Path(record["profile_dir"])
            report = base.with_suffix(".ncu-rep")
            if report.is_file():
                shutil.move(str(report), work_dir / "profile.ncu-rep")
        (work_dir / "ncu.log").write_text(record.get("log", ""))
        profiler = {
            "engine": "Nsight Compute", "ncu_version": setup["version"], "ncu_path": str(path),
            "command": [c if c != str(base) else "<profile_dir>/profile" for c in cmd[1:]],
            "clock_control": req.clock_control, "cache_control": "all", "replay_mode": "kernel",
            "nvtx_ranges": [ncu_lib.range_name(s) for s in stages], "launches_per_stage": req.ncu_launches,
            "metrics_chosen": setup["chosen"], "metrics_unknown": {k: list(v) for k, v in setup["unknown"].items()},
            "metric_catalog": setup["catalog"], "profiled_process_wall_s": round(wall, 3),
            "ncu_exit_code": record.get("returncode"),
            "nvidia_smi_before": (_nvidia_smi_gpus() or [{}])[0],
        }
        (work_dir / "profiler.json").write_text(json.dumps(profiler, indent=2, default=str))
        if on_progress:
            on_progress(0.93, "reading the Nsight Compute report")
        try:
            runner.finish(req.model_dump_json(), work_dir, record.get("log", ""), profiler, control=control)
        except runner.WorkerError as e:
            raise KprofError(f"{e} (partial artifacts kept in {work_dir})") from None
        return work_dir, final_dir

    # ------------------------------------------------------------------ analysis
    @staticmethod
    def classify(tc_pct: float | None, dram_pct: float | None, occupancy_pct: float | None = None,
                 l2_hit_pct: float | None = None, local_spill_bytes: float | None = None,
                 waves_per_sm: float | None = None, compute_pct: float | None = None,
                 dram_bytes_over_model: float | None = None) -> Diagnosis:
        for name, v, hi in (("tc_pct", tc_pct, 100), ("dram_pct", dram_pct, 100), ("occupancy_pct", occupancy_pct, 100),
                            ("l2_hit_pct", l2_hit_pct, 100), ("compute_pct", compute_pct, 100)):
            if v is not None and not (0 <= v <= hi * 1.05):  # counters can read a little over 100
                raise KprofError(f"{name}={v} is outside 0..{hi} (percent of peak)")
        if local_spill_bytes is not None and local_spill_bytes < 0:
            raise KprofError(f"local_spill_bytes={local_spill_bytes} must be >= 0")
        if waves_per_sm is not None and waves_per_sm < 0:
            raise KprofError(f"waves_per_sm={waves_per_sm} must be >= 0")
        if dram_bytes_over_model is not None and not 0 <= dram_bytes_over_model < 1e6:
            raise KprofError(f"dram_bytes_over_model={dram_bytes_over_model} must be a ratio >= 0")
        m = analysis.Metrics(tc_pct=tc_pct, dram_pct=dram_pct, occupancy_pct=occupancy_pct, l2_hit_pct=l2_hit_pct,
                             local_spill_bytes=local_spill_bytes, waves_per_sm=waves_per_sm, compute_pct=compute_pct,
                             over_fetch_ratio=dram_bytes_over_model)
        return Diagnosis.from_analysis(analysis.diagnose(m))

    # ------------------------------------------------------------------ devlog
    def update_devlog(self, kernel: str, profile_dir: str, issues: list[str] | None = None,
                      insights: list[str] | None = None) -> tuple[Path, str]:
        """Append SPEC.md's devlog template to ``docs/kernels/<kernel>.md`` under a file lock."""
        from filelock import FileLock

        if not isinstance(kernel, str) or not NAME_RE.match(kernel):
            raise KprofError(f"kernel {kernel!r} must be a plain name ({NAME_RE.pattern}): it names the file "
                             "docs/kernels/<kernel>.md")
        result = self.load_result(profile_dir)
        if result.kernel != kernel:
            raise KprofError(f"profile_dir holds a profile of {result.kernel!r}, not {kernel!r}")
        for label, items in (("issues", issues), ("insights", insights)):
            for it in items or []:
                if not isinstance(it, str) or len(it) > 2000:
                    raise KprofError(f"{label}: each entry must be a string of at most 2000 characters")
        log_dir = self.config.workspace / "docs" / "kernels"
        log_dir.mkdir(parents=True, exist_ok=True)
        path = (log_dir / f"{kernel}.md").resolve()
        if log_dir.resolve() not in path.parents:
            raise KprofError(f"devlog path {path} escapes {log_dir}")
        with FileLock(str(path) + ".lock", timeout=30):
            text = path.read_text() if path.exists() else f"# {kernel} — development log\n\n"
            previous = render.last_devlog_metrics(text, result)
            try:
                ref = str(Path(result.profile_dir or profile_dir).resolve().relative_to(self.config.workspace))
            except ValueError:
                ref = str(result.profile_dir)
            entry = render.render_devlog_entry(result, previous, [i.strip() for i in issues or []],
                                               [i.strip() for i in insights or []], ref)
            tmp = path.with_name(path.name + f".tmp{os.getpid()}")
            tmp.write_text(text.rstrip("\n") + "\n\n" + entry)
            os.replace(tmp, path)
        return path, entry

    # ------------------------------------------------------------------ device
    def device_info(self) -> dict[str, Any]:
        """The active device (via nvidia-smi, no torch import), its table peaks, clocks and profilers."""
        gpus = _nvidia_smi_gpus()
        info: dict[str, Any] = {"gpus": gpus, "force_cpu": self.config.force_cpu}
        if gpus and not self.config.force_cpu:
            g = gpus[0]
            spec, note = try_match_device(g["name"])
            info["active"] = g
            info["spec"] = None if spec is None else {
                "key": spec.key, "name": spec.name, "sm_count": spec.sm_count, "l2_bytes": spec.l2_bytes,
                "peak_gbps": spec.peak_gbps, "peak_tflops": spec.peak_tflops, "source": spec.source,
                "ridge_flop_per_byte": {k: round(v * 1e12 / (spec.peak_gbps * 1e9), 1)
                                        for k, v in spec.peak_tflops.items()}}
            info["spec_note"] = note
            info["timing"] = "CUDA events on the GPU"
        else:
            info["active"] = None
            info["spec"] = None
            info["spec_note"] = "no NVIDIA GPU visible (nvidia-smi absent or lists none)" if not gpus else "KPROF_FORCE_CPU=1"
            info["timing"] = "CPU wall clock (Triton interpreter / torch CPU); no GPU roofline"
        info["clock_control"] = ("event mode does not lock clocks; readings are recorded in params.json. "
                                 "The Nsight Compute modes lock to base clocks (ncu --clock-control base).")
        info["profilers"] = _profilers()
        info["modes"] = {m.name: {"built": m.built, "summary": m.summary, "needs": m.needs} for m in MODES.values()}
        info["known_devices"] = [d.name for d in load_devices()]
        return info


def _cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kprof-mcp"


def _lock_name(cpu: bool, control: runner.RunControl | None) -> str:
    if cpu:
        return "cpu"
    if control is not None and control.gpu is not None:
        return f"gpu-{control.gpu}"
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return f"gpu-{visible or '0'}"


@contextlib.contextmanager
def device_lock(name: str, control: runner.RunControl | None = None,
                on_progress: runner.ProgressFn | None = None):
    """Machine-wide lock of one device (a file lock under the cache directory). Waiting for it
    reports progress and stops when the job is cancelled."""
    from filelock import FileLock, Timeout

    d = Path(os.environ.get("KPROF_LOCK_DIR") or _cache_dir() / "locks")
    d.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(d / f"{name}.lock"))
    told = False
    while True:
        if control is not None and control.cancelled:
            raise KprofError("the profile was cancelled while waiting for the device")
        try:
            lock.acquire(timeout=0.5)
            break
        except Timeout:
            if not told and on_progress:
                on_progress(0.0, f"waiting for {name}: another kprof process is profiling on it")
                told = True
    try:
        yield
    finally:
        lock.release()


def _prepared_key(source: Path, version: str, params: dict[str, Any]) -> str:
    """Kernel source (every .py file of the package), version, parameters and GPU: what decides
    whether Triton's caches already hold this build and its autotuned config."""
    import hashlib

    h = hashlib.sha256()
    files = [source] if source.is_file() else sorted(source.rglob("*.py"))
    for f in files:
        h.update(str(f.relative_to(source.parent)).encode())
        h.update(f.read_bytes())
    gpus = _nvidia_smi_gpus()
    h.update(json.dumps([version, params, gpus[0]["name"] if gpus else "cpu"], sort_keys=True, default=str).encode())
    return h.hexdigest()


def _prepared(key: str) -> bool:
    f = _cache_dir() / "prepared.json"
    try:
        return key in json.loads(f.read_text())
    except (OSError, ValueError):
        return False


def _mark_prepared(key: str) -> None:
    from filelock import FileLock

    d = _cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        f = d / "prepared.json"
        with FileLock(str(f) + ".lock", timeout=10):
            try:
                keys = json.loads(f.read_text())
            except (OSError, ValueError):
                keys = {}
            keys[key] = time.time()
            if len(keys) > 5000:  # oldest first out
                keys = dict(sorted(keys.items(), key=lambda kv: kv[1])[-4000:])
            tmp = f.with_name(f"prepared.json.tmp{os.getpid()}")
            tmp.write_text(json.dumps(keys))
            os.replace(tmp, f)
    except OSError:
        pass  # the cache is an optimisation; without it every Nsight run prepares first


def _nsys_note() -> str:
    """Which timeline engine ran, and why not Nsight Systems."""
    nsys = _profilers()["nsys"]["path"]
    if not nsys:
        return "not installed; the timeline comes from CUPTI via torch.profiler"
    return (f"found at {nsys}, but kprof does not drive it yet (on the lent H100 its importer cannot turn a "
            ".qdstrm into a report); the timeline comes from CUPTI via torch.profiler")


def _ncu_hint(message: str, log: str) -> str:
    parsed = ncu_lib.parse_log(log)
    failure = ncu_lib.log_failure(parsed, log, report_exists=False)
    if failure is not None and failure.kind in ("counters_not_permitted", "clock_control"):
        return f"{failure} (the kernel run itself said: {message[:300]})"
    return message


def _gpu_present() -> bool:
    return bool(_nvidia_smi_gpus())


_SMI_CACHE: tuple[float, list[dict[str, Any]]] | None = None


def _nvidia_smi_gpus() -> list[dict[str, Any]]:
    global _SMI_CACHE
    if _SMI_CACHE and time.monotonic() - _SMI_CACHE[0] < 5:
        return _SMI_CACHE[1]
    exe = shutil.which("nvidia-smi")
    gpus: list[dict[str, Any]] = []
    if exe:
        fields = ["index", "name", "memory.total", "memory.used", "driver_version", "clocks.sm", "clocks.max.sm",
                  "clocks.mem", "clocks.max.mem", "temperature.gpu", "power.draw", "mig.mode.current"]
        try:
            out = subprocess.run([exe, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True, timeout=10).stdout
            for line in out.strip().splitlines():
                vals = [v.strip() for v in line.split(",")]
                if len(vals) == len(fields):
                    gpus.append(dict(zip(fields, vals)))
        except (subprocess.SubprocessError, OSError):
            gpus = []
    _SMI_CACHE = (time.monotonic(), gpus)
    return gpus


def _profilers() -> dict[str, Any]:
    def find(name: str, globs: list[str]) -> str | None:
        hit = shutil.which(name)
        if hit:
            return hit
        for g in globs:
            found = sorted(Path("/").glob(g.lstrip("/")))
            if found:
                return str(found[-1])
        return None

    ncu = find("ncu", ["/opt/nvidia/nsight-compute/*/ncu", "/usr/local/cuda/bin/ncu"])
    nsys = find("nsys", ["/opt/nvidia/nsight-systems/*/bin/nsys", "/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys"])
    return {
        "cuda_events": {"usable": _gpu_present(), "used_by": ["event"]},
        "ncu": {"path": str(ncu_lib.find_ncu() or ncu or "") or None, "usable_by_kprof": ncu_lib.find_ncu() is not None,
                "used_by": ["annotation", "ncu"],
                "note": "set KPROF_NCU to choose an installation; counters need root or "
                        "NVreg_RestrictProfilingToAdminUsers=0"},
        "nsys": {"path": nsys, "usable_by_kprof": False,
                 "note": "mode 'nsys' records its timeline with torch.profiler (CUPTI); Nsight Systems is not driven"},
    }



"""Running a checked profile: the device's lock, the clock protocol, the preparation run outside
the profiler, the profiled child, and the result's reports written once under the final name."""

from __future__ import annotations

import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from .. import clocks, removal, runner, safefs, store
from ..analysis.baseline import against
from ..locks import Cancelled, device_lock, lock_name
from ..models import OPTIONS_BY_MODE, EventOptions, ProfileRequest, ProfileResult, ResultWarning
from ..modes import ModeError, get_mode
from ..parsers.ncu import COUNTERS_HINT
from ..render import render_contract, render_report
from ..render.diagnosis import Assessment, assess
from ..tools import nvidia_smi
from .catalogue import checked_package, confine, root_of
from .command import check_command_targets, output_tail
from .config import KprofError
from .phases import Phases
from .plain import plain_pass
from .specs import CompareSpec, ProfileOutcome, ProfileSpec, SweepSpec, checked_dirs, with_clock
from .state import EngineState, with_workers

if TYPE_CHECKING:
    from ..modes.base import Launch, Mode


@dataclass(frozen=True)
class Rendered:
    assessment: Assessment
    contract: str
    report: str


def render_profile(
    result: ProfileResult,
    baseline: ProfileResult | None = None,
    others: list[ProfileResult] | None = None,
    allow_mismatch: bool = False,
    phases: Phases | None = None,
) -> Rendered:
    """Assess a result (and set it against its baseline) once; render its contract and report.md (with its
    mode's sections). ``allow_mismatch``: a baseline of other parameters, device or mode is compared
    (the differences heading the verdict) rather than refused. ``phases``: the analysis and the
    rendering booked there, the record so far put in ``result.timings`` before report.md is rendered."""
    a = assess(result)
    # once: its bootstrap is not free
    vs = against(result, baseline, allow_mismatch) if baseline is not None else None
    if phases is not None:
        phases.close("analysis")
        result.timings = {**result.timings, **phases.record()}
    mode_report = get_mode(result.mode).report(result, a, others or [])
    return Rendered(
        a,
        render_contract(result, baseline, assessment=a, vs=vs),
        render_report(result, baseline, assessment=a, mode=mode_report, vs=vs),
    )


def guard(engine: EngineState, spec: ProfileSpec | CompareSpec | SweepSpec) -> None:
    """Right before a run, what a queued request was checked against is checked again: the
    output root is a real directory under the workspace (created without following links),
    the package or the command's script has no link on the way or inside. A file swapped for
    a link while the request waited is refused, not run."""
    out = engine.config.out_root
    try:
        root = root_of(engine, out)
        root.mkdir(parents=True, exist_ok=True)  # the operator's workspace may not exist yet
        safefs.make_dirs(root, out)
    except safefs.UnsafePath as e:
        raise KprofError(f"output directory: {e}") from None
    except OSError as e:
        raise KprofError(f"output directory {out}: {e.strerror or e}") from None
    req = spec.req
    if isinstance(req, ProfileRequest) and req.command:
        check_command_targets(engine, list(req.command), confine(engine, req.command_cwd or ".", "cwd"))
    else:
        checked_package(engine, Path(req.kernel_source))


def run_checked(
    engine: EngineState,
    spec: ProfileSpec,
    on_progress: runner.ProgressFn | None = None,
    control: runner.RunControl | None = None,
) -> ProfileOutcome:
    """See :meth:`Engine.run_checked`. Where the wall time went is booked phase by phase
    (:class:`~kprof_mcp.engine.phases.Phases`, from the job's submission) into ``result.timings``."""
    control = with_workers(engine, control)
    received, created = getattr(control, "received", None), getattr(control, "created", None)
    phases = Phases(received if received is not None else created)
    if received is not None and created is not None:
        phases.close("request_checks", at=created)
    phases.close("queue_wait")
    try:
        with device_lock(lock_name(spec.cpu, control), control, on_progress):
            phases.close("device_lock_wait")
            try:
                with held_clocks(spec.req.mode, spec.req.clock_control, spec.cpu, control) as clock:
                    phases.close("clock_lock")
                    ran = _run_unfinished(engine, with_clock(spec, clock), on_progress, control, phases)
                    phases.close("mode_after_run")
                phases.close("clock_unlock")
                return _finish(*ran, clock, engine.config.render_profiles, None, phases)
            except CountersDenied as denied:  # still under the device's lock
                fallback = counters_fallback_spec(engine, spec, denied)
                if on_progress:
                    on_progress(
                        0.5,
                        "Nsight Compute cannot read the GPU performance counters (ERR_NVGPUCTRPERM): "
                        f"timing in mode {fallback.req.mode!r} (CUPTI) instead",
                    )
                phases.close("counters_denied_run")
                with held_clocks(
                    fallback.req.mode, fallback.req.clock_control, fallback.cpu, control
                ) as clock:
                    phases.close("clock_lock")
                    ran = _run_unfinished(engine, with_clock(fallback, clock), on_progress, control, phases)
                    phases.close("mode_after_run")
                phases.close("clock_unlock")
                return _finish(*ran, clock, engine.config.render_profiles, denied.record(spec.req), phases)
    except Cancelled as e:
        raise KprofError(str(e)) from None


class CountersDenied(Exception):
    """The mode's profiler could not read the GPU's performance counters (ERR_NVGPUCTRPERM) and
    the mode names a fallback (:attr:`Mode.counters_fallback`): :func:`run_checked` profiles again
    in it. ``log``: the profiler's output; ``failed_dir``: the failed run's directory, if any."""

    def __init__(self, message: str, log: str, failed_dir: Path | None = None):
        super().__init__(message)
        self.log, self.failed_dir = log, failed_dir

    def record(self, req: ProfileRequest) -> dict[str, Any]:
        """What ``result.profiler["counters_fallback"]`` keeps of the denied run."""
        errors = [ln.strip() for ln in self.log.splitlines() if ln.startswith("==ERROR==")]
        return {
            "requested_mode": req.mode,
            "counters": "denied (ERR_NVGPUCTRPERM)",
            "profiler_errors": errors[:5],
            "reason": str(self)[:600],
        }


def counters_fallback_spec(engine: EngineState, spec: ProfileSpec, denied: CountersDenied) -> ProfileSpec:
    """The same request in the mode's fallback (annotation: event), its options converted (the
    fallback mode's defaults, then what its preflight fills), the denied run's partial directory
    removed (its profiler's errors are kept in the fallback's ``result.profiler``)."""
    import dataclasses

    from ..modes import preflight_env

    name = get_mode(spec.req.mode).counters_fallback
    assert name is not None
    req = spec.req.model_copy(update={"options": OPTIONS_BY_MODE[name](mode=name)})
    try:
        req = req.with_options(
            **get_mode(name).preflight(
                preflight_env(req, spec.cpu, engine.config.force_cpu, nvidia_smi.gpus())
            )
        )
    except ModeError as e:
        raise KprofError(f"{denied} Falling back to mode {name!r} failed too: {e}") from None
    d = denied.failed_dir
    if d is not None and d.name.endswith(".partial") and d.is_dir() and not d.is_symlink():
        removal.remove_tree(d)  # iterative: a deep tree the job left raises no RecursionError
    return dataclasses.replace(spec, req=req)


def _clock_gpu(control: runner.RunControl | None) -> str:
    return control.gpu if control is not None and control.gpu is not None else nvidia_smi.smi_id(0)


@contextmanager
def held_clocks(
    mode: str, clock_control: str, cpu: bool, control: runner.RunControl | None
) -> Iterator[clocks.ClockState | None]:
    """The clock protocol (:mod:`kprof_mcp.clocks`) around a run that kprof times itself (event,
    nsys; compare and sweep time in event mode), taken under the GPU's lock; None otherwise. With
    warm workers (the server) the lock is kept between jobs (``clocks.hold(keep=True)``)."""
    if cpu or mode not in clocks.TIMING_MODES:
        if not cpu:  # another mode's profiler (Nsight Compute) controls clocks itself: no lock kept under it
            clocks.release_kept(_clock_gpu(control))
        yield None
        return
    gpu = _clock_gpu(control)
    rows = nvidia_smi.gpus()
    name = next(
        (g.get("name") for g in rows if gpu in (g.get("index"), g.get("uuid"))),
        rows[0].get("name") if rows else None,
    )
    keep = control is not None and control.pool is not None
    with clocks.hold(gpu, name, clock_control != "none", keep, lock_name(cpu, control)) as state:
        yield state


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
            said = {"ok": True, "correctness": record.correctness}
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


def run_locked(
    engine: EngineState,
    spec: ProfileSpec,
    on_progress: runner.ProgressFn | None,
    control: runner.RunControl | None,
    clock: clocks.ClockState | None = None,
    fallback: dict[str, Any] | None = None,
) -> ProfileOutcome:
    """Run a checked profile with the device's lock (and clocks) held: check the request again,
    prepare it outside the profiler where the mode asks for that, run the profiled child, let
    the mode complete the directory, then write the result and its reports. ``fallback``: this
    run stands in for one whose counters were denied (:class:`CountersDenied`)."""
    if not spec.cpu and get_mode(spec.req.mode).name not in clocks.TIMING_MODES:
        clocks.release_kept(_clock_gpu(control))  # its profiler controls the clocks
    phases = Phases()
    ran = _run_unfinished(engine, with_clock(spec, clock), on_progress, control, phases)
    phases.close("mode_after_run")
    return _finish(*ran, clock, engine.config.render_profiles, fallback, phases)


def _run_unfinished(
    engine: EngineState,
    spec: ProfileSpec,
    on_progress: runner.ProgressFn | None,
    control: runner.RunControl | None,
    phases: Phases,
) -> tuple[ProfileSpec, ProfileRequest, runner.Record, Path, Path]:
    """:func:`run_locked` up to the mode's ``after_run``; what :func:`_finish` takes."""
    guard(engine, spec)  # again under the lock: the request may have waited in the queue
    req = spec.req
    mode = get_mode(req.mode)
    gpus = nvidia_smi.gpus()
    prep_key = store.prepared_key(spec.source, req.version, req.params, gpus[0]["name"] if gpus else "cpu")
    warm = control is not None and control.pool is not None
    prepare = mode.prepare_first and not req.command and (warm or not store.is_prepared(prep_key))
    with tempfile.TemporaryDirectory(prefix="kprof-run-") as scratch:
        try:
            launch = (
                mode.command_launch(req, Path(scratch))
                if req.command
                else mode.launch(req, spec.stages, Path(scratch))
            )
            prep = None
            phases.close("checks_and_setup")
            if prepare:
                req, prep = _prepare(spec, req, launch, warm, prep_key, Path(scratch), on_progress, control)
                phases.close("preparation")
            if req.command and mode.plain_pass and not spec.cpu:  # the step's time without a profiler
                req = plain_pass(req, spec.timeout, on_progress, control)
                phases.close("plain_pass")
            started = time.time()
            record = _run_profiled(spec, req, mode, launch, prep, prep_key, on_progress, control)
            work_dir, final_dir = checked_dirs(record, req.out_root, started)
            phases.close("profiled_run")  # expanded into the process's own phases by _finish
            try:
                mode.after_run(req, record, launch, work_dir, on_progress, control, spec.timeout)
            except ModeError as e:
                if e.kind == "counters_not_permitted" and mode.counters_fallback:
                    raise CountersDenied(str(e), record.log, work_dir) from None
                raise
        except ModeError as e:
            raise KprofError(str(e)) from None
        except safefs.UnsafePath as e:  # a link or FIFO the child left in its run directory
            raise KprofError(f"the run directory: {e}") from None
    if not spec.cpu and not launch.prefix and not req.command:
        store.mark_prepared(prep_key)  # compiled and autotuned without instrumentation
    return spec, req, record, work_dir, final_dir


def _prepare(
    spec: ProfileSpec,
    req: ProfileRequest,
    launch: Launch,
    warm: bool,
    prep_key: str,
    scratch: Path,
    on_progress: runner.ProgressFn | None,
    control: runner.RunControl | None,
) -> tuple[ProfileRequest, _Preparation | None]:
    """Compile, autotune and check correctness without a profiler before the profiled run:
    beside it in a warm worker (the returned preparation, which the child waits for), else
    before it. Returns the request the profiled child runs."""
    prep_req = spec.req.model_copy(update={"prepare_only": True, "options": EventOptions()}).model_dump_json()
    if warm and launch.prefix:
        # In a warm worker preparing is cheap (its JIT is cached), so it runs every time, while
        # the profiled child starts under its profiler (imports, CUDA context) and waits for it
        # before touching the GPU; the preparation's correctness check stands for the child's.
        if on_progress:
            on_progress(
                0.01,
                "compiling, autotuning and checking correctness outside the profiler, "
                "while the profiler starts",
            )
        gate = scratch / "prepared.json"
        req = req.model_copy(update={"wait_for": str(gate)})
        return req, _Preparation(prep_req, spec.timeout, control, gate)
    # Compile and autotune without instrumentation first: under a profiler the
    # autotuner's timings are distorted, and Triton would cache the config it picked there.
    if on_progress:
        on_progress(0.01, "compiling, autotuning and checking correctness outside the profiler")
    try:
        done = runner.run_profile(prep_req, spec.timeout, None, control=control)
    except runner.WorkerError as e:
        raise KprofError(str(e)) from None
    store.mark_prepared(prep_key)
    if done.warm_worker and done.correctness:
        req = req.model_copy(update={"correctness_checked": done.correctness})
    return req, None


def _run_profiled(
    spec: ProfileSpec,
    req: ProfileRequest,
    mode: Mode,
    launch: Launch,
    prep: _Preparation | None,
    prep_key: str,
    on_progress: runner.ProgressFn | None,
    control: runner.RunControl | None,
) -> runner.Record:
    """Run the profiled child (under the mode's profiler, if any) and wait for a preparation
    beside it; a failure is reported as the preparation's or as the mode explains it."""
    try:
        record = runner.run_profile(
            req.model_dump_json(),
            spec.timeout,
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
        log = e.detail.get("log", "")
        if mode.counters_fallback and mode.counters_denied(log):
            raise CountersDenied(str(e), log) from None
        explain = getattr(mode, "explain_failure", None)
        raise KprofError(explain(str(e), e.detail.get("log", "")) if explain else str(e)) from None
    if prep is not None:
        prep.join()
        if prep.error() is not None:
            raise KprofError(str(prep.error()))
        store.mark_prepared(prep_key)
    return record


def _note_clock(result: ProfileResult, clock: clocks.ClockState) -> None:
    """Record the clock protocol's outcome in the result; when the clock was not locked, say why
    in place of the child's plain "not locked" warning."""
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


def _note_fallback(result: ProfileResult, fallback: dict[str, Any]) -> None:
    """Say in the result that it stands in for a profile whose counters were denied: what was
    measured instead, what was not, and how to let the profiler read counters."""
    result.profiler["counters_fallback"] = fallback
    result.warnings.insert(
        0,
        ResultWarning(
            kind="metrics_missing",
            message=(
                f"Nsight Compute could not read the GPU performance counters (ERR_NVGPUCTRPERM), so "
                f"this {fallback['requested_mode']!r} profile ran in mode {result.mode!r} instead: "
                "measured are the kernels' times (CUPTI); beside them stand the compiled kernel's "
                "static facts (registers, spills, shared memory, theoretical occupancy from the "
                "launch) and the roofline of the FLOP/byte model. Not measured (n/a): TC%, SM%, "
                "DRAM%, achieved occupancy, L2 hit rate, Nsight Compute's rules. To read counters: "
                f"{COUNTERS_HINT}."
            ),
        ),
    )


def _finish(
    spec: ProfileSpec,
    req: ProfileRequest,
    record: runner.Record,
    work_dir: Path,
    final_dir: Path,
    clock: clocks.ClockState | None,
    render: bool = True,
    fallback: dict[str, Any] | None = None,
    phases: Phases | None = None,
) -> ProfileOutcome:
    """Complete the result (the command's output, the noise floor, the clocks, the counters
    fallback, where the time went), render its contract and report (unless ``render`` is off: a
    cluster worker's, whose server renders), and give the directory its final name."""
    phases = phases if phases is not None else Phases()
    try:
        result = store.load_result(work_dir, "profile")
        phases.expand("profiled_run", record.wall_s, result.phases_s)
        if fallback is not None:
            _note_fallback(result, fallback)
        if req.command:  # what the command printed: the report keeps its tail
            result.command["output_tail"] = output_tail(record.log)
        if result.device.kind == "cuda":  # the between-profile spread measured on this GPU (kprof noise)
            from .. import noise

            result.noise_floor = noise.floors(result.device.name, result)
        if clock is not None:
            _note_clock(result, clock)
            result.timings["clock"] = (
                "kept locked from an earlier job"
                if clock.kept
                else ("locked for this job" if clock.locked_mhz else "free")
            )
        phases.close("result_load_and_noise_floor")
        if not render:
            result.timings = {**result.timings, **phases.record()}
            store.write_result(work_dir, result)
            store.finish_profile(work_dir, final_dir, {})
            return ProfileOutcome(result=result, assessment=None, contract="", profile_dir=final_dir)
        r = render_profile(
            result, spec.base, store.sibling_versions(result, final_dir), spec.allow_mismatch, phases
        )
        phases.close("rendering")
        result.timings = {
            **result.timings,
            **phases.record(),
        }  # up to result.json, written last but the reports
        store.write_result(work_dir, result)
        logs = {"command.log": record.log} if req.command else {}  # all it printed, profilers' lines too
        store.finish_profile(work_dir, final_dir, {"report.md": r.report, "contract.md": r.contract, **logs})
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
    return ProfileOutcome(result=result, assessment=r.assessment, contract=r.contract, profile_dir=final_dir)

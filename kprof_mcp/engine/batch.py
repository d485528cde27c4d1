"""Requests made of many runs: comparisons (versions or parameter sets timed side by side),
sweeps (versions across the values of one parameter) and noise-floor measurements. Each is
checked first (nothing runs) and run later, holding the device's lock."""

from __future__ import annotations

import io
import time
from pathlib import Path
from typing import Any

from .. import runner, safefs, store
from ..locks import Cancelled, device_lock, lock_name
from ..models import CompareArm, CompareRequest, CompareResult, SweepRequest, SweepResult
from ..modes import MODES, ModeNotAvailable, get_mode
from .catalogue import PackageDescription, describe, resolve_kernel, target_cpu, validate_params
from .config import KprofError, clock_control_arg, in_range
from .profile import check_profile
from .run import guard, held_clocks, run_locked
from .specs import CompareOutcome, CompareSpec, ProfileOutcome, SweepOutcome, SweepSpec, checked_dirs
from .state import EngineState, with_workers


def _read_run_file(work_dir: Path, name: str) -> str:
    """A result the child wrote into its run directory, read as a regular file under it: no link
    followed, no FIFO or device opened for good (O_NONBLOCK, then a regular file only), size-capped
    and checked for objects/arrays and nesting before it is parsed (store.RESULT_CAP)."""
    return safefs.read_json_text(work_dir, work_dir / name, *store.RESULT_CAP)


def _why(e: Exception) -> str:
    """The reason, without the file's content: a pydantic error names the fields that failed, not
    the values it was given (the file was the child's to write)."""
    errors = getattr(e, "errors", None)
    if callable(errors):
        try:
            errs = errors(include_url=False, include_input=False, include_context=False)
            first = "; ".join(f"{'.'.join(map(str, x['loc'])) or '(top)'}: {x['msg']}" for x in errs[:3])
            return f"the child's result is not valid ({len(errs)} error(s): {safefs.clip(first)})"
        except Exception:  # noqa: BLE001 — fall back to the type alone
            return type(e).__name__
    if isinstance(e, OSError):
        return e.strerror or type(e).__name__
    return str(e)


def run_child(
    engine: EngineState,
    spec: CompareSpec | SweepSpec,
    command: str,
    on_progress: runner.ProgressFn | None,
    control: runner.RunControl | None,
    then: Any = None,
    post: Any = None,
) -> tuple[Path, Path, Any]:
    """Run ``python -m kprof_mcp.child <command>`` on ``spec.req`` holding the device's lock,
    then ``then(control)`` (if given) under the same lock; return (work_dir, final_dir, what
    ``then`` returned) — or, with ``post``, what ``post(work_dir, final_dir, then's value)`` returned,
    run under the lock too: the run directory is finished while no job of another server on the same
    device runs (the sixth probe's P6-2: a second server's planted package swapped a sweep's run
    directory for a link while the first wrote sweep.md)."""
    control = with_workers(engine, control)
    try:
        with device_lock(lock_name(spec.cpu, control), control, on_progress):
            guard(engine, spec)  # again under the lock: the request may have waited in the queue
            # The timing child runs under the clock protocol; an Nsight comparison's arm profiles
            # (then) run after it, under Nsight Compute's own clock control.
            with held_clocks("event", getattr(spec, "clock_control", "base"), spec.cpu, control) as clock:
                req = spec.req
                if clock is not None and clock.locked_mhz is not None:
                    req = req.model_copy(update={"sm_clock_locked_mhz": clock.locked_mhz})
                started = time.time()
                record = runner.run_profile(
                    req.model_dump_json(),
                    spec.timeout,
                    on_progress,
                    control=control,
                    command=command,
                )
            after = then(control) if then is not None else None
            work_dir, final_dir = checked_dirs(record, spec.req.out_root, started)
            if post is not None:
                after = post(work_dir, final_dir, after)
    except (Cancelled, runner.WorkerError) as e:
        raise KprofError(str(e)) from None
    return work_dir, final_dir, after


def check_compare(
    engine: EngineState,
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
    """See :meth:`Engine.check_compare`."""
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
    source = resolve_kernel(engine, kernel)
    desc = describe(engine, source)
    known = desc.version_names()
    unknown = [v for v in versions if v not in known]
    if unknown:
        raise KprofError(f"kernel {desc.name!r} has no version(s) {safefs.clip(unknown)}; valid: {known}")
    if len(set(versions)) != len(versions) or not versions or len(versions) > 8:
        raise KprofError(
            f"versions={safefs.clip(versions)}: give 1 to 8 distinct versions, the baseline first"
        )
    in_range("timeout_s", timeout_s, 1, 86400, "seconds")
    in_range("budget_ms", budget_ms, 100, 60000, "milliseconds of timed GPU time")
    if isinstance(rounds, bool) or not isinstance(rounds, int) or not 3 <= rounds <= 200:
        raise KprofError(f"rounds={safefs.clip(rounds)}: give an integer from 3 to 200")
    arms = _arms(desc, versions, params, param_sets)
    cpu = target_cpu(engine)
    budget = budget_ms if budget_ms is not None else (1500.0 if cpu else 4000.0)
    timeout = float(timeout_s or engine.config.timeout_s)
    req = CompareRequest(
        kernel=desc.name,
        kernel_source=str(source),
        versions=list(versions),
        params=arms[0].params,
        arms=arms,
        mode=mode,
        out_root=str(engine.config.out_root),
        budget_ms=float(budget),
        rounds=rounds,
        force_cpu=engine.config.force_cpu,
    )
    arm_specs = (
        [check_profile(engine, kernel, a.version, a.params, mode=mode, timeout_s=timeout) for a in arms]
        if mode_obj.compare_role == "counters"
        else []
    )
    return CompareSpec(
        req=req,
        cpu=cpu,
        timeout=timeout,
        arm_specs=arm_specs,
        clock_control=clock_control_arg(clock_control),
    )


def _arms(
    desc: PackageDescription,
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
        checked = validate_params(desc, params)
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
    sets = [validate_params(desc, {**(params or {}), **p}) for p in param_sets]
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
    engine: EngineState,
    spec: CompareSpec,
    on_progress: runner.ProgressFn | None = None,
    control: runner.RunControl | None = None,
) -> CompareOutcome:
    """See :meth:`Engine.run_compare`."""

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
                outs.append(run_locked(engine, arm_spec, arm_progress, control))
            except KprofError as e:
                raise KprofError(
                    f"the timing comparison finished, but profiling {arm.label} in mode "
                    f"{spec.req.mode!r} failed: {e}"
                ) from None
        return outs

    def finish(work_dir: Path, final_dir: Path, outs: list[ProfileOutcome] | None) -> tuple[Any, str]:
        try:
            return _finish_compare(spec, work_dir, final_dir, outs)
        except (OSError, ValueError, safefs.UnsafePath) as e:
            raise KprofError(f"writing the comparison failed: {_why(e)} (artifacts in {work_dir})") from None

    _, final_dir, (result, md) = run_child(
        engine, spec, "compare", timing_progress, control, then=profile_arms if n else None, post=finish
    )
    return CompareOutcome(result=result, markdown=md, compare_dir=final_dir)


def _finish_compare(spec: CompareSpec, work_dir: Path, final_dir: Path, outs) -> tuple[Any, str]:
    from ..render.compare import counter_table, render_compare

    result = CompareResult.model_validate_json(_read_run_file(work_dir, "compare.json"))
    if outs:
        result = result.model_copy(
            update={
                "counter_mode": spec.req.mode,
                "counters": counter_table([o.result for o in outs]),
                "profiles": {a.label: str(o.profile_dir) for a, o in zip(spec.req.arms, outs)},
            }
        )
        safefs.write_atomic(work_dir, work_dir / "compare.json", result.model_dump_json(indent=2))
    md = render_compare(result)
    store.finish_profile(work_dir, final_dir, {"compare.md": md})
    return result, md


def check_sweep(
    engine: EngineState,
    kernel: str,
    param: str,
    values: list[Any],
    versions: list[str] | None = None,
    params: dict[str, Any] | None = None,
    budget_ms: float | None = None,
    timeout_s: float | None = None,
    clock_control: str = "base",
) -> SweepSpec:
    """See :meth:`Engine.check_sweep`."""
    source = resolve_kernel(engine, kernel)
    desc = describe(engine, source)
    known = desc.version_names()
    versions = versions or [known[-1]]
    if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
        raise KprofError(f"versions={safefs.clip(versions)}: give a list of version names")
    unknown = [v for v in versions if v not in known]
    if unknown or not 1 <= len(versions) <= 4 or len(set(versions)) != len(versions):
        raise KprofError(f"versions={safefs.clip(versions)}: give 1 to 4 distinct versions of {known}")
    pnames = [p.name for p in desc.params]
    if param not in pnames:
        raise KprofError(f"kernel {desc.name!r} has no parameter {safefs.clip(param)}; valid: {pnames}")
    if not isinstance(values, list) or not 1 <= len(values) <= 32:
        raise KprofError(f"values={safefs.clip(values)}: give a list of 1 to 32 values of {param!r}")
    if params and param in params:
        raise KprofError(f"{param!r} is the swept parameter: give its values in `values`, not in `params`")
    for v in values:  # each point's bounds, before anything runs
        validate_params(desc, {**(params or {}), param: v})
    base = validate_params(desc, params)
    base.pop(param, None)
    in_range("timeout_s", timeout_s, 1, 86400, "seconds")
    in_range("budget_ms", budget_ms, 20, 10000, "milliseconds per stage and point")
    cpu = target_cpu(engine)
    req = SweepRequest(
        kernel=desc.name,
        kernel_source=str(source),
        versions=list(versions),
        param=param,
        values=list(values),
        params=base,
        out_root=str(engine.config.out_root),
        budget_ms=float(budget_ms or (200.0 if cpu else 300.0)),
        force_cpu=engine.config.force_cpu,
    )
    return SweepSpec(
        req=req,
        cpu=cpu,
        timeout=float(timeout_s or engine.config.timeout_s),
        clock_control=clock_control_arg(clock_control),
    )


def run_sweep(
    engine: EngineState,
    spec: SweepSpec,
    on_progress: runner.ProgressFn | None = None,
    control: runner.RunControl | None = None,
) -> SweepOutcome:
    """See :meth:`Engine.run_sweep`."""

    def finish(work_dir: Path, final_dir: Path, _after: Any) -> tuple[Any, list, str, bytes | None]:
        try:
            return _finish_sweep(work_dir, final_dir)
        except (OSError, ValueError, safefs.UnsafePath) as e:
            raise KprofError(f"writing the sweep failed: {_why(e)} (artifacts in {work_dir})") from None

    _, final_dir, (result, rows, md, png) = run_child(
        engine, spec, "sweep", on_progress, control, post=finish
    )
    return SweepOutcome(result=result, rows=rows, markdown=md, png=png, sweep_dir=final_dir)


def _finish_sweep(work_dir: Path, final_dir: Path) -> tuple[Any, list, str, bytes | None]:
    import pandas as pd

    from ..render.plots import plot_sweep
    from ..render.sweep import render_sweep, sweep_rows

    result = SweepResult.model_validate_json(_read_run_file(work_dir, "sweep.json"))
    rows = sweep_rows(result)
    # The run directory was writable by the confined child: nothing there is followed (a
    # planted link is replaced, never written through).
    safefs.write_atomic(work_dir, work_dir / "sweep.csv", pd.DataFrame(rows).to_csv(index=False))
    png = None
    try:
        buf = io.BytesIO()
        plot_sweep(
            rows,
            result.param,
            buf,
            f"{result.kernel}: {', '.join(result.versions)} over {result.param} ({result.device.name})",
        )
        png = buf.getvalue()
        safefs.write_atomic(work_dir, work_dir / "sweep.png", png)
    except Exception as e:  # noqa: BLE001 — a plotting failure must not lose the table
        from ..models import ResultWarning

        result.warnings.append(ResultWarning(kind="artifact", message=f"sweep.png not written: {e}"))
    md = render_sweep(result, rows)
    store.finish_profile(work_dir, final_dir, {"sweep.md": md})
    return result, rows, md, png


def check_noise(
    engine: EngineState,
    cases: list[tuple[str, str, dict]] | None = None,
    rounds: int = 8,
    clock_control: str = "base",
):
    """See :meth:`Engine.check_noise`. ``noise.check`` profiles through ``engine``: the facade
    passes itself."""
    from .. import noise

    if engine.remote is not None:
        raise KprofError(
            "measure_noise runs on this machine's GPU and keeps the floor in its cache; on a cluster, "
            "run `kprof noise` on each worker's host (its profiles read the floor there)"
        )
    try:
        return noise.check(engine, cases, rounds, clock_control)
    except noise.NoiseError as e:
        raise KprofError(str(e)) from None

"""The sweeping child (``python -m kprof_mcp.child sweep``): versions of one kernel across the
values of one parameter, in one process.

For each value: the parameters are checked (bounds, device memory), the inputs built, and each
version built, run once (JIT, autotune), checked against the reference, and each stage timed as
event mode times it (kernel time from CUPTI on a GPU, L2 flushed before each run; the wall clock
on the CPU) on a short budget. Each point becomes an event-mode result, so the parent assesses it
with the same diagnosis as any profile. A point that cannot run (out of bounds, too big, wrong
result) is recorded as skipped with its reason; the others go on.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

from ..models import ProfileRequest, ProfileResult, ResultWarning, StageResult, SweepRequest, SweepResult
from ..protocol import ExpectedError, progress


def run(req: SweepRequest) -> dict[str, Any]:
    from ..capture.artifacts import new_run_dir, params_dirname
    from ..capture.timer import CuptiUnavailable, Timer, events_in_place_of_kernels
    from ..kernel.api import ParamError
    from .compare import _guard, build_checked, open_package
    from .harness import _check_memory, _static, device_state

    torch, use_cuda, pkg, versions = open_package(req.kernel_source, req.versions, req.force_cpu)
    dev = device_state(torch, use_cuda, locked_mhz=req.sm_clock_locked_mhz)
    spec = None
    if dev.spec_key:
        from ..devices import match_device

        spec = match_device(dev.name)
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    timing_req = ProfileRequest(
        kernel=pkg.name,
        kernel_source=req.kernel_source,
        version=versions[0].name,
        params={},
        mode="event",
        out_root=req.out_root,
        budget_ms=req.budget_ms,
        min_runs=3 if not use_cuda else 10,
        warmup_ms=req.warmup_ms,
    )
    engine = "cupti" if use_cuda else "cpu"
    flush = None
    integrity: list[ResultWarning] = []
    points: list[ProfileResult] = []
    skipped: list[dict[str, Any]] = []
    total = len(req.values) * len(versions)
    for i, value in enumerate(req.values):
        try:
            params = pkg.validate_params({**req.params, req.param: value})
            _check_memory(torch, pkg, params, use_cuda)
        except (ParamError, ExpectedError) as e:
            skipped += [{"value": value, "version": v.name, "reason": str(e)} for v in versions]
            continue
        inputs = pkg.make_inputs(params, "cuda" if use_cuda else "cpu")
        ref = pkg.reference(inputs, params)
        here: list[tuple[ProfileResult, Any]] = []  # this value's points and their integrity checks
        for j, version in enumerate(versions):
            progress(0.05 + 0.9 * (i * len(versions) + j) / total, f"{req.param}={value}: {version.name}")
            plan, streams, ok, wrong = build_checked(torch, pkg, version, inputs, params, ref, use_cuda)
            if wrong is not None:
                skipped.append({"value": value, "version": version.name, "reason": f"wrong result: {wrong}"})
                continue
            guard = _guard(torch, use_cuda, pkg, params, inputs, plan, streams, j)
            stages = []
            for stage, model in zip(plan.stages, version.stages):
                static = _static(stage, model, params, dev, spec, None, stage.tiling)
                t = Timer(torch, use_cuda, timing_req, engine, flush_buf=flush)
                flush = t.flush_buf
                try:
                    timing = t.time(stage.fn)
                    kernels = t.kernel_times() if use_cuda else []
                except CuptiUnavailable:
                    engine = "events"
                    t = Timer(torch, use_cuda, timing_req, engine, flush_buf=flush)
                    timing, kernels = t.time(stage.fn), []
                if use_cuda and engine == "events":  # CUDA events in place of a kernel time: 'suspect'
                    timing = events_in_place_of_kernels(timing)
                stages.append(StageResult(timing=timing, kernel_times=kernels, **static))
            point = ProfileResult(
                kernel=pkg.name,
                version=version.name,
                mode="event",
                plan_kind=plan.kind,
                params=params.as_dict(),
                param_order=[p.name for p in pkg.params],
                device=dev,
                stages=stages,
                correctness=ok,
                created_at=stamp,
            )
            here.append((point, guard))
            del plan
        points += checked(here, f"{req.param}={value}", integrity)
        del inputs, ref, here
        if use_cuda:
            torch.cuda.empty_cache()
    warnings = []
    if not use_cuda:
        warnings.append(
            ResultWarning(
                kind="device",
                message="no GPU: CPU wall times; they say nothing about GPU speed",
            )
        )
    if engine == "events":
        warnings.append(
            ResultWarning(
                kind="timing",
                message="CUPTI recorded no kernel: times are CUDA events around "
                "each launch (launch latency included)",
            )
        )
    warnings += integrity
    if not points:
        raise ExpectedError(
            "params",
            "no point of the sweep could run: "
            + "; ".join(f"{req.param}={s['value']} {s['version']}: {s['reason']}" for s in skipped[:5]),
        )
    base = {k: v for k, v in points[0].params.items() if k != req.param}
    order = [p.name for p in pkg.params if p.name != req.param]
    final_dir = (
        Path(req.out_root)
        / "sweep"
        / pkg.name
        / f"{req.param}__{params_dirname(base, order)}"
        / f"{stamp}-{'-'.join(v.name for v in versions)}"
    )
    result = SweepResult(
        kernel=pkg.name,
        param=req.param,
        values=list(req.values),
        versions=[v.name for v in versions],
        points=points,
        skipped=skipped,
        device=dev,
        warnings=warnings,
        created_at=stamp,
        sweep_dir=str(final_dir),
        request=req.model_dump(),
    )
    work_dir = new_run_dir(req.out_root, final_dir)
    (work_dir / "sweep.json").write_text(result.model_dump_json(indent=2))
    return {"status": "ok", "work_dir": str(work_dir), "profile_dir": str(final_dir)}


def checked(
    here: list[tuple[ProfileResult, Any]], where: str, flagged: list[ResultWarning]
) -> list[ProfileResult]:
    """One value's points after their integrity checks (:mod:`kprof_mcp.capture.integrity`, as
    compare_versions makes them: the versions share the inputs, so every repeat check comes before any
    fresh input replaces them): each point's record in ``correctness["after_timing"]``, each failure an
    ``integrity`` warning on the point and one in ``flagged`` (the sweep's) naming the version and value."""
    for _, guard in here:
        guard.repeat()
    out = []
    for point, guard in here:
        guard.fresh()
        record = guard.record()
        point.correctness = dict(point.correctness, after_timing=record)
        for c in record["checks"]:
            if not c["ok"]:
                said = f"integrity check '{c['check']}' failed after timing: {c['message']}"
                point.warnings.append(ResultWarning(kind="integrity", message=said))
                flagged.append(ResultWarning(kind="integrity", message=f"{point.version} at {where}: {said}"))
        out.append(point)
    return out


def main(argv: list[str]) -> int:
    """``python -m kprof_mcp.child sweep --request R --result OUT`` (as ``compare``)."""
    from .compare import child_main

    return child_main(argv, "sweep", lambda text: run(SweepRequest.model_validate_json(text)))

"""Checking a kernel profile request: the mode and its preflight, the baseline, the kernel, its
version and parameters, and the limits. Nothing runs on the GPU here."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from .. import safefs
from ..models import ProfileRequest, validation_message
from ..modes import DEFAULT_MODE, ModeError, ModeNotAvailable, get_mode, preflight_env
from ..tools import nvidia_smi
from .catalogue import describe, load_result, resolve_kernel, target_cpu, validate_params
from .config import KprofError, in_range
from .specs import ProfileSpec
from .state import EngineState

# Per-stage timing budget without a GPU (the Triton interpreter's wall time says nothing about a GPU): the
# same for the MCP tools and the CLI (``cli/cpu_sized``), where a 3 s default made a two-stage plan's profile
# take 10 s of the first hour's 15.
CPU_BUDGET_MS = 1000.0


def check_profile(
    engine: EngineState,
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
    """See :meth:`Engine.check_profile`."""
    try:
        mode_obj = get_mode(mode)
    except ModeNotAvailable as e:
        raise KprofError(str(e)) from None
    in_range("timeout_s", timeout_s, 1, 86400, "seconds")
    base = load_result(engine, baseline, "baseline") if baseline else None
    source = resolve_kernel(engine, kernel)
    desc = describe(engine, source)
    versions = desc.version_names()
    if version is None:
        version = versions[-1]
    if version not in versions:
        raise KprofError(f"kernel {desc.name!r} has no version {safefs.clip(version)}; valid: {versions}")
    checked = validate_params(desc, params)
    cpu = target_cpu(engine)
    if base is not None and not allow_mismatch:
        _refuse_mismatched(engine, base, baseline, checked, mode, cpu)
    budget = (
        engine.config.budget_ms if engine.config.budget_ms is not None else (CPU_BUDGET_MS if cpu else 2000.0)
    )
    try:  # the mode's options and the shared fields, checked by the request's models
        req = ProfileRequest(
            kernel=desc.name,
            kernel_source=str(source),
            version=version,
            params=checked,
            mode=mode,
            out_root=str(engine.config.out_root),
            budget_ms=budget,
            min_runs=3 if cpu else 30,
            force_cpu=engine.config.force_cpu,
            ncu_launches=ncu_launches,
            timeline_iters=timeline_iters,
            timeline_engine=timeline_engine,
            clock_control=clock_control,
        )
    except ValidationError as e:
        raise KprofError(validation_message(e)) from None
    try:
        extra = (
            {}
            if engine.config.remote_gpus
            else mode_obj.preflight(preflight_env(req, cpu, engine.config.force_cpu, nvidia_smi.gpus()))
        )
        req = req.with_options(**extra)
    except ModeError as e:
        raise KprofError(str(e)) from None
    stages = next(v.stages for v in desc.versions if v.name == version)
    return ProfileSpec(
        req=req,
        base=base,
        source=source,
        cpu=cpu,
        stages=[st.name for st in stages],
        timeout=float(timeout_s or engine.config.timeout_s),
        baseline=baseline,
        allow_mismatch=bool(allow_mismatch),
    )


def _refuse_mismatched(
    engine: EngineState, base, baseline: str, params: dict[str, Any], mode: str, cpu: bool
) -> None:
    """A baseline that measured something else — other parameters, another mode, another device (this
    machine's, or a cluster's GPUs when known only at the end) — refused with the reason before anything
    runs (issue 37); ``allow_mismatch`` skips this."""
    from ..analysis.baseline import mismatch_of, refusal_words

    if engine.config.remote_gpus:  # the device is the worker's: judged when the result comes back
        kind, names = None, None
    else:
        kind = "cpu" if cpu else "cuda"
        names = None if cpu else [g.get("name", "") for g in nvidia_smi.gpus()]
    why = mismatch_of(base, params, mode, kind, names)
    if why:
        raise KprofError(f"baseline {safefs.clip(baseline)}: {refusal_words(why)}")

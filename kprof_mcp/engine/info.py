"""Answers that run nothing on the GPU: the bottleneck classification of given metrics, the
kernel development log, and what this machine offers (devices, clocks, profilers, modes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import safefs, store
from ..analysis import diagnosis as dx
from ..devices import load_devices, try_match_device
from ..kernel.api import NAME_RE
from ..models import Diagnosis
from ..modes import MODES
from ..render import render_devlog_entry
from ..render.devlog import previous_entry
from ..render.diagnosis import assess, diagnose
from ..tools import ncu as ncu_tool
from ..tools import nsys as nsys_tool
from ..tools import nvidia_smi
from .catalogue import checked_profile_dir, load_result
from .config import KprofError
from .state import EngineState


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
    arch: str | None = None,
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
    evidence = classify_evidence(accounting, tensor_work, flops, dtype, arch, tc_pct)
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
    return Diagnosis.from_analysis(diagnose(m))


def classify_evidence(
    accounting: dict[str, float] | None,
    tensor_work: bool,
    flops: float | None,
    dtype: str | None,
    arch: str | None,
    tc_pct: float | None,
) -> dict[str, Any]:
    """The accounting evidence ``classify`` was given, checked: the keys of a profile's
    ``accounting`` (kprof_mcp.parsers.ncu.ACCOUNTING), finite numbers ≥ 0."""
    import math

    from .. import machines
    from ..analysis.accounting import account
    from ..analysis.machine_inputs import _ELEM_BYTES
    from ..parsers.ncu import ACCOUNTING

    machine = machines.load(arch) if arch else None
    if arch and machine is None:
        raise KprofError(
            f"arch={safefs.clip(arch)}: one of {sorted(machines.table().get('archs') or {})} (kprof_mcp/machines.json)"
        )
    if dtype is not None and dtype not in _ELEM_BYTES:
        raise KprofError(f"dtype={safefs.clip(dtype)}: one of {sorted(_ELEM_BYTES)}")
    model = dict(machine=machine, dtype=dtype, tensor_work=bool(tensor_work))
    if not accounting:
        return model
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
    for name, v in (("flops", flops),):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1e21):
            raise KprofError(f"{name}={safefs.clip(v)} must be a positive number")
    return dict(
        model,
        accounting=account({k: float(v) for k, v in accounting.items()}, tc_pct),
        flops=flops,
        elem_bytes=_ELEM_BYTES.get(dtype or ""),
    )


def update_devlog(
    engine: EngineState,
    kernel: str,
    profile_dir: str,
    issues: list[str] | None = None,
    insights: list[str] | None = None,
    allow_mismatch: bool = False,
) -> tuple[Path, str]:
    """See :meth:`Engine.update_devlog`."""
    if not isinstance(kernel, str) or not NAME_RE.match(kernel):
        raise KprofError(
            f"kernel {safefs.clip(kernel)} must be a plain name ({NAME_RE.pattern}): it names the file "
            "docs/kernels/<kernel>.md"
        )
    result = load_result(engine, profile_dir)
    if result.kernel != kernel:
        raise KprofError(f"profile_dir holds a profile of {result.kernel!r}, not {kernel!r}")
    for label, items in (("issues", issues), ("insights", insights)):
        for it in items or []:
            if not isinstance(it, str) or len(it) > 2000:
                raise KprofError(f"{label}: each entry must be a string of at most 2000 characters")
    ws = engine.config.workspace
    path = ws / "docs" / "kernels" / f"{kernel}.md"
    try:
        ref = str(checked_profile_dir(engine, profile_dir, "profile_dir").relative_to(ws))
    except (ValueError, KprofError):
        ref = str(result.profile_dir)
    a = assess(result)

    def entry_for(text: str) -> str:
        return render_devlog_entry(
            result,
            previous_entry(text, result, bool(allow_mismatch)),
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


def device_info(engine: EngineState) -> dict[str, Any]:
    """See :meth:`Engine.device_info`."""
    gpus = nvidia_smi.gpus()
    info: dict[str, Any] = {"gpus": gpus, "force_cpu": engine.config.force_cpu}
    if gpus and not engine.config.force_cpu:
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
        info["timing"] = (
            "CPU wall time, no GPU (Triton kernels through its interpreter, torch on the CPU); no GPU roofline"
        )
    info["clock_control"] = (
        "clock_control='base' (default) locks the SM clock for every run: event, nsys, "
        "compare and sweep at the device's sustained clock (devices.json sustained_sm_mhz, "
        "nvidia-smi -lgc; reset after), annotation/ncu by Nsight Compute (--clock-control "
        "base). 'none' leaves clocks free. Readings are recorded in params.json."
    )
    if engine.clock_recovery:
        info["clock_recovery"] = engine.clock_recovery
    info["profilers"] = profilers()
    info["modes"] = {m.name: m.describe() for m in MODES.values()}
    info["known_devices"] = [d.name for d in load_devices()]
    info["warm_workers"] = (
        engine.pool.status()
        if engine.pool is not None
        else "off: every profile starts fresh processes (KPROF_WARM=0, or the CLI)"
    )
    return info


def used_by(profiler: str) -> list[str]:
    """The modes that record with ``profiler`` (each mode says which it needs)."""
    return [m.name for m in MODES.values() if profiler in m.profilers]


def profilers() -> dict[str, Any]:
    ncu = ncu_tool.find_ncu()
    nsys = nsys_tool.check_nsys()
    return {
        "cupti": {
            "usable": nvidia_smi.gpu_present(),
            "used_by": used_by("cupti"),
            "note": "event mode's kernel times (torch.profiler), CUDA events beside them",
        },
        "ncu": {
            "path": str(ncu) if ncu else None,
            "usable_by_kprof": ncu is not None,
            "used_by": used_by("ncu"),
            "note": "set KPROF_NCU to choose an installation; counters need root or "
            "NVreg_RestrictProfilingToAdminUsers=0",
        },
        "nsys": {
            "path": str(nsys.path) if nsys.path else None,
            "version": nsys.version,
            "usable_by_kprof": nsys.usable,
            "used_by": used_by("nsys"),
            "problem": nsys.problem,
            "note": "mode 'nsys' records with Nsight Systems when it is usable (set KPROF_NSYS to choose one), "
            "else with CUPTI via torch.profiler, and its report says which",
        },
    }

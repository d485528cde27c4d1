"""Writing a profile directory's common files: ``params.json`` (the source of truth for the
Configuration table), ``samples.csv``, ``result.json``, ``compiled/<stage>/`` and
``tiling/<stage>.json`` (+ the autotuner's history)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from .. import safefs
from ..analysis.fingerprint import fingerprint
from ..models import ProfileResult, Resources
from ..parsers import triton as triton_meta
from ..parsers.sass import instruction_mix
from ..parsers.ttir import ir_ops
from ..protocol import ExpectedError
from ..tools.sass import sass_listing


def new_run_dir(out_root: str, final_dir: Path) -> Path:
    """Create ``<final_dir>.partial`` under ``out_root``: every component below the root opened
    without following links (the engine checked the root itself right before the run), the last
    one created here and now, so nothing in it was planted before the run."""
    work_dir = final_dir.with_name(final_dir.name + ".partial")
    try:
        return safefs.make_new_dir(Path(out_root), work_dir)
    except safefs.UnsafePath as e:
        raise ExpectedError("unsafe_path", f"cannot create the profile directory: {e}") from None


def write_compiled(ret: Any, dest: Path) -> Resources | None:
    """TTIR/TTGIR/LLIR/PTX/cubin of the launch's ``CompiledKernel``, its SASS listing
    (``kernel.sass``, with the static instruction mix in the resources) and resources.json."""
    files = triton_meta.compiled_files(ret)
    if files is None:
        return None
    dest.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        if isinstance(content, bytes):
            (dest / name).write_bytes(content)
        else:
            (dest / name).write_text(content)
    res = triton_meta.resources(ret)
    ttir = files.get("kernel.ttir")
    if isinstance(ttir, str):
        res = res.model_copy(update={"ir_ops": ir_ops(ttir)})
    cubin = dest / "kernel.cubin"
    listing = sass_listing(cubin) if cubin.is_file() else None
    if listing:
        (dest / "kernel.sass").write_text(listing)
        mix = instruction_mix(listing)
        res = res.model_copy(update={"sass_mix": mix.classes, "sass_loop_mix": mix.loop_classes})
    (dest / "resources.json").write_text(res.model_dump_json(indent=2))
    return res


def write_tiling(stage, tiling_dir: Path) -> dict[str, Any] | None:
    """``tiling/<stage>.json`` (autotuned or fixed config) and ``tiling/<stage>/autotuning.json``."""
    tiling, hist = triton_meta.tiling(stage.name, stage.kernel, stage.tiling)
    tiling_dir.mkdir(parents=True, exist_ok=True)
    if hist is not None:
        (tiling_dir / stage.name).mkdir(exist_ok=True)
        (tiling_dir / stage.name / "autotuning.json").write_text(json.dumps(hist, indent=2, default=str))
    if tiling is not None:
        (tiling_dir / f"{stage.name}.json").write_text(json.dumps(tiling, indent=2, default=str))
    return tiling


def params_dirname(params: dict[str, Any], order: list[str]) -> str:
    return "_".join(f"{k}={params[k]}" for k in order)


def write_params_and_samples(work_dir: Path, result: ProfileResult, cache_control: str) -> None:
    """params.json, samples.csv (raw ns per run), result.json."""
    from .. import __version__

    d = result.device
    params_json = {
        "kernel": result.kernel,
        "version": result.version,
        "mode": result.mode,
        "plan_kind": result.plan_kind,
        **result.params,
        "params": result.params,
        "device": {
            "name": d.name,
            "kind": d.kind,
            "index": d.index,
            "sm_count": d.sm_count,
            "l2_bytes": d.l2_bytes,
            "memory_bytes": d.memory_bytes,
            "compute_capability": d.compute_capability,
            "spec_key": d.spec_key,
            "spec_name": d.spec_name,
            "spec_note": d.spec_note,
        },
        "clock_state": {
            "clocks_locked": d.clocks_locked,
            "clock_control": d.clock_control,
            "sm_clock_lock_mhz": d.sm_clock_lock_mhz,
            "before": d.clocks_before,
            "after": d.clocks_after,
        },
        "fingerprint": fingerprint(result),
        "cache_control": cache_control,
        "profiler": result.profiler or None,
        "versions": {
            "torch": d.torch_version,
            "triton": d.triton_version,
            "cuda": d.cuda_version,
            "driver": d.driver_version,
            "python": d.python_version,
            "kprof_mcp": __version__,
        },
        "triton_interpret": d.triton_interpret,
        "created_at": result.created_at,
    }
    # No link followed (issue 38): in the server, the run directory was the confined child's to write.
    safefs.write_atomic(work_dir, work_dir / "params.json", json.dumps(params_json, indent=2, default=str))
    timings = [(s.name, s.timing) for s in result.stages]
    timings += [(s.name, s.launch_timing) for s in result.stages if s.launch_timing is not None]
    if result.plan_total is not None:
        timings.append(("__plan__", result.plan_total))
    rows = [
        {"stage": name, "run": i, "time_ns": v, "method": t.method}
        for name, t in timings
        for i, v in enumerate(t.samples_ns)
    ]
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=["stage", "run", "time_ns", "method"])
    w.writeheader()
    w.writerows(rows)
    safefs.write_atomic(work_dir, work_dir / "samples.csv", buf.getvalue())
    safefs.write_atomic(work_dir, work_dir / "result.json", result.model_dump_json(indent=2))

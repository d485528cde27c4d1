"""The profiling child process. Only this module imports torch and triton.

Run as ``python -m kprof_mcp.worker describe --source PATH`` (print a package's
description as JSON) or ``python -m kprof_mcp.worker run --request FILE --result FILE``.

Protocol with the parent (``kprof_mcp.runner``):
* progress lines on stdout: ``@@KPROF {"progress": 0.3, "message": "..."}``;
* the outcome in ``--result``: ``{"status": "ok", "profile_dir": ...}`` or
  ``{"status": "error", "kind": ..., "message": ...}``; exit codes 0 ok, 2 expected
  error (bad params, too large, incorrect results), anything else a crash whose stderr
  the parent reports.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from .kernel_api import KernelPackage, ParamError, Params, Plan
from .models import DeviceState, ProfileRequest, ProfileResult, Resources, StageResult, Timing

PROGRESS_PREFIX = "@@KPROF "
L2_FLUSH_BYTES = 256 * 1024 * 1024  # as triton.testing.do_bench: larger than any L2 in devices.json


class ExpectedError(Exception):
    """Failures the caller can act on; ``kind`` is one of params, too_large, incorrect, mode."""

    def __init__(self, kind: str, message: str, detail: dict[str, Any] | None = None):
        super().__init__(message)
        self.kind = kind
        self.detail = detail or {}


def progress(fraction: float, message: str) -> None:
    print(PROGRESS_PREFIX + json.dumps({"progress": round(fraction, 3), "message": message}), flush=True)


# ----------------------------------------------------------------------------- device

def _nvidia_smi(index: int) -> dict[str, Any]:
    fields = ["clocks.sm", "clocks.max.sm", "clocks.mem", "clocks.max.mem", "power.draw",
              "temperature.gpu", "driver_version", "persistence_mode"]
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return {}
    try:
        out = subprocess.run([exe, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits",
                              "-i", str(index)], capture_output=True, text=True, timeout=10, check=True).stdout
    except (subprocess.SubprocessError, OSError):
        return {}
    values = [v.strip() for v in out.strip().split(",")]
    return dict(zip(fields, values)) if len(values) == len(fields) else {}


def device_state(torch, use_cuda: bool, query_smi: bool = True) -> DeviceState:
    from .devices import try_match_device

    import triton

    common = dict(torch_version=torch.__version__, triton_version=triton.__version__,
                  python_version=platform.python_version(),
                  triton_interpret=os.environ.get("TRITON_INTERPRET") == "1")
    if not use_cuda:
        return DeviceState(kind="cpu", name=platform.processor() or platform.machine() or "cpu",
                           spec_note="no GPU: CPU timing (Triton interpreter / torch CPU); no GPU peaks or roofline",
                           clock_control="none", **common)
    idx = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(idx)
    spec, note = try_match_device(props.name)
    # Under Nsight Compute the parent reads nvidia-smi instead: every process started here
    # would be one more process for ncu to attach to.
    smi = _nvidia_smi(idx) if query_smi else {}
    return DeviceState(
        kind="cuda", name=props.name, index=idx, sm_count=props.multi_processor_count,
        l2_bytes=getattr(props, "L2_cache_size", None), memory_bytes=props.total_memory,
        compute_capability=f"{props.major}.{props.minor}",
        spec_key=spec.key if spec else None, spec_name=spec.name if spec else None, spec_note=note,
        peak_gbps=spec.peak_gbps if spec else None,
        clocks_locked=None,
        clock_control="none: kprof does not change GPU clocks in event mode; readings are recorded before and after",
        clocks_before=smi, driver_version=smi.get("driver_version"), cuda_version=torch.version.cuda, **common)


def _check_memory(torch, pkg: KernelPackage, params: Params, use_cuda: bool) -> None:
    need = float(pkg.memory_bytes(params))
    if use_cuda:
        free, total = torch.cuda.mem_get_info()
        need_total = need + L2_FLUSH_BYTES
        where = f"GPU memory ({free / 2**30:.1f} GiB free of {total / 2**30:.1f} GiB)"
    else:
        try:
            free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError):
            return
        need_total = need
        where = f"host memory ({free / 2**30:.1f} GiB available)"
    if need_total > 0.9 * free:
        raise ExpectedError(
            "too_large",
            f"parameters {params.as_dict()} need about {need / 2**30:.2f} GiB of inputs/outputs "
            f"(+{L2_FLUSH_BYTES / 2**20:.0f} MiB L2-flush buffer on GPU), more than 90% of the free {where}; "
            "choose smaller sizes", {"estimate_bytes": need, "free_bytes": free})


# ----------------------------------------------------------------------------- correctness

def check_correctness(torch, out, ref, tolerance: float) -> dict[str, Any]:
    """Relative L2 error ‖out − ref‖ / ‖ref‖ in float64, NaN/unwritten detection, worst element.

    All statistics of an output are reduced on the device and read back in one transfer: under
    Nsight Compute every extra kernel and synchronisation costs noticeably more.
    """
    outs = out if isinstance(out, (tuple, list)) else (out,)
    refs = ref if isinstance(ref, (tuple, list)) else (ref,)
    if len(outs) != len(refs):
        return {"ok": False, "message": f"kernel returned {len(outs)} outputs, reference {len(refs)}"}
    report: dict[str, Any] = {"ok": True, "tolerance_rel_l2": tolerance, "outputs": []}
    for i, (o, r) in enumerate(zip(outs, refs)):
        entry: dict[str, Any] = {"index": i, "shape": list(o.shape)}
        if tuple(o.shape) != tuple(r.shape):
            entry.update(ok=False, message=f"output {i} has shape {tuple(o.shape)}, reference {tuple(r.shape)}")
        else:
            od, rd = o.detach().reshape(-1).double(), r.detach().reshape(-1).double()
            diff = od - rd
            finite = torch.isfinite(diff)
            bad = torch.isfinite(rd) & ~torch.isfinite(od)
            absdiff = torch.where(finite, diff.abs(), torch.full_like(diff, float("inf")))
            worst_t = absdiff.argmax() if absdiff.numel() else torch.zeros((), dtype=torch.long, device=od.device)
            n_bad, err_norm, ref_norm, max_abs, worst, wval, wref = torch.stack([
                bad.sum().double(), torch.linalg.vector_norm(diff), torch.linalg.vector_norm(rd),
                absdiff.max() if absdiff.numel() else torch.zeros((), dtype=torch.double, device=od.device),
                worst_t.double(), od[worst_t] if od.numel() else worst_t.double() * 0,
                rd[worst_t] if rd.numel() else worst_t.double() * 0]).tolist()
            n_bad, worst = int(n_bad), int(worst)
            rel = err_norm / ref_norm if ref_norm > 0 else max_abs
            widx, rem = [], worst
            for dim in reversed(list(o.shape)):
                widx.append(rem % dim if dim else 0)
                rem = rem // dim if dim else 0
            entry.update(rel_l2_error=rel, max_abs_error=max_abs, non_finite_elements=n_bad,
                         worst_index=list(reversed(widx)), worst_value=wval, worst_reference=wref)
            entry["ok"] = n_bad == 0 and rel <= tolerance
            if not entry["ok"]:
                entry["message"] = (
                    f"output {i}: relative L2 error {rel:.3g} (tolerance {tolerance:g}), "
                    f"{n_bad} non-finite (unwritten/NaN) elements; worst at index {entry['worst_index']}: "
                    f"got {entry['worst_value']:.6g}, expected {entry['worst_reference']:.6g}")
        report["outputs"].append(entry)
        report["ok"] = report["ok"] and entry["ok"]
    return report


# ----------------------------------------------------------------------------- timing

class Timer:
    """Times a callable until the spread is small or a budget is spent; keeps raw samples.

    GPU: CUDA events around each run, L2 flushed (a 256 MiB buffer zeroed) before each.
    CPU: the wall clock around each (synchronous) run; no cache control.
    """

    def __init__(self, torch, use_cuda: bool, req: ProfileRequest):
        self.torch = torch
        self.use_cuda = use_cuda
        self.req = req
        self.flush_buf = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda") if use_cuda else None

    def _one_batch(self, fn, n: int) -> list[float]:
        torch = self.torch
        if not self.use_cuda:
            out = []
            for _ in range(n):
                t0 = time.perf_counter_ns()
                fn()
                out.append(float(time.perf_counter_ns() - t0))
            return out
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        for i in range(n):
            self.flush_buf.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) * 1e6 for s, e in zip(starts, ends)]

    def time(self, fn) -> Timing:
        import statistics

        req = self.req
        # Warm-up: at least 3 runs and warmup_ms, after the correctness run did JIT/autotune.
        t0 = time.perf_counter()
        warm = self._one_batch(fn, 3)
        est_ns = max(1.0, statistics.median(warm))
        while (time.perf_counter() - t0) * 1e3 < req.warmup_ms and est_ns < req.warmup_ms * 1e6:
            warm = self._one_batch(fn, max(1, min(100, int(20e6 / est_ns))))
            est_ns = max(1.0, statistics.median(warm))
        samples: list[float] = []
        spent_ms = 0.0
        stop = "max_runs"
        while len(samples) < req.max_runs:
            batch = max(1, min(req.max_runs - len(samples), int(50e6 / est_ns), 200))
            if len(samples) < req.min_runs:
                batch = max(batch if batch < req.min_runs else req.min_runs, 1)
            b0 = time.perf_counter()
            samples += self._one_batch(fn, batch)
            spent_ms += (time.perf_counter() - b0) * 1e3
            if len(samples) >= req.min_runs:
                t = Timing(samples_ns=samples, method="", l2_flushed=False, stop_reason="")
                if t.rel_iqr <= req.target_rel_iqr and len(samples) >= max(req.min_runs, 10 if self.use_cuda else 1):
                    stop = "converged"
                    break
                if spent_ms >= req.budget_ms:
                    stop = "budget"
                    break
            est_ns = max(1.0, statistics.median(samples[-batch:]))
        return Timing(samples_ns=samples, method="cuda_events" if self.use_cuda else "cpu_wall_clock",
                      l2_flushed=self.use_cuda, stop_reason=stop)


# ----------------------------------------------------------------------------- artifacts

def _dump_compiled(ret, dest: Path) -> Resources | None:
    """Write TTIR/TTGIR/LLIR/PTX/cubin of a Triton CompiledKernel; return its resources."""
    asm = getattr(ret, "asm", None)
    if not isinstance(asm, dict):
        return None
    dest.mkdir(parents=True, exist_ok=True)
    for key, text in asm.items():
        ext = {"cubin": "cubin", "hsaco": "hsaco"}.get(key, key)
        path = dest / f"kernel.{ext}"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(str(text))
    try:
        ret._init_handles()
    except Exception:  # noqa: BLE001 — resources are optional extras; the IR is already on disk
        pass
    md = getattr(ret, "metadata", None)

    def mget(k):
        return getattr(md, k, None) if md is not None and not isinstance(md, dict) else (md or {}).get(k)

    res = Resources(kernel_name=mget("name"), registers_per_thread=getattr(ret, "n_regs", None),
                    spilled_registers=getattr(ret, "n_spills", None), shared_memory_bytes=mget("shared"),
                    num_warps=mget("num_warps"), num_stages=mget("num_stages"))
    (dest / "resources.json").write_text(res.model_dump_json(indent=2))
    return res


def config_dict(cfg) -> dict[str, Any]:
    d = dict(getattr(cfg, "kwargs", {}))
    for k in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
        v = getattr(cfg, k, None)
        if v is not None:
            d[k] = v
    return d


def _write_tiling(stage, tiling_dir: Path) -> dict[str, Any] | None:
    kernel = stage.kernel
    best = getattr(kernel, "best_config", None)
    tiling_dir.mkdir(parents=True, exist_ok=True)
    if best is not None:
        tiling = {"source": "autotuned", **config_dict(best)}
        timings = getattr(kernel, "configs_timings", None) or {}
        hist = {
            "stage": stage.name,
            "best": config_dict(best),
            "note": ("timings in ms as [median, p20, p80] from the autotuner's benchmark"
                     if timings else "best config came from Triton's autotune cache (cache_results): no timings this run"),
            "configs": [{"config": config_dict(c), "timing_ms": t if isinstance(t, list) else [t]}
                        for c, t in sorted(timings.items(), key=lambda kv: (kv[1][0] if isinstance(kv[1], list) else kv[1]))],
        }
        (tiling_dir / stage.name).mkdir(exist_ok=True)
        (tiling_dir / stage.name / "autotuning.json").write_text(json.dumps(hist, indent=2, default=str))
    elif stage.tiling is not None:
        tiling = {"source": "fixed", **stage.tiling}
    else:
        return None
    (tiling_dir / f"{stage.name}.json").write_text(json.dumps(tiling, indent=2, default=str))
    return tiling


def params_dirname(params: dict[str, Any], order: list[str]) -> str:
    return "_".join(f"{k}={params[k]}" for k in order)


# ----------------------------------------------------------------------------- run

NCU_MODES = ("annotation", "ncu")
TIMELINE_PROFILER_WARMUP = 3


def run(req: ProfileRequest, result_path: Path) -> Path | None:
    if req.mode not in ("event", "nsys", *NCU_MODES):
        raise ExpectedError("mode", f"the worker runs modes event, nsys, annotation and ncu, not {req.mode!r}")
    counters = req.mode in NCU_MODES
    phases: dict[str, float] = {}
    mark = [time.perf_counter()]

    def phase(name: str) -> None:
        now = time.perf_counter()
        phases[name] = round(now - mark[0], 3)
        mark[0] = now

    progress(0.02, "importing torch")
    import torch

    phase("import_torch")

    use_cuda = torch.cuda.is_available() and not req.force_cpu
    if counters and not use_cuda:
        raise ExpectedError("mode", f"mode {req.mode!r} needs an NVIDIA GPU (Nsight Compute counters); none is "
                                    "usable here. mode='event' runs on the CPU through the Triton interpreter.")
    if not use_cuda:
        # Must be set before any @triton.jit decorator runs (kernel modules are imported lazily).
        os.environ["TRITON_INTERPRET"] = "1"
    from . import registry

    pkg = registry.load(Path(req.kernel_source))
    try:
        params = pkg.validate_params(req.params)
        version = pkg.version(req.version)
    except ParamError as e:
        raise ExpectedError("params", str(e)) from e
    device = "cuda" if use_cuda else "cpu"
    _check_memory(torch, pkg, params, use_cuda)
    dev = device_state(torch, use_cuda, query_smi=not counters)
    progress(0.08, f"building inputs on {dev.name}")
    inputs = pkg.make_inputs(params, device)
    plan: Plan = version.build(inputs, params)
    if [s.name for s in plan.stages] != [s.name for s in version.stages]:
        raise ExpectedError("params", f"version {version.name} built stages {[s.name for s in plan.stages]}, "
                                      f"but declares {[s.name for s in version.stages]}")
    warnings: list[str] = []
    streams = _streams(torch, plan, use_cuda)
    phase("device_init_inputs_build")

    progress(0.15, "first run (JIT compile, autotune) and correctness check")
    rets = _run_plan(torch, plan, streams, use_cuda)
    phase("first_run_jit_autotune")
    ref = pkg.reference(inputs, params)
    correctness = check_correctness(torch, plan.output(), ref, pkg.tolerance(params["dtype"]))
    if not correctness["ok"]:
        msgs = "; ".join(o.get("message", "") for o in correctness["outputs"] if not o.get("ok")) or correctness.get("message", "")
        hint = ""
        if not use_cuda and params["dtype"] == "bfloat16":
            hint = (" Note: the Triton interpreter (CPU) miscomputes bfloat16 loads/stores with torch 2.13 "
                    "(seen with triton 3.6 and 3.9): profile bfloat16 on a GPU, or use float16/float32 on the CPU.")
        raise ExpectedError("incorrect", f"{pkg.name} {version.name} produced wrong results, so it was not "
                                         f"profiled: {msgs}.{hint}", correctness)

    phase("correctness")
    autotuned_here = [s.name for s in plan.stages if getattr(s.kernel, "configs_timings", None)]
    if req.prepare_only:
        result_path.write_text(json.dumps({"status": "ok", "prepared": True, "autotuned_stages": autotuned_here,
                                           "phases_s": phases}))
        return None
    if counters and autotuned_here:
        warnings.append(f"stage(s) {autotuned_here}: Triton's autotuner benchmarked its configs inside the Nsight "
                        "Compute process (cold autotune cache), where instrumentation distorts the timings it "
                        "ranks by; the chosen config is cached and reused. Clear Triton's cache and profile in "
                        "mode 'event' first (kprof does this itself for a new source/params) if the tiling looks off.")
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    order = [p.name for p in pkg.params]
    final_dir = Path(req.out_root) / req.mode / pkg.name / params_dirname(params.as_dict(), order) / f"{stamp}-{version.name}"
    work_dir = final_dir.with_name(final_dir.name + ".partial")
    work_dir.mkdir(parents=True, exist_ok=False)

    stage_results: list[StageResult] = []
    captured: list[dict[str, Any]] = []
    spec = None
    if dev.spec_key:
        from .devices import match_device

        spec = match_device(dev.name)
    for i, (stage, model) in enumerate(zip(plan.stages, version.stages)):
        progress(0.25 + 0.6 * i / len(plan.stages), f"timing stage {stage.name}")
        ret = rets[i]
        resources = _dump_compiled(ret, work_dir / "compiled" / stage.name)
        tiling = _write_tiling(stage, work_dir / "tiling")
        phase("compiled_ir_tiling")
        blocks = stage.grid_blocks() if callable(stage.grid_blocks) else stage.grid_blocks
        static = dict(
            name=stage.name, flops=float(model.flops(params)), bytes_model=float(model.bytes(params)),
            tensor_cores=model.tensor_cores, dtype=params["dtype"],
            peak_flops_per_s=spec.peak_flops_per_s(params["dtype"], model.tensor_cores) if spec else None,
            peak_bytes_per_s=spec.peak_bytes_per_s if spec else None,
            grid_blocks=blocks, sm_count=dev.sm_count, persistent=bool(getattr(stage, "persistent", False)),
            tiling=tiling, resources=resources)
        if counters or req.mode == "nsys":
            captured.append(static)
            continue
        # Each stage alone, on the current stream: CUDA events are recorded on the current stream,
        # so timing a stage launched on a side stream would measure an empty interval.
        timing = Timer(torch, use_cuda, req).time(stage.fn)
        stage_results.append(StageResult(timing=timing, **static))
        phase(f"timing_{stage.name}")
    if req.mode == "nsys":
        return _capture_timeline(torch, req, plan, streams, use_cuda, captured, work_dir, final_dir, result_path, dict(
            kernel=pkg.name, version=version.name, mode=req.mode, plan_kind=plan.kind, params=params.as_dict(),
            param_order=order, device=dev, warnings=warnings, correctness=correctness, created_at=stamp,
            profile_dir=str(final_dir), request=req.model_dump(), phases_s=phases), phase)
    if counters:
        return _capture_for_ncu(torch, req, plan, streams, captured, work_dir, final_dir, result_path, dict(
            kernel=pkg.name, version=version.name, mode=req.mode, plan_kind=plan.kind, params=params.as_dict(),
            param_order=order, device=dev, warnings=warnings, correctness=correctness, created_at=stamp,
            profile_dir=str(final_dir), request=req.model_dump(), phases_s=phases), phase)
    plan_total = None
    if len(plan.stages) > 1:
        progress(0.88, "timing the whole plan")
        plan_total = Timer(torch, use_cuda, req).time(lambda: _run_plan(torch, plan, streams, use_cuda, sync=False))
        if plan.kind == "concurrent":
            warnings.append("concurrent plan: per-stage event times are each stage run alone on one stream, so "
                            "they say nothing about the overlap; only the whole-plan time reflects it (use mode "
                            "'nsys' for the timeline)")
    if use_cuda:
        dev.clocks_after = _nvidia_smi(dev.index or 0)
    warnings += _quality_warnings(dev, stage_results, plan_total)
    phase("timing_plan_and_clocks")

    result = ProfileResult(
        kernel=pkg.name, version=version.name, mode=req.mode, plan_kind=plan.kind, params=params.as_dict(),
        param_order=order, device=dev, stages=stage_results, plan_total=plan_total, warnings=warnings,
        correctness=correctness, created_at=stamp, profile_dir=str(final_dir), request=req.model_dump(),
        phases_s=phases)
    progress(0.95, "writing artifacts")
    write_params_and_samples(work_dir, result)
    result_path.write_text(json.dumps({"status": "ok", "work_dir": str(work_dir), "profile_dir": str(final_dir)}))
    return work_dir


def _capture_for_ncu(torch, req: ProfileRequest, plan: Plan, streams, captured: list[dict[str, Any]],
                     work_dir: Path, final_dir: Path, result_path: Path, result_fields: dict[str, Any],
                     phase) -> Path:
    """Launch each stage ``req.ncu_launches`` times inside its NVTX range, the only launches
    Nsight Compute profiles (``--nvtx-include kprof_<stage>/``); everything before (JIT,
    autotuning, the correctness run) ran outside any range and is not profiled. ncu replays
    each profiled launch once per counter pass, restoring memory in between."""
    from .ncu import range_name

    dev = result_fields["device"]
    dev.clocks_locked = req.clock_control == "base"
    dev.clock_control = ("ncu --clock-control base: Nsight Compute locks the SM clock to base during each "
                         "profiled launch and restores it after" if req.clock_control == "base" else
                         "ncu --clock-control none: clocks free (boost and thermals move results)")
    torch.cuda.synchronize()
    for i, stage in enumerate(plan.stages):
        progress(0.3 + 0.6 * i / len(plan.stages), f"Nsight Compute profiling stage {stage.name}")
        fn = _stage_callable(torch, stage, streams, True)
        for _ in range(req.ncu_launches):
            torch.cuda.nvtx.range_push(range_name(stage.name))
            fn()
            torch.cuda.nvtx.range_pop()
            torch.cuda.synchronize()
    phase("ncu_profiled_launches")
    capture = {"result": json.loads(json.dumps(result_fields, default=lambda o: o.model_dump())),
               "stages": json.loads(json.dumps(captured, default=lambda o: o.model_dump()))}
    (work_dir / "capture.json").write_text(json.dumps(capture, indent=2, default=str))
    result_path.write_text(json.dumps({"status": "ok", "work_dir": str(work_dir), "profile_dir": str(final_dir),
                                       "captured": True}))
    return work_dir


def _capture_timeline(torch, req: ProfileRequest, plan: Plan, streams, use_cuda: bool, captured: list[dict[str, Any]],
                      work_dir: Path, final_dir: Path, result_path: Path, fields: dict[str, Any], phase) -> Path:
    """Record ``req.timeline_iters`` back-to-back iterations of the whole plan with
    torch.profiler (CUPTI through Kineto on a GPU; CPU activity only without one), each stage
    inside a ``kprof_<stage>`` range (record_function and NVTX), then analyse the trace."""
    from torch.profiler import ProfilerActivity, profile, record_function, schedule

    from . import timeline as tl_lib

    for _ in range(3):  # warm-up outside the recording
        _run_plan(torch, plan, streams, use_cuda)
    phase("timeline_warmup")
    progress(0.4, f"recording {req.timeline_iters} iterations of the plan with torch.profiler")
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if use_cuda else [])

    def ranged(stage, fn):
        def run():
            with record_function(tl_lib.RANGE_PREFIX + stage.name):
                if use_cuda:
                    torch.cuda.nvtx.range_push(tl_lib.RANGE_PREFIX + stage.name)
                try:
                    return fn()
                finally:
                    if use_cuda:
                        torch.cuda.nvtx.range_pop()
        return run

    # Kineto's own warm-up steps: the first iterations under CUPTI carry its start-up cost
    # (seen on an H100: 5.6x slower spans in the first recorded iteration), so only the
    # iterations after them are kept.
    sched = schedule(wait=0, warmup=TIMELINE_PROFILER_WARMUP, active=req.timeline_iters, repeat=1)
    with profile(activities=activities, schedule=sched) as prof:
        total = TIMELINE_PROFILER_WARMUP + req.timeline_iters
        for i in range(total):
            with record_function(tl_lib.ITER_RANGE):
                _run_plan(torch, plan, streams, use_cuda, sync=False, wrap=ranged)
            if use_cuda and i == total - 1:
                torch.cuda.synchronize()  # every recorded kernel has finished before the trace is cut
            prof.step()
    trace_path = work_dir / "trace.json"
    prof.export_chrome_trace(str(trace_path))
    phase("timeline_record")
    progress(0.8, "analysing the timeline")
    tr = tl_lib.load_trace(trace_path)
    names = [s["name"] for s in captured]
    tl = tl_lib.analyze(tr, names, fields["device"].sm_count)
    tl.engine = ("CUPTI via torch.profiler (Kineto) " + torch.__version__ if use_cuda else
                 "torch.profiler, CPU activity only (no GPU)")
    stage_results = []
    for static, row in zip(captured, tl.stages):
        # The stage's GPU span per iteration (first kernel start to last kernel end): for a
        # launch-bound stage that is what it costs, not the sum of its tiny kernels.
        samples = row["gpu_span_ns_samples"]
        method = "cupti gpu span per iteration"
        if not samples:  # CPU: the range's wall time per iteration
            samples = [float(v) for v in tr.ranges[tr.ranges["name"] == tl_lib.RANGE_PREFIX + static["name"]]["dur"]]
            method = "cpu range wall time per iteration"
        if not samples:
            raise ExpectedError("mode", f"stage {static['name']!r}: nothing recorded in its range")
        stage_results.append(StageResult(timing=Timing(samples_ns=samples, method=method, l2_flushed=False,
                                                       stop_reason=f"{req.timeline_iters} recorded iterations"),
                                         **static))
    plan_total = None
    if tl.iteration_span_ns:
        plan_total = Timing(samples_ns=tl.iteration_span_ns, method="gpu span per iteration (first kernel start to "
                            "last kernel end)", l2_flushed=False, stop_reason=f"{req.timeline_iters} iterations")
    warnings = list(fields.pop("warnings"))
    if use_cuda:
        warnings.append("timeline mode: no L2 flush and no clock locking; iterations run back to back as in an "
                        "application, so times include warm caches and launch overhead")
    if plan.kind == "concurrent":
        warnings.append("concurrent plan: per-stage durations are each stage's kernel time inside the overlapped "
                        "run; the whole-plan span and the stream overlap table are what measure concurrency")
    warnings += tl.notes
    result = ProfileResult(**fields, stages=stage_results, plan_total=plan_total, warnings=warnings,
                           timeline=tl.to_dict())
    _write_timeline_artifacts(work_dir, tr, tl, result)
    write_params_and_samples(work_dir, result)
    phase("timeline_analysis")
    result.phases_s = dict(fields["phases_s"])
    (work_dir / "result.json").write_text(result.model_dump_json(indent=2))
    result_path.write_text(json.dumps({"status": "ok", "work_dir": str(work_dir), "profile_dir": str(final_dir)}))
    return work_dir


def _write_timeline_artifacts(work_dir: Path, tr, tl, result: ProfileResult) -> None:
    import pandas as pd

    from . import timeline as tl_lib

    d = work_dir / "timeline"
    d.mkdir(exist_ok=True)
    tr.kernels.to_csv(d / "kernels.csv", index=False)
    tr.api.to_csv(d / "cuda_api.csv", index=False)
    tr.memops.to_csv(d / "memops.csv", index=False)
    for name in ("kernel_summary", "api_summary", "memop_summary", "streams", "gaps", "launch_order", "waves"):
        pd.DataFrame(getattr(tl, name)).to_csv(d / f"{name}.csv", index=False)
    pd.DataFrame([{k: v for k, v in s.items() if not k.endswith("_samples")} for s in tl.stages]).to_csv(
        d / "stages.csv", index=False)
    try:
        tl_lib.plot(tr, tl, work_dir / "timeline.png", f"{result.kernel} {result.version}")
    except Exception as e:  # noqa: BLE001 — a plotting failure must not lose the measurements
        result.warnings.append(f"timeline.png not written: {type(e).__name__}: {e}")


def _streams(torch, plan: Plan, use_cuda: bool):
    if not use_cuda or plan.kind != "concurrent":
        return None
    return {s.stream: torch.cuda.Stream() for s in plan.stages}


def _stage_callable(torch, stage, streams, use_cuda):
    if streams is None:
        return stage.fn
    stream = streams[stage.stream]

    def fn():
        with torch.cuda.stream(stream):
            return stage.fn()
    return fn


def _run_plan(torch, plan: Plan, streams, use_cuda: bool, sync: bool = True, wrap=None) -> list[Any]:
    rets = []
    if streams is not None:
        cur = torch.cuda.current_stream()
        for s in streams.values():
            s.wait_stream(cur)
    for stage in plan.stages:
        fn = _stage_callable(torch, stage, streams, use_cuda)
        rets.append((wrap(stage, fn) if wrap else fn)())
    if streams is not None:
        cur = torch.cuda.current_stream()
        for s in streams.values():
            cur.wait_stream(s)
    if use_cuda and sync:
        torch.cuda.synchronize()
    return rets


def _quality_warnings(dev: DeviceState, stages: list[StageResult], plan_total: Timing | None) -> list[str]:
    out = []
    if dev.kind == "cpu":
        out.append("CPU timing: no GPU was used (Triton interpreter / torch CPU); times say nothing about GPU "
                   "performance and no roofline or % of peak is given")
    elif dev.spec_key is None:
        out.append(f"unknown device: {dev.spec_note}")
    if dev.kind == "cuda":
        before, after = dev.clocks_before, dev.clocks_after
        out.append("clocks not locked by kprof (event mode): SM clock read "
                   f"{before.get('clocks.sm', '?')} MHz before and {after.get('clocks.sm', '?')} MHz after timing "
                   f"(max {before.get('clocks.max.sm', '?')} MHz); boost and thermals can move results a few %")
    for s in stages:
        t = s.timing
        if t.rel_iqr > 0.05:
            out.append(f"stage {s.name}: noisy timing, IQR is {100 * t.rel_iqr:.1f}% of the median "
                       f"({t.runs} runs, stopped by {t.stop_reason}); compare versions only beyond this spread")
        if t.runs < 10 and t.stop_reason == "budget":
            out.append(f"stage {s.name}: only {t.runs} timed runs (budget reached)")
        if dev.kind == "cuda" and t.median_ns < 5_000:
            out.append(f"stage {s.name}: {t.median_ns / 1e3:.2f} µs is near CUDA-event resolution and launch "
                       "overhead; use a larger problem or the ncu modes for kernel-only time")
    if plan_total is not None and plan_total.rel_iqr > 0.05:
        out.append(f"whole plan: noisy timing, IQR {100 * plan_total.rel_iqr:.1f}% of the median")
    return out


def _cache_control(result: ProfileResult) -> str:
    if result.mode in NCU_MODES:
        cc = result.profiler.get("cache_control", "all")
        return ("ncu --cache-control all: every cache flushed before each replay pass" if cc == "all"
                else "ncu --cache-control none: caches keep data between replay passes")
    return "L2 flushed before each timed run (256 MiB buffer zeroed)" if result.device.kind == "cuda" else "none (CPU)"


def write_params_and_samples(work_dir: Path, result: ProfileResult) -> None:
    """params.json (the source of truth for the Configuration table), samples.csv, result.json."""
    import csv

    d = result.device
    params_json = {
        "kernel": result.kernel, "version": result.version, "mode": result.mode, "plan_kind": result.plan_kind,
        **result.params,
        "params": result.params,
        "device": {"name": d.name, "kind": d.kind, "index": d.index, "sm_count": d.sm_count, "l2_bytes": d.l2_bytes,
                   "memory_bytes": d.memory_bytes, "compute_capability": d.compute_capability,
                   "spec_key": d.spec_key, "spec_name": d.spec_name, "spec_note": d.spec_note},
        "clock_state": {"clocks_locked": d.clocks_locked, "clock_control": d.clock_control,
                        "before": d.clocks_before, "after": d.clocks_after},
        "cache_control": _cache_control(result),
        "profiler": result.profiler or None,
        "versions": {"torch": d.torch_version, "triton": d.triton_version, "cuda": d.cuda_version,
                     "driver": d.driver_version, "python": d.python_version, "kprof_mcp": _kprof_version()},
        "triton_interpret": d.triton_interpret,
        "created_at": result.created_at,
    }
    (work_dir / "params.json").write_text(json.dumps(params_json, indent=2, default=str))
    rows = [{"stage": s.name, "run": i, "time_ns": v} for s in result.stages for i, v in enumerate(s.timing.samples_ns)]
    if result.plan_total is not None:
        rows += [{"stage": "__plan__", "run": i, "time_ns": v} for i, v in enumerate(result.plan_total.samples_ns)]
    with open(work_dir / "samples.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["stage", "run", "time_ns"])
        w.writeheader()
        w.writerows(rows)
    (work_dir / "result.json").write_text(result.model_dump_json(indent=2))


def _kprof_version() -> str:
    from . import __version__

    return __version__


def describe(source: str) -> dict[str, Any]:
    from . import registry

    pkg = registry.load(Path(source))
    out = pkg.describe()
    out["source"] = str(Path(source).resolve())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="kprof_mcp.worker")
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("describe")
    d.add_argument("--source", required=True)
    r = sub.add_parser("run")
    r.add_argument("--request", required=True)
    r.add_argument("--result", required=True)
    f = sub.add_parser("finish")
    f.add_argument("--request", required=True)
    f.add_argument("--work-dir", required=True)
    f.add_argument("--log", required=True)
    f.add_argument("--profiler", required=True)
    f.add_argument("--result", required=True)
    a = ap.parse_args(argv)
    if a.cmd == "finish":
        return _finish_main(a)
    if a.cmd == "describe":
        try:
            print(json.dumps({"status": "ok", "kernel": describe(a.source)}))
            return 0
        except Exception as e:  # noqa: BLE001 — report any import failure of user code to the parent
            print(json.dumps({"status": "error", "kind": "load", "message": f"{type(e).__name__}: {e}",
                              "traceback": traceback.format_exc(limit=5)}))
            return 2
    result_path = Path(a.result)
    try:
        req = ProfileRequest.model_validate_json(Path(a.request).read_text())
        run(req, result_path)
        return 0
    except ExpectedError as e:
        result_path.write_text(json.dumps({"status": "error", "kind": e.kind, "message": str(e), "detail": e.detail},
                                          default=str))
        return 2
    except Exception as e:  # noqa: BLE001 — known CUDA failures get an actionable message; others a traceback
        known = classify_failure(e)
        if known is None:
            raise
        traceback.print_exc()
        result_path.write_text(json.dumps({"status": "error", "kind": known[0], "message": known[1]}))
        return 3


def classify_failure(e: BaseException) -> tuple[str, str] | None:
    """Out-of-memory and CUDA errors raised by a kernel, as (kind, actionable message)."""
    import errno

    name, text = type(e).__name__, str(e)
    first = text.strip().splitlines()[0] if text.strip() else name
    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        return ("disk", f"writing the profile's artifacts failed: {e.strerror} ({e.filename or 'a file'}). The "
                        "incomplete directory keeps its .partial name and is never read as a finished profile. "
                        "Free disk space (or raise the quota) and profile again.")
    if "OutOfMemory" in name or "out of memory" in text.lower() or "allocate memory" in text.lower():
        return ("oom", f"the kernel ran out of device memory ({name}: {first}). Use smaller sizes: the memory check "
                       "before launch counts the package's declared memory_bytes, so a kernel that allocates more "
                       "than it declares gets past it. The server is unaffected.")
    if name == "AcceleratorError" or "CUDA error" in text or "illegal memory access" in text \
            or "cudaError" in text or "CUDA_ERROR" in text:
        return ("cuda", f"CUDA error in the kernel ({name}: {first}). The kernel's CUDA context is unusable after "
                        "this, so its process was discarded; the server is unaffected. Check indices and masks "
                        "(an out-of-bounds load or store), e.g. with compute-sanitizer.")
    return None


def _finish_main(a) -> int:
    from .modes.nsight import FinishError, finish

    result_path = Path(a.result)
    try:
        req = ProfileRequest.model_validate_json(Path(a.request).read_text())
        work_dir = Path(a.work_dir)
        result = finish(req, work_dir, Path(a.log).read_text(errors="replace"), json.loads(Path(a.profiler).read_text()))
        result_path.write_text(json.dumps({"status": "ok", "work_dir": str(work_dir), "profile_dir": result.profile_dir}))
        return 0
    except FinishError as e:
        result_path.write_text(json.dumps({"status": "error", "kind": e.kind, "message": str(e)}))
        return 2


if __name__ == "__main__":
    sys.exit(main())

"""The profiling child: the only process that imports torch, triton and the user's kernel.

It loads the package, checks the parameters and memory, builds the inputs and the plan,
runs it once (JIT, autotuning) and checks correctness against the reference, collects each
stage's static facts (FLOP/byte model, peaks, compiled IR and resources, tiling), then hands
over to the mode's ``capture``. The protocol with the parent is :mod:`kprof_mcp.protocol`.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

from ..capture.artifacts import new_run_dir, params_dirname, write_compiled, write_tiling
from ..capture.context import Capture, ReadKeys, run_plan, streams_for
from ..capture.correctness import check_correctness
from ..kernel.api import KernelPackage, ParamError, Params
from ..models import DeviceState, ProfileRequest
from ..protocol import EXIT_EXPECTED, EXIT_KNOWN_FAILURE, ExpectedError, progress

L2_FLUSH_BYTES = 256 * 1024 * 1024  # event mode's flush buffer, counted in the memory check


def device_state(torch, use_cuda: bool, query_smi: bool = True, locked_mhz: int | None = None) -> DeviceState:
    import triton

    from ..devices import try_match_device
    from ..tools import nvidia_smi

    common = dict(
        torch_version=torch.__version__,
        triton_version=triton.__version__,
        python_version=platform.python_version(),
        triton_interpret=os.environ.get("TRITON_INTERPRET") == "1",
    )
    if not use_cuda:
        return DeviceState(
            kind="cpu",
            name=platform.processor() or platform.machine() or "cpu",
            spec_note="CPU wall time, no GPU: no GPU peaks or roofline",
            clock_control="none",
            **common,
        )
    idx = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(idx)
    spec, note = try_match_device(props.name)
    smi = nvidia_smi.clocks(idx) if query_smi else {}
    from ..clocks import read_marker

    # The engine's clock lock on this GPU: as the request says (the engine's own), else its marker.
    lock = {"mhz": locked_mhz} if locked_mhz else read_marker(nvidia_smi.smi_id(idx))
    return DeviceState(
        kind="cuda",
        name=props.name,
        index=idx,
        sm_count=props.multi_processor_count,
        l2_bytes=getattr(props, "L2_cache_size", None),
        memory_bytes=props.total_memory,
        compute_capability=f"{props.major}.{props.minor}",
        spec_key=spec.key if spec else None,
        spec_name=spec.name if spec else None,
        spec_note=note,
        peak_gbps=spec.peak_gbps if spec else None,
        clocks_locked=bool(lock),
        sm_clock_lock_mhz=int(lock["mhz"]) if lock and lock.get("mhz") else None,
        clock_control=(
            f"kprof locked the SM clock at {lock.get('mhz')} MHz (nvidia-smi -lgc) for the run; readings are "
            "recorded before and after"
            if lock
            else "free: kprof did not lock the GPU clocks for this run; readings are recorded before and after"
        ),
        clocks_before=smi,
        driver_version=smi.get("driver_version"),
        cuda_version=torch.version.cuda,
        **common,
    )


def _check_memory(torch, pkg: KernelPackage, params: Params, use_cuda: bool, also_held: float = 0.0) -> None:
    """Refuse (ExpectedError 'too_large') when the inputs of ``params`` (plus ``also_held`` bytes
    already needed by other inputs alive at the same time) would not fit."""
    need = float(pkg.memory_bytes(params)) + also_held
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
            "choose smaller sizes",
            {"estimate_bytes": need, "free_bytes": free},
        )


def _static(stage, model, params: Params, dev: DeviceState, spec, resources, tiling) -> dict[str, Any]:
    """What is known of a stage before measuring it: its models, the device's peaks, its launch."""
    blocks = stage.grid_blocks() if callable(stage.grid_blocks) else stage.grid_blocks
    return dict(
        name=stage.name,
        flops=float(model.flops(params)),
        bytes_model=float(model.bytes(params)),
        int_ops=float(model.int_ops(params)) if model.int_ops else None,
        tensor_cores=model.tensor_cores,
        dtype=params["dtype"],
        peak_flops_per_s=spec.peak_flops_per_s(params["dtype"], model.tensor_cores) if spec else None,
        peak_bytes_per_s=spec.peak_bytes_per_s if spec else None,
        min_kernel_ns=spec.min_kernel_ns if spec else None,
        grid_blocks=blocks,
        sm_count=dev.sm_count,
        persistent=bool(getattr(stage, "persistent", False)),
        tiling=tiling,
        resources=resources,
    )


def run(req: ProfileRequest) -> dict[str, Any]:
    """Profile one request; returns the ok-record for the parent (see :mod:`kprof_mcp.protocol`)."""
    import time

    from .. import packages
    from ..modes import get_mode
    from ..parsers.triton import autotuned_here

    mode = get_mode(req.mode)
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
    if mode.needs_gpu and not use_cuda and not req.prepare_only:
        raise ExpectedError(
            "mode",
            f"mode {req.mode!r} needs an NVIDIA GPU (Nsight Compute counters); none is "
            "usable here. mode='event' runs on the CPU through the Triton interpreter.",
        )
    if not use_cuda:
        # Must be set before any @triton.jit decorator runs (kernel modules are imported lazily).
        os.environ["TRITON_INTERPRET"] = "1"
    pkg = packages.load(Path(req.kernel_source))
    try:
        params = pkg.validate_params(req.params)
        version = pkg.version(req.version)
    except ParamError as e:
        raise ExpectedError("params", str(e)) from e
    _check_memory(torch, pkg, params, use_cuda)
    dev = device_state(torch, use_cuda, query_smi=mode.query_smi_in_child, locked_mhz=req.sm_clock_locked_mhz)
    if req.wait_for:
        req = _wait_for_preparation(req, Path(req.wait_for))
        phase("package_device_and_wait_for_preparation")
    progress(0.08, f"building inputs on {dev.name}")
    inputs = pkg.make_inputs(params, "cuda" if use_cuda else "cpu")
    held = torch.cuda.memory_allocated() if use_cuda else 0
    plan = version.build(inputs, params)
    plan_bytes = float(max(0, torch.cuda.memory_allocated() - held)) if use_cuda else 0.0  # its own buffers
    if [s.name for s in plan.stages] != [s.name for s in version.stages]:
        raise ExpectedError(
            "params",
            f"version {version.name} built stages {[s.name for s in plan.stages]}, "
            f"but declares {[s.name for s in version.stages]}",
        )
    streams = streams_for(torch, plan, use_cuda)
    phase("device_init_inputs_build")

    progress(0.15, "first run (JIT compile, autotune) and correctness check")
    # In a warm worker an unchanged kernel keeps its autotuner's earlier timings: only new ones count.
    timings_before = {s.name: getattr(s.kernel, "configs_timings", None) for s in plan.stages}
    rets = run_plan(torch, plan, streams, use_cuda)
    phase("first_run_jit_autotune")
    if req.correctness_checked is not None:
        # Checked by the uninstrumented preparation run just before, on the same source and the same
        # (seeded) inputs: under a profiler every launch of the check costs time and shows nothing new.
        correctness = dict(
            req.correctness_checked,
            checked_in="the preparation run without the profiler, same source and inputs, just before",
        )
    else:
        seen = ReadKeys(inputs)
        ref = pkg.reference(seen, params)
        correctness = check_correctness(torch, plan.output(), ref, pkg.tolerance(params["dtype"]))
        correctness["reference_reads"] = seen.read_keys()  # the inputs the result needs (scratch_bytes)
    if not correctness["ok"]:
        msgs = "; ".join(
            o.get("message", "") for o in correctness["outputs"] if not o.get("ok")
        ) or correctness.get("message", "")
        hint = ""
        if not use_cuda and params["dtype"] == "bfloat16":
            hint = (
                " Note: the Triton interpreter (CPU) miscomputes bfloat16 loads/stores with torch 2.13 "
                "(seen with triton 3.6 and 3.9): profile bfloat16 on a GPU, or use float16/float32 on the CPU."
            )
        raise ExpectedError(
            "incorrect",
            f"{pkg.name} {version.name} produced wrong results, so it was not profiled: {msgs}.{hint}",
            correctness,
        )
    phase("correctness")
    tuned = [
        s.name
        for s in plan.stages
        if autotuned_here(s.kernel)
        and getattr(s.kernel, "configs_timings", None) is not timings_before[s.name]
    ]
    if req.prepare_only:
        return {
            "status": "ok",
            "prepared": True,
            "autotuned_stages": tuned,
            "phases_s": phases,
            "correctness": correctness,
        }

    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    order = [p.name for p in pkg.params]
    final_dir = (
        Path(req.out_root)
        / req.mode
        / pkg.name
        / params_dirname(params.as_dict(), order)
        / f"{stamp}-{version.name}"
    )
    work_dir = new_run_dir(req.out_root, final_dir)
    spec = None
    if dev.spec_key:
        from ..devices import match_device

        spec = match_device(dev.name)
    statics = []
    for stage, model, ret in zip(plan.stages, version.stages, rets):
        resources = write_compiled(ret, work_dir / "compiled" / stage.name)
        tiling = write_tiling(stage, work_dir / "tiling")
        statics.append(_static(stage, model, params, dev, spec, resources, tiling))
    phase("compiled_ir_tiling")
    cap = Capture(
        torch=torch,
        req=req,
        pkg=pkg,
        params=params,
        version=version,
        plan=plan,
        streams=streams,
        use_cuda=use_cuda,
        device=dev,
        stages=statics,
        work_dir=work_dir,
        final_dir=final_dir,
        correctness=correctness,
        created_at=stamp,
        autotuned_here=tuned,
        inputs=inputs,
        plan_bytes=plan_bytes,
        phases_s=phases,
        _mark=mark,
    )
    mode.capture(cap)
    return {"status": "ok", "work_dir": str(work_dir), "profile_dir": str(final_dir)}


def _wait_for_preparation(req: ProfileRequest, gate: Path, poll_s: float = 0.005) -> ProfileRequest:
    """Block until the engine says the preparation run (compile, autotune, correctness, in the
    warm worker, started alongside this process) ended: nothing of this child touches the GPU's
    SMs before, so the preparation's autotuning is timed alone. Its correctness stands for ours."""
    import json
    import time

    progress(0.06, "waiting for the preparation run (compile, autotune, correctness) outside the profiler")
    while not gate.exists():
        time.sleep(poll_s)  # the engine kills this process group if it gives up
    said = json.loads(gate.read_text())
    if not said.get("ok"):
        raise ExpectedError("prepare", f"the preparation run failed: {said.get('message', '')}")
    return req.model_copy(update={"correctness_checked": said.get("correctness")})


def classify_failure(e: BaseException) -> tuple[str, str] | None:
    """Out-of-memory and CUDA errors raised by a kernel, and full disks, as (kind, actionable message)."""
    import errno

    name, text = type(e).__name__, str(e)
    first = text.strip().splitlines()[0] if text.strip() else name
    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        return (
            "disk",
            f"writing the profile's artifacts failed: {e.strerror} ({e.filename or 'a file'}). The "
            "incomplete directory keeps its .partial name and is never read as a finished profile. "
            "Free disk space (or raise the quota) and profile again.",
        )
    if "OutOfMemory" in name or "out of memory" in text.lower() or "allocate memory" in text.lower():
        return (
            "oom",
            f"the kernel ran out of device memory ({name}: {first}). Use smaller sizes: the memory check "
            "before launch counts the package's declared memory_bytes, so a kernel that allocates more "
            "than it declares gets past it. The server is unaffected.",
        )
    if (
        name == "AcceleratorError"
        or "CUDA error" in text
        or "illegal memory access" in text
        or "cudaError" in text
        or "CUDA_ERROR" in text
    ):
        return (
            "cuda",
            f"CUDA error in the kernel ({name}: {first}). The kernel's CUDA context is unusable after "
            "this, so its process was discarded; the server is unaffected. Check indices and masks "
            "(an out-of-bounds load or store), e.g. with compute-sanitizer.",
        )
    return None


def describe(source: str) -> dict[str, Any]:
    from .. import packages

    pkg = packages.load(Path(source))
    out = pkg.describe()
    out["source"] = str(Path(source).resolve())
    return out


def finish(req: ProfileRequest, work_dir: Path, log: str, profiler: dict[str, Any]) -> dict[str, Any]:
    """Read a profiler's output into the profile's result (the mode's ``read_output``)."""
    from ..modes import ModeError, get_mode

    try:
        result = get_mode(req.mode).read_output(req, work_dir, log, profiler)
    except ModeError as e:
        raise ExpectedError(e.kind, str(e)) from None
    return {"status": "ok", "work_dir": str(work_dir), "profile_dir": result.profile_dir}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kprof_mcp.child")
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
    if a.cmd == "describe":
        try:
            print(json.dumps({"status": "ok", "kernel": describe(a.source)}))
            return 0
        except Exception as e:  # noqa: BLE001 — report any import failure of user code to the parent
            print(
                json.dumps(
                    {
                        "status": "error",
                        "kind": "load",
                        "message": f"{type(e).__name__}: {e}",
                        "traceback": traceback.format_exc(limit=5),
                    }
                )
            )
            return EXIT_EXPECTED

    def work() -> dict[str, Any]:
        req = ProfileRequest.model_validate_json(Path(a.request).read_text())
        if a.cmd == "finish":
            return finish(
                req,
                Path(a.work_dir),
                Path(a.log).read_text(errors="replace"),
                json.loads(Path(a.profiler).read_text()),
            )
        return run(req)

    return record_to(Path(a.result), work)


def record_to(result_path: Path, work: Callable[[], dict[str, Any]]) -> int:
    """Run a child command's ``work`` and write its record to ``result_path`` for the parent:
    the ok-record, an expected failure's error record, or a known CUDA failure classified
    (anything else propagates with its traceback). Returns the child's exit code."""
    try:
        record = work()
        result_path.write_text(json.dumps(record, default=str))
        return 0
    except ExpectedError as e:
        result_path.write_text(json.dumps(e.record(), default=str))
        return EXIT_EXPECTED
    except Exception as e:  # noqa: BLE001 — known CUDA failures get an actionable message; others a traceback
        known = classify_failure(e)
        if known is None:
            raise
        traceback.print_exc()
        result_path.write_text(json.dumps({"status": "error", "kind": known[0], "message": known[1]}))
        return EXIT_KNOWN_FAILURE


if __name__ == "__main__":
    sys.exit(main())

"""The words of the idle causes (:func:`kprof_mcp.analysis.diagnosis.timeline.idle_opportunities`): what
to do, the trigger with its evidence (ending with the Python line and the GPU's busy share), and why."""

from __future__ import annotations

from ...analysis.diagnosis import Facts
from ...analysis.idle import RELOADED, WAITED_LAUNCH
from ..markdown import us
from ..timeline import source_words
from .memory import Words, _fmt


# The idle causes (diagnosis.idle_opportunities): triggers end with the Python line, the GPU's busy share.
def _idle(f: Facts, trigger: str) -> str:
    return f"{trigger}{source_words(f.source_line)}; gpu_busy_pct={_fmt(f.gpu_busy_pct)}"


def _per(f: Facts) -> str:
    return f"{_fmt(f.idle_pct)}% of the wall time"


def _calls(rows: list[dict], n: int = 2) -> str:
    return ", ".join(f"{r['call']} x{r['count']}" for r in rows[:n])


def _launch(f: Facts) -> Words:
    if f.idle_pct is None:  # a timeline without an idle breakdown: its launch verdict
        return (
            "Cut launch overhead: fuse the tiny kernels, or capture the plan in a CUDA graph",
            f"gpu_busy_pct={_fmt(f.gpu_busy_pct)}",
            "the GPU waits for the host between kernels",
        )
    trigger = f"gpu_idle_in_launches={_per(f)}, {_fmt(f.launches_per_occurrence)} launches per occurrence"
    fix = "capture the step as a CUDA graph (torch.cuda.CUDAGraph, torch.compile mode='reduce-overhead') or fuse the small kernels"
    hint = "each kernel takes about as long as the host needs to issue the next"
    if f.kernel is not None:  # a run of launches of one kernel (analysis.replay.batch)
        name = (f.kernel.split("<")[0].split("(")[0].split("::")[-1].split() or [f.kernel])[-1][:60]
        batch = f"launch the {f.kernels} launches of {name} in a row as one batched kernel (torch.bmm, a batched or grouped GEMM, torch.vmap, a persistent kernel over the items; fuse them if each reads the last one's output)"
        fix = f"{batch}, or {fix}" if f.move == "batch" else f"{fix}, or {batch}"
        trigger += f", {f.kernels} launches of {name} each filling {_fmt(100 * f.waves_per_sm)}% of the GPU"
        hint = "many launches one after the other, each filling a small part of the GPU"
    return "Cut launch overhead: " + fix, _idle(f, trigger), hint


def _sync(f: Facts) -> Words:
    ops = f.ops
    made = " (made by " + ", ".join(f"{r['op']} x{r['count']}" for r in ops[:2]) + ")" if ops else ""
    if f.calls and WAITED_LAUNCH in f.calls[0]["call"]:  # launches that waited for their own kernels
        return (
            "Make the launches asynchronous again: each launch call returned only after its kernel ended "
            "(CUDA_LAUNCH_BLOCKING=1 left in the environment, or a debugging or sanitising hook), so the host "
            "cannot run ahead and the GPU drains after every kernel; unset it",
            _idle(f, f"gpu_idle_after_sync={_per(f)}, after {_calls(f.calls)}"),
            "every launch waits for its kernel, then the host issues the next",
        )
    return (
        "Stop synchronising every step: keep per-step values on the GPU (losses and metrics as tensors, read "
        "with .item()/.cpu() every N steps or once at the end), so the host's work overlaps the GPU's",
        _idle(f, f"gpu_idle_after_sync={_per(f)}, after {_calls(f.calls)}{made}"),
        "the GPU drains at each sync and waits while the host works",
    )


def _host(f: Facts) -> Words:
    # Data copied down, worked on by the host and copied back up (analysis.diagnosis.timeline._round_trip).
    if f.move == "round_trip":
        return (
            "Run the host's work between the device-to-host copy and the upload on the GPU: a module, tensor or "
            "op left on the CPU (check each parameter's .device after model.to(device), and ops that fall back "
            "to the CPU); the copies, their waits and the host's work between them go",
            _idle(
                f,
                f"host_work_between_copies_per_step={us(f.value)} us, d2h_copy_time_per_step={us(f.copy_ns)} us",
            ),
            "the host computes in the data path: each step's data goes down to the host and its result back up",
        )
    stretches = f", {f.stretches} host stretches" if f.stretch_median_ns else ""
    # the host's own work spread between the launches (replay.floors)
    if f.op_floor_ns and f.host_per_launch_ns:
        return (
            "Remove the Python work that runs between the operations: the host spends "
            f"{us(f.host_per_launch_ns)} us issuing each kernel where a lean eager op costs this process "
            f"{us(f.op_floor_ns)} us (a tracer or profiler hook, a tensor subclass's __torch_function__, module "
            "hooks, per-op logging, formatting or checks); remove it or move it out of the loop",
            _idle(
                f,
                f"gpu_idle_in_host_work={_per(f)}, host_per_launch={us(f.host_per_launch_ns)} us, "
                f"eager_op_floor={us(f.op_floor_ns)} us{stretches}",
            ),
            "the host does work of its own between the operations, beyond what issuing them costs",
        )
    return (
        "Most of this run is the host's own time (start-up, imports, test collection, its Python): the GPU's "
        "kernels are not what limits it. Mark the steps to measure with kprof.range (or profile a loop of them) "
        "to see their own time"
        if f.process_scope
        else "Take the host's work off the GPU's critical path: build the data on the GPU, or in DataLoader workers "
        "(num_workers, pin_memory) that run ahead of the step; move per-step Python/numpy work out of the loop",
        _idle(f, f"gpu_idle_in_host_work={_per(f)}{stretches}"),
        "the GPU waits for a host that has not issued the work yet",
    )


def _first_call(f: Facts) -> Words:
    return (
        "Keep one-off costs out of the measured steps: warm up first (module loading, Triton JIT, autotuning), "
        "or cache compiled kernels",
        _idle(f, f"gpu_idle_in_first_calls={_per(f)}, {_calls(f.calls)}"),
        "lazy module loads and first launches inside the window",
    )


def _copy(f: Facts) -> Words:
    if f.host_bytes:  # a kernel reading (or writing) host memory over the host link at every call
        return (
            "Keep the data in device memory: copy it to the GPU once (a device tensor, not pinned or mapped host "
            "memory read by the kernel at every call)",
            f"host_link_bytes={f.host_bytes / 1e6:.1f} MB per run, host link at {_fmt(f.util_pct)}% of its peak",
            "the kernel's loads going over the host link (zero copy)",
        )
    if f.move == "offload":  # tensors copied to the host and back in the same step
        return (
            "Keep the offloaded tensors on the GPU where they fit in its memory (no torch.autograd.graph."
            "save_on_cpu or CPU offload for them; offload only what does not fit, overlapped on a side stream)",
            _idle(
                f, f"{_fmt(f.copies)} copies a step take tensors to the host and back ({us(f.copy_ns)} us)"
            ),
            "the same bytes copied down and back up within each step, the host waiting for them",
        )
    if f.value:  # per-step device-to-host copies of whole tensors
        return (
            "Keep per-step snapshots on the GPU (reduce or log on the device, copy once after the loop), or "
            "copy device-to-host into pinned memory with non_blocking=True",
            _idle(f, f"d2h_copy_time_per_step={us(f.value)} us, {f.copies} host-to-device copies"),
            "device-to-host copies of whole tensors every step, waited for by the host",
        )
    return (
        "Copy host-to-device in one transfer per batch (stack the samples on the host first), from pinned "
        "memory with non_blocking=True, ahead of use on a side stream",
        _idle(f, f"h2d_copy_time_not_overlapped={_per(f)}, {f.copies} copies"),
        "host-to-device copies on the critical path",
    )


def _cuda_api(f: Facts) -> Words:
    graph = any(
        "stream capture" in str(c.get("call", "")) or "GraphInstantiate" in str(c.get("call", ""))
        for c in f.calls or []
    )
    plans = any(RELOADED in str(c.get("call", "")) for c in f.calls or [])  # a plan made at every step
    return (
        f"Take these CUDA calls out of the loop ({_calls(f.calls, 3)}): "
        + (
            "capture the CUDA graph once before the loop and replay it each step (g.replay()), "
            if graph
            else ""
        )
        + (
            "keep the library's plan or handle alive across steps (its cache on: e.g. "
            "torch.backends.cuda.cufft_plan_cache), "
            if plans
            else ""
        )
        + "reuse buffers instead of allocating, no per-step device queries",
        _idle(f, f"gpu_idle_in_other_cuda_calls={_per(f)}"),
        "CUDA calls other than launches and copies on the critical path",
    )

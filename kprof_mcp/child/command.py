"""``python -m kprof_mcp.child command``: run the user's own Python command (``profile_command``)
inside a mode's recording, in this fresh process (never a warm worker: the command's imports,
``sys.argv`` and working directory are its own). See :mod:`kprof_mcp.capture.recording`.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import stat
import time
from pathlib import Path
from typing import Any

from ..capture.artifacts import new_run_dir
from ..capture.recording import CommandCapture, label_of
from ..models import DeviceState, ProfileRequest
from ..protocol import ExpectedError, progress
from ..removal import remove_tree

PLAIN_MAX_ENTRIES = 10_000  # a range's entry times kept by the plain pass


def _peaks(dev: DeviceState, req: ProfileRequest) -> dict[str, Any]:
    if not dev.spec_key:
        return {}
    from ..devices import match_device

    spec = match_device(dev.name)
    flops = {}
    for m in req.stage_models.values():
        dtype, tc = str(m.get("dtype") or "float32"), bool(m.get("tensor_cores", False))
        try:
            flops[f"{dtype}|{tc}"] = spec.peak_flops_per_s(dtype, tc)
        except Exception:  # noqa: BLE001 — a dtype the device table does not know: no FLOP peak
            flops[f"{dtype}|{tc}"] = None
    return {"bytes_per_s": spec.peak_bytes_per_s, "min_kernel_ns": spec.min_kernel_ns, "flops_per_s": flops}


def run(req: ProfileRequest) -> dict[str, Any]:
    from ..modes import ModeError, get_mode
    from .harness import classify_failure, device_state

    mode = get_mode(req.mode)
    progress(0.02, "importing torch")
    import torch

    use_cuda = torch.cuda.is_available() and not req.force_cpu
    if mode.needs_gpu and not use_cuda:
        raise ExpectedError("mode", f"mode {req.mode!r} needs an NVIDIA GPU; none is usable here")
    if not use_cuda:
        os.environ["TRITON_INTERPRET"] = "1"  # before the command imports Triton
    dev = device_state(torch, use_cuda, query_smi=mode.query_smi_in_child)
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    argv = list(req.command or [])
    digest = hashlib.sha256(json.dumps([argv, req.command_cwd, list(req.include)]).encode()).hexdigest()[:10]
    final_dir = Path(req.out_root) / req.mode / "command" / label_of(argv) / digest / f"{stamp}-run"
    work_dir = new_run_dir(req.out_root, final_dir)
    made = os.stat(work_dir, follow_symlinks=False)
    cc = CommandCapture(
        torch=torch,
        req=req,
        use_cuda=use_cuda,
        device=dev,
        work_dir=work_dir,
        final_dir=final_dir,
        created_at=stamp,
        peaks=_peaks(dev, req),
        classify=classify_failure,
    )
    cc.phase("import_torch_device")
    plain = None
    try:
        if req.plain_steps_only:
            plain = _plain(cc)
        else:
            mode.capture_command(cc)
    except (ModeError, ExpectedError) as e:
        _unchanged(work_dir, made)
        message = str(e)
        if req.command_root:  # the server's: a failed run leaves no *.partial behind (`kprof run` keeps it)
            remove_tree(work_dir)
            message = message.replace(f" (kept in {work_dir / 'command_output.txt'})", "")
        raise ExpectedError(e.kind, message) from None
    except BaseException:
        _unchanged(work_dir, made)
        if req.command_root:
            remove_tree(work_dir)
        raise
    _unchanged(work_dir, made)
    if plain is not None:  # nothing of it is kept but its entry times
        remove_tree(work_dir)
        return {"status": "ok", "plain": plain}
    return {"status": "ok", "work_dir": str(work_dir), "profile_dir": str(final_dir)}


def _plain(cc: CommandCapture) -> dict[str, Any]:
    """nsys mode's plain pass: the command run as ``python ...`` would, no profiler, each ``kprof.range``'s
    entry times (``time.perf_counter_ns``, at most ``PLAIN_MAX_ENTRIES`` a range) and the time its GPU work
    ended (the capture synchronises after the command)."""
    import kprof

    kprof.ENTRIES, kprof.EVENTS = {}, {}
    try:
        cc.run()
        end = time.perf_counter_ns()
    finally:
        entries, kprof.ENTRIES = kprof.ENTRIES or {}, None
        events, kprof.EVENTS = kprof.EVENTS or {}, None
    names = list(entries)[:200]
    out: dict[str, Any] = {"entries": {k: entries[k][:PLAIN_MAX_ENTRIES] for k in names}, "end_ns": end}
    gpu = {k: v for k in names if (v := gpu_spans(events.get(k) or [])) is not None}
    if gpu:
        out["gpu"] = gpu
    if (read := read_floor_ns(cc.torch)) is not None:
        out["read_ns"] = read
    return out


READ_FLOOR_CALLS = 200  # five batches: ~5-7 ms on an H200's host


def read_floor_ns(torch: Any) -> float | None:
    """What a read of the GPU costs this process's host when there is nothing to wait for: the median over five
    batches of ``torch.cuda.synchronize()`` with an empty queue (ns a call), timed after the command in its own
    process (a host runs some processes at half the speed of others: docs/evidence/machine-model/
    nsys_call_overhead_2026-11-29.log), where the command brought CUDA up; else None. The trace cannot give it:
    under Nsight Systems the same call costs the host ~11 us, of which the trace's call shows 2.2 us, against
    4.7-7.2 us unprofiled on an H200 (that log)."""
    try:
        if torch is None or not torch.cuda.is_initialized():
            return None
        sync = torch.cuda.synchronize
        sync()
        batches = []
        for _ in range(5):
            t0 = time.perf_counter_ns()
            for _ in range(READ_FLOOR_CALLS // 5):
                sync()
            batches.append((time.perf_counter_ns() - t0) / (READ_FLOOR_CALLS // 5))
        return float(sorted(batches)[len(batches) // 2])
    except Exception:  # noqa: BLE001 — a device lost by the command, a torch without CUDA: no figure
        return None


def gpu_spans(pairs: list[Any]) -> list[list[float] | None] | None:
    """Each occurrence's [start, end] on the GPU's clock, ns from the range's first recorded start
    (``elapsed_time`` between CUDA events, after the capture's synchronise), None for an occurrence
    entered before CUDA was up; None where no occurrence has events or they cannot be read."""
    ref = next((p[0] for p in pairs if p is not None), None)
    if ref is None:
        return None
    try:
        return [
            None if p is None else [ref.elapsed_time(p[0]) * 1e6, ref.elapsed_time(p[1]) * 1e6]
            for p in pairs[:PLAIN_MAX_ENTRIES]
        ]
    except Exception:  # noqa: BLE001 — an event not recorded (a range left open), another device
        return None


def _unchanged(work_dir: Path, made: os.stat_result) -> None:
    """The run directory is still the one created for this run: the command may have moved it away
    and put something else (a link out of the workspace) in its place, which kprof never writes
    through, reads or removes."""
    try:
        st = os.stat(work_dir, follow_symlinks=False)
    except OSError:
        st = None
    if st is None or not stat.S_ISDIR(st.st_mode) or (st.st_dev, st.st_ino) != (made.st_dev, made.st_ino):
        raise ExpectedError(
            "unsafe_path",
            f"the run directory {work_dir} was moved, removed or replaced while the command ran (by the "
            "command itself?): nothing was recorded, and kprof neither reads nor writes what is there now",
        )


def main(argv: list[str]) -> int:
    from .harness import record_to

    ap = argparse.ArgumentParser(prog="python -m kprof_mcp.child command")
    ap.add_argument("--request", required=True)
    ap.add_argument("--result", required=True)
    a = ap.parse_args(argv)
    req = ProfileRequest.model_validate_json(Path(a.request).read_text())
    return record_to(Path(a.result).resolve(), lambda: run(req))

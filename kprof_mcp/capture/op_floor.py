"""What one lean eager operation costs the host, recorded in the command's own trace: after a command under
Nsight Systems or torch.profiler, ``OP_FLOOR_CALLS`` calls of an ``nn.Linear(16, 16)`` on a [4, 16] tensor on the
command's CUDA device under ``no_grad`` (the module's call, the dispatcher, one cuBLAS launch), inside the NVTX
range :data:`~kprof_mcp.analysis.timeline.OP_FLOOR_RANGE` (and a ``record_function`` of that name: Kineto records
no NVTX), with the thread's trace and profile hooks (``sys.settrace``, ``sys.setprofile``) and the Python dispatch
and function modes it left active off while they run.

Why in the trace and not timed apart: the host's speed differs between processes (up to 2x on the H200
machine: docs/evidence/machine-model/nsys_call_overhead_2026-11-29.log) and each profiler slows each CUDA call
or op by its own amount, so only the same process under the same profiler gives a floor the trace's host gaps
can be compared with (:mod:`kprof_mcp.analysis.replay.floors` splits them by it). The range's name starts with
``kprof_``: never a stage of the command.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

OP_FLOOR_CALLS = 100  # ~1.5-3 ms of host time on an H200 machine's host under Nsight Systems


def _modes_off(torch: Any) -> contextlib.ExitStack:
    """The Python dispatch and function modes the command left active (``torch.cuda._sanitizer``'s, a debug
    mode) off for the floor's calls: what such a mode adds to each op is the command's host work, not the
    floor's. Where this torch has no such switch, nothing."""
    stack = contextlib.ExitStack()
    try:
        from torch.utils._python_dispatch import _disable_current_modes

        stack.enter_context(_disable_current_modes())
    except Exception:  # noqa: BLE001 — another torch: the modes stay
        pass
    if (off := getattr(getattr(torch, "_C", None), "DisableTorchFunction", None)) is not None:
        stack.enter_context(off())
    return stack


def _annotated(torch: Any) -> Any:
    """The floor's range for torch.profiler too (a Kineto trace's user annotation: timeline_engine='kineto'
    records no NVTX); nothing where this torch has no ``record_function``."""
    from ..analysis.timeline import OP_FLOOR_RANGE

    rf = getattr(getattr(getattr(torch, "autograd", None), "profiler", None), "record_function", None)
    return rf(OP_FLOOR_RANGE) if rf is not None else contextlib.nullcontext()


def record_op_floor(torch: Any) -> bool:
    """Issue the floor's operations inside their range (see the module docstring); False where the command
    never brought CUDA up or a call failed (the trace then has no floor, and the replay splits nothing)."""
    from ..analysis.timeline import OP_FLOOR_RANGE

    try:
        if torch is None or not torch.cuda.is_initialized():
            return False
        trace, prof = sys.gettrace(), sys.getprofile()
        sys.settrace(None)
        sys.setprofile(None)
        try:
            with torch.no_grad(), _modes_off(torch):
                lin = torch.nn.Linear(16, 16, device="cuda")
                x = torch.zeros(4, 16, device="cuda")
                lin(x)  # cuBLAS's handle and workspace made before the range
                torch.cuda.synchronize()
                torch.cuda.nvtx.range_push(OP_FLOOR_RANGE)
                try:
                    with _annotated(torch):
                        for _ in range(OP_FLOOR_CALLS):
                            lin(x)
                finally:
                    torch.cuda.nvtx.range_pop()
                torch.cuda.synchronize()
        finally:
            sys.settrace(trace)
            sys.setprofile(prof)
        return True
    except Exception:  # noqa: BLE001 — a device lost by the command, a torch without CUDA: no floor
        return False

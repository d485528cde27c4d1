"""``kprof.range``: mark a region of your own code so kprof-mcp (and Nsight tools) see it as a stage.

    import kprof

    with kprof.range("forward"):
        y = model(x)

    @kprof.range("attention")
    def attention(q, k, v): ...

Importing this module imports nothing heavy (no torch, no kprof_mcp). On entry the range is
pushed wherever something can see it:

* an NVTX range (``torch.cuda.nvtx`` when torch is already imported and CUDA is up, else the
  ``nvtx`` package when installed): what Nsight Systems and Nsight Compute filter and group by
  (under kprof-mcp's Nsight Compute also a start/end range, which other threads' launches see:
  a backward pass launched by autograd's thread lands in the range too);
* a ``torch.profiler.record_function`` range when torch is imported: what torch.profiler
  (Kineto, kprof's ``event`` mode and its Kineto timeline) records.

With neither torch nor ``nvtx`` it does nothing, so the code runs unchanged outside a profiler.
Plain ``torch.cuda.nvtx.range_push`` ranges are NVTX only: Nsight tools see them, torch.profiler
does not.
"""

from __future__ import annotations

import functools
import sys
import time
from typing import Any, Callable

__all__ = ["range"]

# How many times each range was entered in this process: a profiler that sees only the range's
# name on each kernel (Nsight Compute) divides a range's kernels into its occurrences with it.
OCCURRENCES: dict[str, int] = {}
# Set by kprof-mcp when Nsight Compute profiles a command: each range is also an NVTX start/end
# range, which is not bound to the thread that opened it, so kernels that autograd launches from its
# own thread (a backward pass) are seen inside the range the user's thread entered.
CROSS_THREAD = False
# Set by kprof-mcp's plain pass (a command run again without a profiler, beside its Nsight Systems
# trace): each range's entry times (time.perf_counter_ns), from which the step's unprofiled time comes.
ENTRIES: dict[str, list[int]] | None = None
# Beside ENTRIES, once torch's CUDA is up: a CUDA event recorded on the current stream at each entry and at
# each exit, (start, end) per occurrence (None while CUDA is not up), so the plain pass times the steps on
# the GPU's clock: a host that runs ahead of the GPU enters its ranges faster than the GPU finishes them.
EVENTS: dict[str, list[Any]] | None = None


def _events(torch: Any, undo: list[Callable[[], Any]]) -> tuple[Any, Any] | None:
    """The plain pass's (start, end) CUDA events of one occurrence: the start recorded now, the end by
    ``undo`` at the range's exit; None where torch's CUDA is not up (or an event cannot be recorded)."""
    try:
        if torch is None or not (torch.cuda.is_available() and torch.cuda.is_initialized()):
            return None
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        undo.append(end.record)
        return (start, end)
    except Exception:  # noqa: BLE001 — a marker must never break the user's code
        return None


class range:  # noqa: N801 — reads as a context manager, like torch.profiler.record_function
    """A named region: a context manager and a decorator (see the module docstring)."""

    def __init__(self, name: str):
        if not isinstance(name, str) or not name:
            raise ValueError("kprof.range needs a non-empty name")
        self.name = name
        self._undo: list[Callable[[], Any]] = []

    def __enter__(self) -> range:
        OCCURRENCES[self.name] = OCCURRENCES.get(self.name, 0) + 1
        if ENTRIES is not None:
            ENTRIES.setdefault(self.name, []).append(time.perf_counter_ns())
        undo = []
        torch = sys.modules.get("torch")
        if EVENTS is not None:
            EVENTS.setdefault(self.name, []).append(_events(torch, undo))
        nvtx_done = False
        if torch is not None:
            try:
                if torch.cuda.is_available() and torch.cuda.is_initialized():
                    torch.cuda.nvtx.range_push(self.name)
                    undo.append(torch.cuda.nvtx.range_pop)
                    if CROSS_THREAD:
                        rid = torch.cuda.nvtx.range_start(self.name)
                        undo.append(lambda rid=rid: torch.cuda.nvtx.range_end(rid))
                    nvtx_done = True
            except Exception:  # noqa: BLE001 — a marker must never break the user's code
                pass
            try:
                rf = torch.profiler.record_function(self.name)
                rf.__enter__()
                undo.append(lambda rf=rf: rf.__exit__(None, None, None))
            except Exception:  # noqa: BLE001
                pass
        if not nvtx_done:
            try:
                import nvtx  # the NVIDIA nvtx package, when installed

                nvtx.push_range(self.name)
                undo.append(nvtx.pop_range)
                if CROSS_THREAD:
                    handle = nvtx.start_range(message=self.name)
                    undo.append(lambda handle=handle: nvtx.end_range(handle))
            except Exception:  # noqa: BLE001 — not installed, or no NVTX library
                pass
        self._undo.append(undo)
        return self

    def __exit__(self, *exc: Any) -> None:
        for fn in reversed(self._undo.pop() if self._undo else []):
            try:
                fn()
            except Exception:  # noqa: BLE001
                pass

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with range(self.name):
                return fn(*args, **kwargs)

        return wrapped

"""The warm worker: one long-lived profiling child per GPU (``python -m kprof_mcp.child serve``).

It imports torch and Triton once, brings up the CUDA context and CUPTI, then runs the child's
commands (``run``, ``finish``, ``describe``, ``compare``, ``sweep``) one after another, in
process, exactly as a fresh ``python -m kprof_mcp.child <command>`` would: same arguments,
same request and result files, same progress lines. A re-profile pays only for what changed:
:func:`kprof_mcp.packages.load` re-imports an edited package (Triton compiles only changed
kernels; unchanged ones come from its in-process and on-disk caches).

Commands arrive one JSON object per line on the file descriptor ``--commands-fd`` (never stdin,
which a kernel could read): ``{"job": N, "argv": [...]}``. After each, the worker prints
``@@KPROF-DONE {"job": N, "rc": RC}`` on a line of its own. The parent (:mod:`kprof_mcp.warm`)
replaces the worker after any command that did not succeed, and kills it on time-out or
cancellation, so isolation is that of a fresh process whenever something went wrong.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import threading
import time
import traceback

from .. import lifeline
from ..protocol import DONE_PREFIX, READY_PREFIX


def warm_up(force_cpu: bool, light: bool = False) -> dict:
    """Import what every profile needs and start the CUDA context and CUPTI; return what was done
    and how long each step took. ``light``: a worker that only loads packages to describe them —
    no torch (a package imports it itself if it needs it at import time), no CUDA context."""
    t0 = time.perf_counter()
    steps: dict[str, float] = {}
    mark = [t0]

    def step(name: str) -> None:
        now = time.perf_counter()
        steps[name] = round(now - mark[0], 3)
        mark[0] = now

    from . import harness  # noqa: F401 — the describe/run/finish commands

    step("import_kprof")
    facts: dict = {"steps_s": steps}
    if light:
        facts.update(cuda=False, warm_up_s=round(time.perf_counter() - t0, 3), pid=os.getpid())
        return facts
    import torch

    step("import_torch")
    use_cuda = torch.cuda.is_available() and not force_cpu
    if not use_cuda:
        # Before Triton is imported: its standard library's @triton.jit functions (tl.max, ...) are
        # decorated at import time and must be interpreted too, as in a fresh CPU child.
        os.environ["TRITON_INTERPRET"] = "1"
    import triton  # noqa: F401

    step("import_triton")
    facts["torch"] = torch.__version__
    if use_cuda:
        torch.cuda.init()
        x = torch.zeros(1024, device="cuda")
        torch.cuda.synchronize()
        step("cuda_context")
        # CUPTI's first session (loading and initialising it: 1-5 s) runs on a thread while this
        # one pays Triton's driver and the first launches; the two overlap (H100: -1.4 s).
        cupti: dict = {}
        from ..capture.timer import keep_cupti_attached

        keep_cupti_attached()  # KPROF_CUPTI_TEARDOWN, before CUPTI's first session (issue 40)
        thread = threading.Thread(
            target=_first_cupti_session, args=(torch, cupti), name="kprof-cupti", daemon=True
        )
        thread.start()
        import triton.runtime.driver as driver

        driver.active.get_current_device()
        step("triton_driver")
        _first_launches(torch, triton, x)
        del x
        step("first_launches")
        from ..modes import event  # noqa: F401
        from . import compare, sweep  # noqa: F401 — the other commands and what they import

        step("import_modes")
        thread.join()
        step("wait_for_cupti")
        facts["cupti"] = cupti
    else:
        from ..modes import event  # noqa: F401
        from . import compare, sweep  # noqa: F401

        step("import_modes")
    facts.update(cuda=use_cuda, warm_up_s=round(time.perf_counter() - t0, 3), pid=os.getpid())
    return facts


def _first_cupti_session(torch, out: dict) -> None:
    """One CUPTI batch as event mode records it (a run in its range, the trace exported, read and
    matched to runs): the first pays for loading CUPTI and for the trace reader's imports and first
    parse (0.3-1 s), which every later batch then skips. Records its time, or the error (event mode
    then says CUPTI is unavailable when it tries)."""
    t0 = time.perf_counter()
    try:
        import tempfile

        from torch.profiler import ProfilerActivity, profile, record_function

        from ..analysis.timeline import ITER_RANGE, kernels_per_iteration
        from ..parsers import kineto

        y = torch.zeros(1024, device="cuda")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            with record_function(ITER_RANGE):
                y.add_(1)
            torch.cuda.synchronize()
        out["session_s"] = round(time.perf_counter() - t0, 3)
        with tempfile.TemporaryDirectory(prefix="kprof-cupti-") as d:
            path = os.path.join(d, "first.json")
            prof.export_chrome_trace(path)
            kernels_per_iteration(kineto.load_trace(path))
    except Exception as exc:  # noqa: BLE001 — reported with the worker's facts, never fatal
        out["error"] = f"{type(exc).__name__}: {exc}"[:300]
    out["total_s"] = round(time.perf_counter() - t0, 3)


def _first_launches(torch, triton, x) -> None:
    """What every profile's first run pays once per process: Triton's launcher path (a tiny
    kernel, compiled once into Triton's cache) and the torch kernels of the correctness check
    (CUDA loads modules lazily, on first use)."""
    import triton.language as tl

    from ..capture.correctness import check_correctness

    @triton.jit
    def _touch(ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(ptr + offs, tl.load(ptr + offs, mask=offs < n) + 1, mask=offs < n)

    _touch[(1,)](x, x.numel(), BLOCK=1024)
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        a = torch.ones(64, device="cuda", dtype=dtype)
        check_correctness(torch, a, a.clone(), 1e-2)
    torch.cuda.synchronize()


def dispatch(argv: list[str]) -> int:
    """Run one child command in this process; its exit code as a fresh child would return it."""
    try:
        if argv and argv[0] in ("compare", "sweep"):
            if argv[0] == "compare":
                from .compare import main as command_main
            else:
                from .sweep import main as command_main
            return int(command_main(argv[1:]) or 0)
        from .harness import main

        return int(main(argv) or 0)
    except SystemExit as e:  # argparse, or a kernel calling sys.exit
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: BLE001 — as a fresh child: the traceback on stderr, exit code 1
        traceback.print_exc()
        return 1


def tidy() -> int:
    """Free what a command left behind; a CUDA context that no longer works fails the command
    (the parent then replaces this worker)."""
    gc.unfreeze()
    gc.collect()
    freeze_heap()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        try:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            print(
                "kprof warm worker: the CUDA context failed after the command; this worker is retired",
                file=sys.stderr,
            )
            return 3
    return 0


def freeze_heap() -> None:
    """Move what is alive now (torch, Triton, kprof: ~10^6 objects) out of the cyclic garbage
    collector's sight (``gc.freeze``), so a job's collections scan only what the job made; the next
    ``tidy`` unfreezes and collects everything. ``KPROF_GC_FREEZE=0`` leaves the collector as it is."""
    if os.environ.get("KPROF_GC_FREEZE", "1") != "0":
        gc.freeze()


def _be_subreaper() -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def serve(commands_fd: int, force_cpu: bool, light: bool = False) -> int:
    _be_subreaper()
    facts = warm_up(force_cpu, light)
    gc.collect()
    freeze_heap()
    facts["gc_frozen"] = gc.get_freeze_count()
    print("\n" + READY_PREFIX + json.dumps(facts), flush=True)
    with os.fdopen(commands_fd, "r") as commands:
        for line in commands:
            if not line.strip():
                continue
            msg = json.loads(line)
            before = set(lifeline.descendants(os.getpid()))
            rc = dispatch(list(msg["argv"]))
            # Issue 38 (the fresh probe's F2): what the job started and left running dies with it (a
            # package's import can double-fork a setsid process; this worker is its own subreaper, so
            # the orphan stays below it); processes that were below it before the job stay.
            left = lifeline.kill_tree(os.getpid(), keep=before)
            if left:
                print(f"kprof warm worker: ended {left} process(es) the job left running", file=sys.stderr)
            after = tidy()
            rc = rc or after
            sys.stderr.flush()
            # On a line of its own even if the kernel printed without a newline.
            print("\n" + DONE_PREFIX + json.dumps({"job": msg["job"], "rc": rc}), flush=True)
    return 0


def main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m kprof_mcp.child serve")
    ap.add_argument("--commands-fd", type=int, required=True)
    ap.add_argument("--cpu", action="store_true", help="never use a GPU (KPROF_FORCE_CPU)")
    ap.add_argument("--light", action="store_true", help="no torch, no CUDA context (describing packages)")
    a = ap.parse_args(argv)
    return serve(a.commands_fd, a.cpu, a.light)

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
import time
import traceback

READY_PREFIX = "@@KPROF-READY "
DONE_PREFIX = "@@KPROF-DONE "


def warm_up(force_cpu: bool, light: bool = False) -> dict:
    """Import what every profile needs and start the CUDA context and CUPTI; return what was done.
    ``light``: imports only, no CUDA context (a worker that only loads packages to describe them)."""
    t0 = time.perf_counter()
    import torch
    import triton  # noqa: F401

    facts: dict = {"torch": torch.__version__}
    use_cuda = torch.cuda.is_available() and not force_cpu and not light
    if light:
        pass
    elif use_cuda:
        torch.cuda.init()
        x = torch.zeros(1024, device="cuda")
        torch.cuda.synchronize()
        # The first torch.profiler session loads and initialises CUPTI (about a second): pay it here.
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
            x.add_(1)
            torch.cuda.synchronize()
        del x
        import triton.runtime.driver as driver

        driver.active.get_current_device()
    else:
        # Must be set before any @triton.jit decorator runs, as in a fresh CPU child.
        os.environ["TRITON_INTERPRET"] = "1"
    from . import compare, harness, sweep  # noqa: F401 — the commands and what they import
    from ..modes import event  # noqa: F401
    from ..parsers import kineto  # noqa: F401
    facts.update(cuda=use_cuda, warm_up_s=round(time.perf_counter() - t0, 3), pid=os.getpid())
    return facts


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
    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        try:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            print("kprof warm worker: the CUDA context failed after the command; this worker is retired",
                  file=sys.stderr)
            return 3
    return 0


def serve(commands_fd: int, force_cpu: bool, light: bool = False) -> int:
    facts = warm_up(force_cpu, light)
    print("\n" + READY_PREFIX + json.dumps(facts), flush=True)
    with os.fdopen(commands_fd, "r") as commands:
        for line in commands:
            if not line.strip():
                continue
            msg = json.loads(line)
            rc = dispatch(list(msg["argv"]))
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
    ap.add_argument("--light", action="store_true", help="imports only, no CUDA context (describing packages)")
    a = ap.parse_args(argv)
    return serve(a.commands_fd, a.cpu, a.light)

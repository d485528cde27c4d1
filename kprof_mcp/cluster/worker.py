"""``kprof worker``: one Dask worker per GPU, each with ``CUDA_VISIBLE_DEVICES`` set, the ``GPU=1``
resource and kprof's preload (:mod:`.preload`)."""

from __future__ import annotations

import os
import socket
import tempfile
import threading
from collections.abc import Callable
from typing import Any

from .. import lifeline
from ..protocol import python_argv
from ..removal import remove_tree

PRELOAD = "kprof_mcp.cluster.preload"  # the module Dask imports in each worker (its dask_setup)


def stop_processes(procs: list, wait_s: float) -> None:
    """Terminate processes (Dask's own shutdown), then kill those still there after ``wait_s``."""
    import subprocess

    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(wait_s)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def worker_main(
    scheduler: str,
    gpus: list[str],
    nthreads: int = 1,
    tls: tuple[str, str, str] | None = None,
    extra: list[str] | None = None,
    on_started: Callable[[list[dict[str, Any]]], None] | None = None,
) -> int:
    """Start one Dask worker per GPU (``CUDA_VISIBLE_DEVICES=<gpu>``, resource ``GPU=1``) and wait;
    Ctrl-C or SIGTERM stops them all. ``on_started`` hears of the workers once they are started
    (``name``, ``gpu``, ``pid`` each). Their own output goes to stderr: stdout stays the caller's."""
    import signal
    import subprocess
    import sys

    procs, started = [], []
    try:
        to_stderr = sys.stderr.fileno()  # the workers' stdout: this command's stdout stays its own
    except (AttributeError, OSError, ValueError):  # a stderr with no descriptor (captured): inherit
        to_stderr = None
    # The workers' workspaces, removed when this command ends even if a worker could not tidy up.
    root = tempfile.mkdtemp(prefix="kprof-workers-")
    for i, g in enumerate(gpus):
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=g, KPROF_WORKER_ROOT=root)
        if g == "cpu":
            env.pop("CUDA_VISIBLE_DEVICES")
            env["KPROF_FORCE_CPU"] = "1"
        cmd = [
            *python_argv(module="distributed.cli.dask_worker"),
            scheduler,
            "--nworkers",
            "1",
            "--nthreads",
            str(nthreads),
            "--resources",
            "GPU=1",
            "--name",
            name := f"kprof-{socket.gethostname()}-{os.getpid()}-{i}-gpu{g}",
            "--no-nanny",
            "--preload",
            PRELOAD,
        ]
        if tls:
            ca, cert, key = tls
            cmd += ["--tls-ca-file", ca, "--tls-cert", cert, "--tls-key", key]
        # Its own process group and this process's lifeline: a worker (and its jobs' processes) dies
        # with this command however it ends; see dask_setup.
        env, lifeline_fds = lifeline.for_child(env)
        procs.append(
            subprocess.Popen(
                cmd + list(extra or []),
                env=env,
                pass_fds=lifeline_fds,
                start_new_session=True,
                stdout=to_stderr,
            )
        )
        started.append({"name": name, "gpu": g, "pid": procs[-1].pid})
    if on_started is not None:
        on_started(started)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        while not stop.is_set() and any(p.poll() is None for p in procs):
            stop.wait(0.5)
    finally:
        stop_processes(procs, 10.0)
        remove_tree(root)
    return max((p.returncode or 0) for p in procs) if not stop.is_set() else 0

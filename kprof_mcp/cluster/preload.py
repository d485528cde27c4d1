"""Dask's preload hook for kprof's workers (``--preload kprof_mcp.cluster.preload``)."""

from __future__ import annotations

import os

from .. import lifeline
from .job import worker_engine


def dask_setup(worker) -> None:
    """Dask's preload hook (``kprof worker`` starts each worker with ``--preload kprof_mcp.cluster.preload``):
    make this worker's engine and start its warm worker now, so that the first job does not pay
    torch's import, the CUDA context and CUPTI's start, as a local server's first job does not.
    First, the lifeline from ``kprof worker``: the worker dies with the command that started it."""
    lifeline.watch()
    if os.environ.get("KPROF_WARM", "1") == "0":
        return
    engine = worker_engine(False)
    engine.start_workers([os.environ.get("CUDA_VISIBLE_DEVICES") or None])  # spawns; does not wait

"""Nsight Systems mode, split by rank (issue 39): the processes of one report
(:mod:`kprof_mcp.parsers.nsys_processes`) as the ranks event mode records
(:class:`~kprof_mcp.analysis.ranks.RankProcess`), so both modes give the same stages
(``rank<r>/<range>``: each process's own NVTX ranges and the kernels launched in them), the same
per-rank table (with each rank's idle time by host state, :mod:`.rank_idle`) and the same communication, skew and straggler (:mod:`kprof_mcp.analysis.comm`: NCCL
kernels by name, a rank arriving at a collective when its kernel starts; all processes on the
report's one clock).

**Which rank** each process is (``rank_from``), in this order:

* ``environment``: never available today: Nsight Systems' export keeps no process's environment
  (nor NCCL's NVTX payload with its rank);
* ``cuda device``: each process ran its kernels on one CUDA device, no two on the same one (one
  GPU per rank, ``torch.cuda.set_device(local_rank)`` as DDP and torchrun have it): the ranks in the
  devices' order. The order of first CUDA calls is a race between processes started together: in
  the recorded 2-rank job, rank 1 (cuda:1, the planted sleep) made its first CUDA call 195 ms
  before rank 0, so it comes after the device;
* ``first CUDA call``: otherwise (processes sharing a device, or using several), the order of their
  first CUDA call.

The result says which (the table's ``rank_from``, and a note). Pure: process traces in, rows out.
"""

from __future__ import annotations

from typing import Any

from ..parsers.nsys_processes import Processes
from .command import CommandStage
from .rank_idle import rank_idle
from .ranks import RankProcess, rank_communication, rank_stages

BY_DEVICE = "cuda device"
BY_FIRST_CALL = "first CUDA call"


def rank_processes(procs: Processes) -> tuple[list[RankProcess], str]:
    """The report's kernel-launching processes as ranks (by rank) and how their ranks were found."""
    ps = procs.processes
    devices = [p.devices for p in ps]
    one_each = all(len(d) == 1 for d in devices) and len({d[0] for d in devices}) == len(ps)
    if one_each:
        order, how = sorted(ps, key=lambda p: p.devices[0]), BY_DEVICE
    else:
        order = sorted(ps, key=lambda p: (p.first_cuda_ns is None, p.first_cuda_ns or 0.0, p.pid))
        how = BY_FIRST_CALL
    out = []
    for rank, p in enumerate(order):
        out.append(
            RankProcess(
                pid=p.pid,
                status="ok",
                role="rank",
                rank=rank,
                world_size=len(ps),
                local_rank=p.devices[0] if one_each else None,
                rank_from=how,
                wall_ns=p.last_ns - p.first_cuda_ns if p.first_cuda_ns is not None and p.last_ns else None,
                trace=p.trace,
                origin_ns=procs.origin_ns if procs.origin_ns is not None else 0,
                extra={"devices": p.devices, "kernels": p.kernels, "name": p.name},
            )
        )
    return out, how


def split_stages(
    procs: Processes, include: list[str], warmup: int
) -> tuple[list[CommandStage], str, list[str], list[dict[str, Any]], dict[str, Any]]:
    """Every rank's stages (``rank<r>/<stage>``), where they came from (``range`` | ``kernel``), the
    notes, the per-rank table with each rank's communication per step, and the job's communication
    summary ({} when the ranks ran no collective), as event mode gives them."""
    ranks, how = rank_processes(procs)
    stages, table, notes = rank_stages(ranks, include, True, warmup)
    rank_idle(ranks, stages, table)  # each rank's GPU idle time by host state
    comm = rank_communication(ranks, include, warmup, table) if stages else {}
    for row, p in zip(table, ranks):
        row["devices"] = p.extra["devices"]
    described = "; ".join(
        f"rank {p.rank}: pid {p.pid}, cuda:{','.join(map(str, p.extra['devices']))}" for p in ranks
    )
    why = (
        "each ran its kernels on a CUDA device of its own, the ranks in the devices' order"
        if how == BY_DEVICE
        else "in the order of their first CUDA call (they share a device or use several)"
    )
    notes.insert(
        0,
        f"Nsight Systems recorded {len(ranks)} processes that launched kernels, split by process: "
        f"the ranks from the {how} ({why}; the export keeps no process's environment): {described}; "
        "a rank's recorded time runs from its first CUDA call to its last CUDA activity",
    )
    notes += [f"communication: {n}" for n in comm.get("notes", [])]
    by = "kernel" if stages and all(st.method == "GPU time per launch" for st in stages) else "range"
    return stages, by, notes, table, comm

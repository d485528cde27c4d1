"""A multi-process command's ranks (issue 39): each rank's stages and the per-rank table, from the
records the ranks left (:mod:`kprof_mcp.capture.rank_recorder`) and their parsed traces.

A rank's stages are found exactly as the main process's are (:func:`~kprof_mcp.analysis.command.range_stages`:
the same include patterns, warm-up and kernel attribution; kernels by name where a rank entered no
selected range on a GPU) and named ``rank<r>/<stage>``: the contract keeps its shape, one row per
stage, and each rank's ``step`` is a stage of its own beside the others'. Two processes that claim
one rank (an elastic restart) are told apart by pid (``rank0.pid<p>/step``).

The per-rank table (``result.command["ranks"]``, times in ns) has every process that recorded itself:
ranks with their stage names, kept occurrences and time in stages; processes that were not ranks
(a DataLoader worker, a helper that imported torch) named and left out; and a process that left no
record (crashed, killed, or ended with ``os._exit``) named with what is known of it. Each rank's
``origin_ns`` puts its trace's times on the wall clock, which lines the ranks up:
:func:`rank_communication` adds each rank's communication per step to its row (compute, communication,
exposed, overlap %, host time, its wait at the collectives and how late it was:
:mod:`kprof_mcp.analysis.comm`) and returns the job's summary (``result.command["communication"]``:
the straggler, the exposed communication, their what-ifs), from which :func:`rank_opportunities`
and :func:`rank_root_cause` make the diagnosis' opportunities and root cause, naming ranks.
In nsys mode the ranks are the processes of one Nsight Systems report (:mod:`.nsys_ranks` makes
them :class:`RankProcess` objects), and the same functions give the same stages, table and summary.
Pure: records and traces in, rows out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..parsers.kineto import Trace
from .comm import communication, rank_steps
from .command import CommandStage, kernel_stages, range_stages
from .diagnosis import MIN_SHARE, Facts, Opportunity, gain_pct

# The rank table's communication columns (medians per step, ns; overlap in %), from analysis.comm.
COMM_COLUMNS = (
    "step_ns",
    "compute_ns",
    "comm_ns",
    "exposed_ns",
    "overlap_pct",
    "host_ns",
    "wait_ns",
    "late_ns",
)
# The straggler is the root cause when the other ranks wait for it at least this share of a step.
STRAGGLER_ROOT_SHARE = 0.5


@dataclass(eq=False)
class RankProcess:
    """One process the command started that recorded itself."""

    pid: int
    status: str  # ok | running (no record at exit) | failed | unreadable
    role: str = "unknown"  # rank | dataloader_worker | other | unknown (no record at exit)
    rank: int | None = None
    world_size: int | None = None
    local_rank: int | None = None
    rank_from: str | None = None  # process group | environment
    wall_ns: float | None = None  # from the recorder's start (torch imported) to its exit
    note: str = ""
    trace: Trace | None = None
    origin_ns: int | None = None  # the trace's origin on the wall clock (epoch ns)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> RankProcess:
        env = rec.get("env") or {}
        status = str(rec.get("status") or "unreadable")
        rank = rec.get("rank")
        if rank is None and status != "ok":  # no record at exit: what was known before
            rank = (rec.get("group") or {}).get("rank", env.get("rank"))
        started, ended = rec.get("started_ns"), rec.get("ended_ns")
        return cls(
            pid=int(rec.get("pid") or 0),
            status=status,
            role=str(rec.get("role") or "unknown"),
            rank=None if rank is None else int(rank),
            world_size=rec.get("world_size")
            or (rec.get("group") or {}).get("world_size")
            or env.get("world_size"),
            local_rank=env.get("local_rank"),
            rank_from=rec.get("rank_from"),
            wall_ns=float(ended - started) if started and ended else None,
            note=str(rec.get("error") or ""),
            extra={k: rec[k] for k in ("worker_id", "argv", "ppid") if k in rec}
            | {"env_rank": env.get("rank")},
        )


def _label(p: RankProcess, twice: set[int]) -> str:
    return f"rank{p.rank}" + (f".pid{p.pid}" if p.rank in twice else "")


def rank_stages(
    procs: list[RankProcess], include: list[str], use_gpu: bool, warmup: int = 1
) -> tuple[list[CommandStage], list[dict[str, Any]], list[str]]:
    """Every rank's stages (named ``rank<r>/<stage>``, by rank), the per-rank table and notes."""
    stages: list[CommandStage] = []
    table: list[dict[str, Any]] = []
    notes: list[str] = []
    ranks = [p for p in procs if p.role == "rank" and p.status == "ok" and p.trace is not None]
    seen: dict[int, int] = {}
    for p in ranks:
        seen[p.rank] = seen.get(p.rank, 0) + 1  # type: ignore[index]
    twice = {r for r, n in seen.items() if n > 1}
    recorded = {id(p) for p in ranks}
    quiet: list[str] = []
    said: dict[str, list[str]] = {}  # a note -> the ranks it applies to (one line for all of them)
    for p in procs:
        row: dict[str, Any] = {
            "rank": p.rank,
            "pid": p.pid,
            "role": p.role,
            "status": p.status,
            "world_size": p.world_size,
            "rank_from": p.rank_from,
            "stages": [],
            "occurrences": 0,
            "time_ns": 0.0,
            "wall_ns": p.wall_ns,
            "origin_ns": p.origin_ns,
        }
        if id(p) in recorded:
            label = _label(p, twice)
            found, rank_notes = range_stages(p.trace, include, use_gpu, warmup)  # type: ignore[arg-type]
            if not found and use_gpu and not include:
                found = kernel_stages(p.trace)  # type: ignore[arg-type]
            if not found:
                quiet.append(label)
            for st in found:
                st.name = f"{label}/{st.name}"
            stages += found
            for n in rank_notes:
                said.setdefault(n, []).append(label)
            row.update(
                stages=[st.name for st in found],
                occurrences=sum(st.occurrences for st in found),
                time_ns=float(sum(sum(st.samples_ns) for st in found)),
            )
        else:
            row["note"] = _why_not(p)
        table.append(row)
    notes += [f"{', '.join(labels)}: {n}" for n, labels in said.items()]
    if quiet:
        notes.append(
            f"{', '.join(quiet)} entered no selected range"
            + ("" if not use_gpu else " and launched no GPU kernel")
            + ": no stage of theirs (mark their steps with kprof.range)"
        )
    others = [r for r in table if r["role"] != "rank" and r["status"] == "ok"]
    if others:
        notes.append(
            f"{len(others)} process(es) the command started were not ranks and are not stages: "
            + "; ".join(f"pid {r['pid']} ({r['note']})" for r in others[:6])
        )
    lost = [r for r in table if r["status"] != "ok"]
    if lost:
        notes.append(
            "no record from "
            + "; ".join(
                (f"rank {r['rank']} (pid {r['pid']})" if r["rank"] is not None else f"pid {r['pid']}")
                + f": {r['note']}"
                for r in lost[:8]
            )
        )
    return stages, table, notes


def _why_not(p: RankProcess) -> str:
    """Why a process has no stages, in a few words (the table's note)."""
    if p.status == "running":
        return (
            "it left no record: it crashed, was killed, or ended with os._exit before its exit handlers ran"
        )
    if p.status == "failed":
        return f"its recorder failed ({p.note or 'no reason given'})"
    if p.status == "unreadable":
        return p.note or "its record could not be read"
    if p.role == "dataloader_worker":
        owner = p.extra.get("env_rank")
        return "a DataLoader worker" + (f" of rank {owner}" if owner is not None else "")
    if p.role == "other":
        return "no rank: no process group and no RANK in its environment"
    return p.note or "not a rank"


def rank_communication(
    procs: list[RankProcess], include: list[str], warmup: int, table: list[dict[str, Any]]
) -> dict[str, Any]:
    """Each recorded rank's communication per step, added to its row of ``table`` (:data:`COMM_COLUMNS`),
    and the job's summary ({} when the ranks ran no collective)."""
    ranks = [p for p in procs if p.role == "rank" and p.status == "ok" and p.trace is not None]
    seen: dict[Any, int] = {}
    for p in ranks:
        seen[p.rank] = seen.get(p.rank, 0) + 1
    twice = {r for r, n in seen.items() if n > 1}
    steps = [rank_steps(_label(p, twice), p.rank, p.trace, p.origin_ns, include, warmup) for p in ranks]  # type: ignore[arg-type]
    rows, summary = communication(steps)
    if not rows:
        return {}
    by_pid = {p.pid: _label(p, twice) for p in ranks}
    for row in table:
        figures = rows.get(by_pid.get(row["pid"], ""))
        if figures:
            row.update({k: figures[k] for k in COMM_COLUMNS})
    if any(p.origin_ns is None for p in ranks):
        summary["notes"].append(
            "a rank's trace has no wall-clock origin: the ranks' times are compared as recorded"
        )
    return summary


@dataclass(frozen=True)
class RankFacts(Facts):
    """A rank cause's facts (ns, %): the rank it names and what was measured of it."""

    rank: int | None = None
    late_ns: float | None = None  # the straggler's lateness per step (median)
    last_pct: float | None = None  # of the collectives it arrived last at
    extra_compute_ns: float | None = None  # its lead-up's compute beyond the others' (per step)
    extra_host_ns: float | None = None  # its lead-up's host time beyond the others' (per step)
    why: str | None = None  # host | compute
    transfer_ns: float | None = None  # exposed communication beyond the waits (per step)
    hideable_ns: float | None = None  # what overlapping it with free compute would save (per step)
    overlap_pct: float | None = None
    step_ns: float | None = None  # the replayed step
    whatif_ns: float | None = None  # the step replayed with the cause removed
    steps: int | None = None
    ranks: int | None = None


def rank_opportunities(command: dict[str, Any] | None) -> list[Opportunity]:
    """The straggler and the exposed communication as opportunities of the whole job (shares of its
    step, from the what-ifs in the command's ``communication`` summary)."""
    out: list[Opportunity] = []
    summary = (command or {}).get("communication")
    if not summary:
        return out
    common = {"steps": summary.get("steps"), "ranks": summary.get("ranks")}
    s = summary.get("straggler")
    if s and s["share"] >= MIN_SHARE:
        facts = RankFacts(
            rank=s["rank"],
            late_ns=s["late_ns"],
            last_pct=s["last_pct"],
            extra_compute_ns=s["extra_compute_ns"],
            extra_host_ns=s["extra_host_ns"],
            why=s["why"],
            step_ns=s["replay_ns"],
            whatif_ns=s["whatif_ns"],
            **common,
        )
        out.append(Opportunity("straggler", gain_pct(s["share"]), s["share"], True, facts))
    e = summary.get("exposed")
    if e and e["share"] >= MIN_SHARE:
        facts = RankFacts(
            rank=e["rank"],
            transfer_ns=e["transfer_ns"],
            hideable_ns=e["hideable_ns"],
            overlap_pct=e["overlap_pct"],
            **common,
        )
        out.append(Opportunity("exposed_comm", gain_pct(e["share"]), e["share"], True, facts))
    return out


def rank_root_cause(command: dict[str, Any] | None) -> dict[str, Any] | None:
    """The straggler as the profile's root cause (its values) when the other ranks spend at least
    :data:`STRAGGLER_ROOT_SHARE` of a step waiting for it and its what-if (its extra work evened out or
    taken off the step) recovers at least that share spread over the ranks: it dominates the step;
    else None."""
    s = ((command or {}).get("communication") or {}).get("straggler")
    if not s or not s.get("replay_ns") or s["late_ns"] / s["replay_ns"] < STRAGGLER_ROOT_SHARE:
        return None  # the others' wait for it, a share of the step (its what-if may even work out)
    ranks = ((command or {}).get("communication") or {}).get("ranks") or 2
    if s["share"] < STRAGGLER_ROOT_SHARE / ranks:
        return None  # a wait its what-if cannot recover (ranks one phase apart, neither doing more)
    keys = ("rank", "late_ns", "last_pct", "why", "extra_host_ns", "extra_compute_ns", "share", "replay_ns")
    return {k: s[k] for k in keys}

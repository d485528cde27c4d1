"""The words of a multi-rank job's causes (issue 39, :mod:`kprof_mcp.analysis.ranks`): the straggler
the other ranks wait for at the collectives, and communication no compute overlaps; the straggler
as the root cause."""

from __future__ import annotations

from typing import Any

from ...analysis.diagnosis import Facts
from .memory import Words, _fmt


def ms(v_ns: float | None) -> str:
    return "n/a" if v_ns is None else f"{v_ns / 1e6:.{1 if abs(v_ns) >= 1e7 else 2}f}"


_FIX = {
    "host": "take host work out of its steps (data loading into DataLoader workers, logging, checkpoints and "
    "evaluation off the step or spread over the ranks, per-step Python)",
    "compute": "give it no more work than the others (even the shards, batch sizes or sequence lengths across "
    "the ranks; balance the layers of a pipeline)",
}


def _more(v_ns: float | None, what: str) -> str:
    if v_ns is None:
        return f"n/a {what}"
    return f"{ms(abs(v_ns))} ms {'less' if v_ns < 0 else 'more'} {what}"


def why_text(why: str | None, extra_host_ns: float | None, extra_compute_ns: float | None) -> str:
    """Why the straggler is late: its lead-up to the collectives against the other ranks' (host time is
    neither compute nor communication: Python, data loading, a sleep)."""
    host, compute = _more(extra_host_ns, "host time"), _more(extra_compute_ns, "compute")
    first, then = (compute, host) if why == "compute" else (host, compute)
    return f"before the collectives it has {first} and {then} than the other ranks, per step"


def _straggler(f: Facts) -> Words:
    return (
        f"Even out rank {f.rank}, the straggler: {_FIX.get(f.why or '', _FIX['host'])}",
        f"straggler=rank {f.rank}, late {ms(f.late_ns)} ms per step at the collectives (last at "
        f"{_fmt(f.last_pct)}% of them); {why_text(f.why, f.extra_host_ns, f.extra_compute_ns)}; the step "
        f"replayed without it {ms(f.whatif_ns)} ms vs {ms(f.step_ns)} ms",
        "every rank waits at each collective for the last one to arrive",
    )


def _exposed_comm(f: Facts) -> Words:
    return (
        "Overlap the communication with compute: issue the collectives as their inputs are ready and wait "
        "later (DDP's bucketed all-reduce, FSDP's prefetch, async_op=True or a side stream)",
        f"exposed_comm={ms(f.transfer_ns)} ms per step on rank {f.rank} (beyond its waits), overlap "
        f"{_fmt(f.overlap_pct) if f.overlap_pct is not None else 'n/a'}%; hideable behind free compute "
        f"{ms(f.hideable_ns)} ms per step",
        "the ranks communicate while no compute runs",
    )


RANK_WORDS = {"straggler": _straggler, "exposed_comm": _exposed_comm}


def straggler_root_text(v: dict[str, Any]) -> str:
    """The straggler as the root cause (``analysis.ranks.rank_root_cause``'s values)."""
    return (
        f"Rank {v['rank']} is the straggler: the other ranks wait for it at the collectives, "
        f"{ms(v['late_ns'])} ms per step ({_fmt(100 * v['share'])}% of the replayed {ms(v['replay_ns'])} ms "
        f"step; last at {_fmt(v['last_pct'])}% of them). "
        f"B{why_text(v['why'], v['extra_host_ns'], v['extra_compute_ns'])[1:]} (host time: neither compute "
        "nor communication, such as Python, data loading or a sleep)."
    )

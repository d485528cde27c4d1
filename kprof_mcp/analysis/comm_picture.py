"""The per-rank timeline picture's figures (issue 39, item 5): two representative kept steps of every
rank on one wall clock, each rank's compute, each collective's wait and transfer, and its host time
(:func:`picture`, drawn by :mod:`kprof_mcp.render.rank_plot`). Split from :mod:`.comm`, which calls it."""

from __future__ import annotations

from typing import Any

from .timeline import _union

Intervals = list[tuple[float, float]]

PICTURE_RANKS = 16  # rows of the per-rank picture at most (the straggler always among them)
PICTURE_SEGMENTS = 200  # segments per rank and kind at most: closer ones merged


def picture(ranks: list, per: dict, n: int, straggler: str | None) -> dict[str, Any]:
    """What the per-rank timeline picture shows (``render/rank_plot``): two representative kept steps
    (the one whose slowest rank's step is the median, and the next), every rank on the wall clock from
    the earliest rank's start of them (ns), each with its steps' bounds, its compute, each collective
    split into its wait for the last rank to arrive and the transfer after it, and its host time (the
    steps' time with neither; the time between steps left out, as the breakdown leaves it)."""
    spans = [max(per[r.label][k]["step_ns"] for r in ranks) for k in range(n)]
    mid = sorted(range(n), key=lambda k: spans[k])[(n - 1) // 2]
    ks = [mid, mid + 1] if mid + 1 < n else [k for k in (mid - 1, mid) if k >= 0]
    shown = ranks[:PICTURE_RANKS]
    if straggler and all(r.label != straggler for r in shown):
        shown = shown[:-1] + [r for r in ranks if r.label == straggler]
    t0 = min(r.offset + r.steps[ks[0]][0] for r in ranks)  # offsets from the earliest origin (communication)
    rows = []
    for r in shown:
        lo, hi = r.steps[ks[0]][0], r.steps[ks[-1]][1]
        compute = [(max(a, lo), min(b, hi)) for a, b in r.compute if b > lo and a < hi]
        wait, transfer = [], []
        for k in ks:
            m = min(len(x.collectives[k]) for x in ranks)
            for c, col in enumerate(r.collectives[k]):
                last = (
                    max((x.offset - r.offset) + x.collectives[k][c].arrival for x in ranks)
                    if c < m
                    else col.arrival
                )
                mid_t = min(max(col.arrival, last), col.end)
                wait.append((col.arrival, mid_t))
                transfer.append((mid_t, col.end))
        busy = _union(compute + wait + transfer)
        host = []
        for k in ks:
            t, e = r.steps[k]
            for a, b in busy + [(e, e)]:
                if a > t and t < e:
                    host.append((t, min(a, e)))
                t = max(t, b)
        shift = r.offset - t0
        rows.append(
            {"label": r.label, "rank": r.rank}
            | {
                kind: _coarse([(a + shift, b + shift) for a, b in iv if b > a])
                for kind, iv in (
                    ("steps", [r.steps[k] for k in ks]),
                    ("compute", compute),
                    ("wait", wait),
                    ("transfer", transfer),
                    ("host", host),
                )
            }
        )
    return {"steps": [k + 1 for k in ks], "of": n, "straggler": straggler, "ranks": rows}


def _coarse(iv: Intervals) -> list[int]:
    """At most :data:`PICTURE_SEGMENTS` intervals, flat (``[start0, end0, start1, end1, ...]``: one JSON
    array per kind, as result.json's reader caps its arrays): neighbours merged across ever larger gaps."""
    iv = _union(iv)
    gap = 0.0
    while len(iv) > PICTURE_SEGMENTS:
        gap = max(2 * gap, (iv[-1][1] - iv[0][0]) / 4000)
        out: Intervals = []
        for a, b in iv:
            if out and a - out[-1][1] <= gap:
                out[-1] = (out[-1][0], b)
            else:
                out.append((a, b))
        iv = out
    return [t for a, b in iv if round(b) > round(a) for t in (round(a), round(b))]

"""The per-rank timeline picture of a multi-rank job (issue 39, item 5): ``ranks.png``, referenced from
report.md. One row per rank over two representative steps on the wall clock (what
:func:`kprof_mcp.analysis.comm.picture` keeps in ``result.command["communication"]["picture"]``, ns):
compute, the wait at each collective for the last rank to arrive (the skew), the transfer after it, and
host time (neither); the straggler's row labelled. Units are scaled here only."""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

from .diagnosis.ranks import ms

FILE = "ranks.png"
# kind -> (colour, legend); drawn in this order (host under the rest).
KINDS = {
    "host": ("#c8c8c8", "host (neither compute nor communication)"),
    "compute": ("#1f77b4", "compute kernels / operators"),
    "wait": ("#d62728", "communication: waiting for the last rank (skew)"),
    "transfer": ("#ff7f0e", "communication: transfer"),
}


def pairs(flat: list[float] | None) -> list[tuple[float, float]]:
    """A picture's flat ``[start0, end0, start1, end1, ...]`` as (start, end) pairs."""
    flat = flat or []
    return list(zip(flat[0::2], flat[1::2]))


def row_labels(pic: dict[str, Any], straggler: dict[str, Any] | None = None) -> list[str]:
    """Each row's label, top to bottom: the rank, and for the straggler how late it was per step."""
    out = []
    for r in pic["ranks"]:
        label = f"rank {r['rank']}" if r.get("rank") is not None else str(r["label"])
        if r["label"] == pic.get("straggler"):
            late = f", late {ms(straggler['late_ns'])} ms/step" if straggler else ""
            label += f"\n(straggler{late})"
        out.append(label)
    return out


def plot_ranks(comm: dict[str, Any], dest: Path | IO[bytes]) -> list[str]:
    """Draw ``comm``'s picture (the job's communication summary) as a PNG; returns the rows' labels."""
    from .mpl import pyplot

    plt = pyplot()

    pic = comm["picture"]
    rows = pic["ranks"]
    labels = row_labels(pic, comm.get("straggler"))
    fig, ax = plt.subplots(figsize=(14, 1.6 + 0.7 * len(rows)))
    drawn: set[str] = set()
    for i, r in enumerate(rows):
        y = len(rows) - 1 - i  # rank 0 on top
        for kind, (colour, legend) in KINDS.items():
            segs = [(a / 1e6, max((b - a) / 1e6, 1e-3)) for a, b in pairs(r.get(kind))]
            if not segs:
                continue
            height = 0.5 if kind == "host" else 0.7
            ax.broken_barh(
                segs,
                (y - height / 2, height),
                color=colour,
                linewidth=0,
                label=legend if kind not in drawn else None,
            )
            drawn.add(kind)
        for a, b in pairs(r.get("steps")):
            ax.plot([a / 1e6, a / 1e6], [y - 0.45, y + 0.45], color="black", linewidth=0.8)
            ax.plot([b / 1e6, b / 1e6], [y - 0.45, y + 0.45], color="black", linewidth=0.8, linestyle=":")
    ax.set_yticks(range(len(rows)), list(reversed(labels)))
    for tick in ax.get_yticklabels():
        if "straggler" in tick.get_text():
            tick.set_color("#d62728")
            tick.set_fontweight("bold")
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel("ms from the first rank's start of the steps shown (wall clock)")
    steps = pic.get("steps") or []
    shown = " and ".join(str(k) for k in steps)
    ax.set_title(
        f"Kept step{'s' if len(steps) > 1 else ''} {shown} of {pic.get('of')}, one row per rank "
        "(| a step starts, ┆ it ends)",
        fontsize=10,
    )
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, frameon=False)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(dest, dpi=110)
    plt.close(fig)
    return labels


def picture_line(comm: dict[str, Any] | None) -> list[str]:
    """report.md's reference to ``ranks.png`` (when the run wrote it), with what it shows."""
    if not comm or comm.get("picture_file") != FILE:
        return []
    pic = comm.get("picture") or {}
    return [
        "",
        f"![Per-rank timeline: kept steps {' and '.join(map(str, pic.get('steps') or []))}]({FILE})",
        "",
        f"`{FILE}`: one row per rank over two representative steps (the one whose slowest rank's step is the "
        "median, and the next) on the wall clock: compute in blue, each collective's wait for the last rank "
        "in red (the skew) and its transfer in orange, host time in grey"
        + (f"; the straggler, {pic['straggler']}, labelled." if pic.get("straggler") else "."),
    ]

"""Pictures: the timeline of a recorded plan (matplotlib, written as PNG)."""

from __future__ import annotations

from pathlib import Path
from typing import IO

from ..analysis.timeline import LAUNCH_APIS, Timeline
from ..parsers.kineto import Trace


def plot_timeline(tr: Trace, tl: Timeline, dest: Path | IO[bytes], title: str) -> None:
    """A PNG of the timeline: one lane per stream (kernels coloured by stage) and one lane of
    host launch calls, µs from the first GPU activity."""
    from .mpl import pyplot

    plt = pyplot()

    k = tr.kernels
    lanes = [str(s) for s in sorted(k["stream"].astype(str).unique())] if not k.empty else []
    t0 = min([float(k["start"].min())] if not k.empty else [0.0])
    fig, ax = plt.subplots(figsize=(14, 1.2 + 0.6 * (len(lanes) + 1)))
    colors = plt.get_cmap("tab10")
    stage_names = sorted({str(s) for s in k.get("stage", [])} - {"nan"}) if "stage" in k else []
    labelled: set[str] = set()
    for li, lane in enumerate(lanes):
        g = k[k["stream"].astype(str) == lane]
        for si, sname in enumerate(stage_names + ["nan"]):
            if "stage" not in g:
                sg = g if sname == "nan" else g.iloc[0:0]
            elif sname == "nan":  # kernels of no stage (NaN, None): grey
                sg = g[~g["stage"].astype(str).isin(stage_names)]
            else:
                sg = g[g["stage"].astype(str) == sname]
            if sg.empty:
                continue
            ax.broken_barh(
                [((r.start - t0) / 1e3, max(r.dur / 1e3, 0.05)) for r in sg.itertuples()],
                (li + 0.6, 0.8),
                color=colors(si % 10) if sname != "nan" else "grey",
                linewidth=0,
                label=sname if sname != "nan" and sname not in labelled else None,
            )
            labelled.add(sname)
    api = tr.api[tr.api["name"].isin(LAUNCH_APIS)] if not tr.api.empty else tr.api
    if not api.empty:
        ax.broken_barh(
            [((r.start - t0) / 1e3, max(r.dur / 1e3, 0.05)) for r in api.itertuples()],
            (len(lanes) + 0.6, 0.8),
            color="black",
            linewidth=0,
        )
    ax.set_yticks([i + 1 for i in range(len(lanes) + 1)], [f"stream {s}" for s in lanes] + ["host launches"])
    ax.set_xlabel("µs from the first GPU activity")
    busy = tl.gpu_busy_pct
    ax.set_title(f"{title} — {tl.engine}; GPU busy {busy:.0f}% of the window" if busy is not None else title)
    if stage_names:
        ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(dest, dpi=110)
    plt.close(fig)


def plot_sweep(rows: list[dict], param: str, dest: Path | IO[bytes], title: str) -> None:
    """A PNG of a sweep: time and % of the roofline against the parameter, one line per version;
    log axes when the values span 8× or more. Without a roofline (CPU wall times, an unknown
    device) only the time panel is drawn, labelled CPU wall time on the CPU."""
    from .mpl import pyplot

    plt = pyplot()

    versions = list(dict.fromkeys(r["version"] for r in rows))
    xs = [r[param] for r in rows if isinstance(r[param], (int, float))]
    roofline = any(r["pct_roofline"] is not None for r in rows)
    cpu = bool(rows) and all(r.get("timing_method") == "cpu_wall_clock" for r in rows)
    if roofline:
        fig, (ax_t, ax_r) = plt.subplots(1, 2, figsize=(12, 4.2))
        axes = (ax_t, ax_r)
    else:
        fig, ax_t = plt.subplots(1, 1, figsize=(6.5, 4.2))
        axes = (ax_t,)
    for v in versions:
        pts = sorted((r[param], r["time_us"], r["pct_roofline"]) for r in rows if r["version"] == v)
        ax_t.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=v)
        if roofline:
            ax_r.plot(
                [p[0] for p in pts],
                [p[2] if p[2] is not None else float("nan") for p in pts],
                marker="o",
                label=v,
            )
    if xs and min(xs) > 0 and max(xs) / min(xs) >= 8:
        for ax in axes:
            ax.set_xscale("log", base=2)
    times = [r["time_us"] for r in rows if r["time_us"] > 0]
    if times and max(times) / min(times) >= 8:
        ax_t.set_yscale("log")
    ax_t.set_xlabel(param)
    ax_t.set_ylabel("CPU wall time (µs), no GPU" if cpu else "time (µs)")
    ax_t.set_title("CPU wall time per run (not a GPU figure)" if cpu else "time per run")
    if roofline:
        ax_r.set_xlabel(param)
        ax_r.set_ylabel("% of roofline")
        ax_r.set_title("achieved / attainable (FLOP/byte model)")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(dest, dpi=110)
    plt.close(fig)

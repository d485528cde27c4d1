"""kprof's per-rank communication figures next to HTA's (HolisticTraceAnalysis) on the same Kineto traces
(issue 39, item 4). Evidence script, not a test: docs/evidence/ranks/hta.md says what it printed.

The traces: tests/fixtures/gpu_ranks_nccl/ranks/<pid>.trace.json (kept as .trace.json.xz since 2026-11-29; the test
suite's conftest decompresses them beside themselves, or `xz -dk` them), each rank's torch.profiler trace as
kprof's event mode recorded it (2 x H100, NCCL; both carry ``distributedInfo.rank``, which HTA reads).

kprof's side is its own analysis (``analysis.comm.rank_steps`` / ``communication`` / ``breakdowns``, as
``kprof run --mode event`` computes ``result.command``), with the run's include patterns (none) and warm-up (1).
HTA's side is ``TraceAnalysis`` run on three windows of the same traces, each a copy of the trace with its
events clipped to the window (HTA has no notion of kprof's steps; these traces have no ``ProfilerStep``):

* ``whole``: the traces as recorded (HTA's default: start-up, NCCL's set-up and the warm-up step included);
* ``kept``: each rank's kept steps, from the first kept step's start to the last's end (kprof's window);
* ``steps``: each kept step of each rank on its own (kprof's step bounds), HTA's figures per step, whose
  medians stand beside kprof's medians per step (``result.command["ranks"]``).

    PYTHONPATH=/tmp/hta_site .venv/bin/python docs/evidence/ranks/hta_side_by_side.py --record
    .venv/bin/python docs/evidence/ranks/hta_side_by_side.py      # HTA's figures from hta-figures.json

``--record`` runs HTA and writes ``hta-figures.json`` beside this script (HTA's version with it);
without it the recorded figures are read back (no HTA needed), as the CI test does.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
TRACES = ROOT / "tests" / "fixtures" / "gpu_ranks_nccl" / "ranks"
RECORD = Path(__file__).with_name("hta-figures.json")
SIDE_STREAM = 99  # the derived traces' NCCL stream
WARMUP = 1  # result.json's request: warmup_occurrences 1, include []

# HTA's figures kept per rank and window (ns; overlap in %).
HTA_KEYS = ("span_ns", "idle_ns", "compute_ns", "non_compute_ns", "overlap_pct", "comm_kernels_ns")


def derive_overlapped(src: Path, dst: Path) -> Path:
    """The recorded traces with every NCCL kernel moved to a stream of its own (``SIDE_STREAM``) and
    started with the first compute kernel after the previous collective (its step's first GEMM), durations
    kept: a derived, not recorded, case of communication overlapping compute (rank 0's 39.5 ms wait
    overlaps its 1.75 ms of GEMMs, rank 1's 0.13 ms all_reduce lies under its first GEMMs), for the
    overlap figures the recording's blocking all_reduce leaves at 0 %. Writes ``dst`` like a ranks/
    directory (the records and the traces) and returns it."""
    import shutil

    dst.mkdir(parents=True, exist_ok=True)
    for rec in src.glob("*.json"):
        if rec.name.endswith(".trace.json"):
            data = json.loads(rec.read_text())
            first = None
            for e in sorted(
                (e for e in data["traceEvents"] if e.get("cat") == "kernel"), key=lambda e: e["ts"]
            ):
                if e["name"].startswith("ncclDevKernel"):
                    if first is not None:
                        e["ts"] = first
                    e["tid"], e["args"]["stream"] = SIDE_STREAM, SIDE_STREAM
                    first = None
                elif first is None:
                    first = e["ts"]
            (dst / rec.name).write_text(json.dumps(data))
        else:
            shutil.copy(rec, dst / rec.name)
    return dst


def kprof_figures(ranks_dir: Path = TRACES) -> dict[int, dict[str, Any]]:
    """kprof's analysis of the ranks' traces: per rank its trace file, per-step medians (the rank table's
    communication columns), every kept step's breakdown, the kept steps' totals and its GPU idle time by host
    state over them (ns)."""
    sys.path.insert(0, str(ROOT))
    from kprof_mcp.analysis import comm
    from kprof_mcp.analysis.rank_idle import rank_idle
    from kprof_mcp.analysis.ranks import rank_stages
    from kprof_mcp.capture.ranks import collect

    procs = [p for p in collect(ranks_dir) if p.role == "rank" and p.status == "ok"]
    stages, rank_table, _ = rank_stages(procs, [], True, WARMUP)
    rank_idle(procs, stages, rank_table)  # each rank's GPU idle time by host state (the rank table's)
    idle = {row["rank"]: row.get("idle") for row in rank_table}
    steps = {
        p.rank: comm.rank_steps(f"rank{p.rank}", p.rank, p.trace, p.origin_ns, [], WARMUP) for p in procs
    }
    rows, summary = comm.communication(list(steps.values()))
    out: dict[int, dict[str, Any]] = {}
    for p in procs:
        b = comm.breakdowns(steps[p.rank])
        total = {
            k: sum(x[k] for x in b) for k in ("step_ns", "compute_ns", "comm_ns", "exposed_ns", "host_ns")
        }
        total["overlap_pct"] = (
            100.0 * (1 - total["exposed_ns"] / total["comm_ns"]) if total["comm_ns"] else None
        )
        total["window_ns"] = b[-1]["hi"] - b[0]["lo"]
        out[p.rank] = {
            "trace": f"{p.pid}.trace.json",
            "medians": rows[f"rank{p.rank}"],
            "steps": b,
            "kept": total,
            "idle": idle[p.rank],
            "summary": summary,
        }
    return out


GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def _cut(src: Path, dst: Path, lo_ns: float | None, hi_ns: float | None) -> tuple[int, int]:
    """A copy of one Kineto trace with its complete events clipped to [lo, hi] (trace ns; the JSON's
    ``ts`` and ``dur`` are µs) and the others (metadata, flows) kept where they fall inside; returns the
    trace's rank (``distributedInfo``) and how many GPU activities (kernels, copies, sets) it keeps."""
    data = json.loads(src.read_text())
    if lo_ns is not None:
        lo, hi = lo_ns / 1e3, hi_ns / 1e3
        kept = []
        for e in data["traceEvents"]:
            ts = e.get("ts")
            if e.get("ph") == "X":
                s, t = float(ts), float(ts) + float(e.get("dur", 0.0))
                if t <= lo or s >= hi:
                    continue
                e = dict(e, ts=max(s, lo), dur=min(t, hi) - max(s, lo))
            elif ts is not None and e.get("ph") != "M" and not lo <= float(ts) <= hi:
                continue
            kept.append(e)
        data["traceEvents"] = kept
    dst.write_text(json.dumps(data))
    n = sum(1 for e in data["traceEvents"] if e.get("ph") == "X" and e.get("cat") in GPU_CATS)
    return int(data["distributedInfo"]["rank"]), n


def _hta_run(pairs: list[tuple[Path, float | None, float | None]], exact: bool) -> dict[int, dict[str, Any]]:
    """HTA's TraceAnalysis over the traces, each cut to its window: per rank the temporal breakdown, the
    comm/compute overlap, the kernel breakdown by type and the idle time by stream and category (ns).
    ``exact``: with ``HTA_DISABLE_NS_ROUNDING=1`` (by default HTA moves each event's start up and its end
    down to whole µs)."""
    import contextlib
    import io
    import os

    from hta.trace_analysis import TraceAnalysis

    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1" if exact else "0"

    with tempfile.TemporaryDirectory() as d:
        activities = dict(_cut(src, Path(d) / f"r{i}.json", lo, hi) for i, (src, lo, hi) in enumerate(pairs))
        with contextlib.redirect_stdout(io.StringIO()):  # HTA prints its parsing times
            a = TraceAnalysis(trace_dir=d)
            try:
                tb = a.get_temporal_breakdown(visualize=False).set_index("rank")
                error = None
            except AssertionError:  # see hta.md: its rounding gives sub-µs events negative durations
                tb, error = None, "get_temporal_breakdown: AssertionError (non_compute_time >= 0)"
            ov = a.get_comm_comp_overlap(visualize=False).set_index("rank")
            idle = a.get_idle_time_breakdown(ranks=sorted(activities), visualize=False)[0]
            kernels = a.get_gpu_kernel_breakdown(visualize=False)[1]
    out: dict[int, dict[str, Any]] = {}
    for r in sorted(activities):
        ks = kernels[kernels["rank"] == r]

        def temporal(col: str) -> float | None:
            return None if tb is None else float(tb.loc[r, col]) * 1e3

        out[r] = {
            "span_ns": temporal("kernel_time(us)"),  # the first GPU activity's start to the last's end
            "idle_ns": temporal("idle_time(us)"),
            "compute_ns": temporal("compute_time(us)"),
            "non_compute_ns": temporal("non_compute_time(us)"),
            "overlap_pct": float(ov.loc[r, "comp_comm_overlap_pctg"]),
            "comm_kernels_ns": float(ks[ks["kernel_type"] == "COMMUNICATION"]["sum (us)"].sum()) * 1e3,
            "memory_ns": float(ks[ks["kernel_type"] == "MEMORY"]["sum (us)"].sum()) * 1e3,
            "activities": activities[r],
            "idle_by_category_ns": {
                f"stream{int(i.stream)}/{i.idle_category}": float(i.idle_time) * 1e3
                for i in idle[idle["rank"] == r].itertuples()
                if i.idle_time
            },
        } | ({"error": error} if error else {})
    return out


def windows(kp: dict[int, dict[str, Any]], exact: bool, ranks_dir: Path = TRACES) -> dict[str, Any]:
    """HTA's figures on the three windows (``whole``, ``kept``, ``steps``), per rank."""
    ranks = sorted(kp)
    src = {r: ranks_dir / kp[r]["trace"] for r in ranks}
    whole = _hta_run([(src[r], None, None) for r in ranks], exact)
    kept = _hta_run([(src[r], kp[r]["steps"][0]["lo"], kp[r]["steps"][-1]["hi"]) for r in ranks], exact)
    n = min(len(kp[r]["steps"]) for r in ranks)
    steps: dict[int, list[dict[str, Any]]] = {r: [] for r in ranks}
    for k in range(n):
        got = _hta_run([(src[r], kp[r]["steps"][k]["lo"], kp[r]["steps"][k]["hi"]) for r in ranks], exact)
        for r in ranks:
            steps[r].append(got[r])
    return {
        "whole": {str(r): whole[r] for r in ranks},
        "kept": {str(r): kept[r] for r in ranks},
        "steps": {str(r): steps[r] for r in ranks},
    }


def record(kp: dict[int, dict[str, Any]], ranks_dir: Path = TRACES) -> dict[str, Any]:
    """Run HTA on the three windows, as it comes and with its µs rounding off, on the recorded traces
    and on the derived overlapped ones (:func:`derive_overlapped`); what ``--record`` writes."""
    import importlib.metadata as md

    with tempfile.TemporaryDirectory() as d:
        derived = derive_overlapped(ranks_dir, Path(d))
        kd = kprof_figures(derived)
        overlapped = {"windows": windows(kd, False, derived), "windows_exact": windows(kd, True, derived)}
    return {
        "hta_version": md.version("HolisticTraceAnalysis"),
        "traces": {str(r): str((ranks_dir / kp[r]["trace"]).relative_to(ROOT)) for r in sorted(kp)},
        "warmup": WARMUP,
        "windows": windows(kp, False, ranks_dir),
        "windows_exact": windows(kp, True, ranks_dir),
        "derived_overlapped": overlapped,
    }


def hta_medians(steps: list[dict[str, Any]]) -> dict[str, float | None]:
    """HTA's per-step figures, median over the kept steps (each key on its own, as kprof's medians)."""
    return {
        k: None if any(s[k] is None for s in steps) else float(statistics.median(s[k] for s in steps))
        for k in HTA_KEYS
    }


def explained(kp_rank: dict[str, Any], hta_steps: list[dict[str, Any]]) -> dict[str, float]:
    """kprof's host time against HTA's idle time over the kept steps, step by step: kprof counts a step
    from its range's start (or its first GPU activity) to its range's end (or its last GPU activity), HTA
    from the first GPU activity to the last, so kprof's host time less the step's edges (its step less HTA's
    span) is what HTA calls idle, plus the memory operations (memsets, copies) HTA counts as busy and
    kprof's breakdown as neither compute nor communication."""
    steps = kp_rank["steps"][: len(hta_steps)]
    edges = sum(s["step_ns"] - h["span_ns"] for s, h in zip(steps, hta_steps))
    return {
        "edges_ns": edges,
        "host_inside_ns": sum(s["host_ns"] for s in steps) - edges,
        "hta_idle_ns": sum(h["idle_ns"] for h in hta_steps),
        "hta_memory_ns": sum(h["memory_ns"] for h in hta_steps),
        "activities": sum(h.get("activities", 0) for h in hta_steps),
    }


# kprof's figure ↔ HTA's: (label, kprof key, HTA key).
PAIRS = (
    ("step span", "step_ns", "span_ns"),
    ("compute", "compute_ns", "compute_ns"),
    ("communication", "comm_ns", "comm_kernels_ns"),
    ("exposed comm", "exposed_ns", "non_compute_ns"),
    ("host / idle", "host_ns", "idle_ns"),
    ("overlap %", "overlap_pct", "overlap_pct"),
)


DERIVED_SHOWN = ("compute", "communication", "exposed comm", "overlap %")


def table(kp: dict[int, dict[str, Any]], rec: dict[str, Any], key: str = "windows") -> list[dict[str, Any]]:
    """One row per rank and figure: kprof's and HTA's per-step median and kept-steps total, with ratios,
    and HTA's whole-trace figure (``key``: ``windows``, HTA as it comes; ``windows_exact``, rounding off)."""
    rows = []
    for r in sorted(kp):
        w = rec[key]
        med = hta_medians(w["steps"][str(r)])
        kept, whole = w["kept"][str(r)], w["whole"][str(r)]
        k_med, k_tot = dict(kp[r]["medians"]), dict(kp[r]["kept"])
        k_tot["step_ns"] = k_tot["window_ns"]  # HTA's kept span runs over the gaps between steps too
        for label, kk, hk in PAIRS:
            rows.append(
                {
                    "rank": r,
                    "figure": label,
                    "kprof_step": k_med.get(kk),
                    "hta_step": med[hk],
                    "kprof_kept": k_tot.get(kk),
                    "hta_kept": kept[hk],
                    "hta_whole": whole[hk],
                }
            )
    return rows


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "–"
    if not b:
        return "=" if not a else "∞"
    return f"{a / b:.3f}"


def _points(a: float | None, b: float | None) -> str:
    return "–" if a is None or b is None else f"{a - b:+.1f} pt"


def _fmt(v: float | None, pct: bool) -> str:
    if v is None:
        return "–"
    return f"{v:.1f} %" if pct else f"{v / 1e3:,.1f}"


def markdown(rows: list[dict[str, Any]], version: str) -> str:
    head = (
        f"| rank | figure | kprof / step | HTA {version} / step | ratio | kprof kept | HTA kept | ratio | HTA whole |\n"
        "|---|---|--:|--:|--:|--:|--:|--:|--:|\n"
    )
    lines = []
    for x in rows:
        pct = x["figure"].endswith("%")
        lines.append(
            f"| {x['rank']} | {x['figure']} | {_fmt(x['kprof_step'], pct)} | {_fmt(x['hta_step'], pct)} | "
            f"{_points(x['kprof_step'], x['hta_step']) if pct else _ratio(x['kprof_step'], x['hta_step'])} | "
            f"{_fmt(x['kprof_kept'], pct)} | {_fmt(x['hta_kept'], pct)} | "
            f"{_points(x['kprof_kept'], x['hta_kept']) if pct else _ratio(x['kprof_kept'], x['hta_kept'])} | "
            f"{_fmt(x['hta_whole'], pct)} |"
        )
    return head + "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--record", action="store_true", help="run HTA and write hta-figures.json")
    args = ap.parse_args()
    kp = kprof_figures()
    if args.record:
        rec = record(kp)
        RECORD.write_text(json.dumps(rec, indent=1) + "\n")
        print(f"wrote {RECORD.relative_to(ROOT)} (HTA {rec['hta_version']})", file=sys.stderr)
    else:
        rec = json.loads(RECORD.read_text())
    print(
        "times in µs (medians per step over the kept steps; totals over them); ratio = kprof / HTA (for a %: kprof − HTA, points)\n"
    )
    for key, what in (
        ("windows", "as it comes (µs rounding)"),
        ("windows_exact", "HTA_DISABLE_NS_ROUNDING=1"),
    ):
        print(f"HTA {what}:\n")
        print(markdown(table(kp, rec, key), rec["hta_version"]))
        for r in sorted(kp):
            x = explained(kp[r], rec[key]["steps"][str(r)])
            busy = x["hta_idle_ns"] + x["hta_memory_ns"]
            cats = rec[key]["kept"][str(r)]["idle_by_category_ns"]
            print(
                f"rank {r}: over the kept steps, host time at the steps' edges (kprof's step less HTA's span) "
                f"{x['edges_ns'] / 1e3:,.1f} µs; kprof's host less it {x['host_inside_ns'] / 1e3:,.1f} µs, HTA's "
                f"idle {x['hta_idle_ns'] / 1e3:,.1f} + its memory operations {x['hta_memory_ns'] / 1e3:,.1f} µs "
                f"(ratio {_ratio(x['host_inside_ns'], busy)}); {x['activities']} GPU activities; HTA's idle "
                "breakdown over the kept window: "
                + ", ".join(f"{k} {v / 1e3:,.1f} µs" for k, v in cats.items())
            )
        print()
    print(
        "GPU idle time over the kept steps (no rounding), µs: kprof's by host state, HTA's by stream and kind\n"
    )
    print(
        "| rank | kprof window | kprof idle | its parts | HTA span | HTA idle | + window edges | ratio | HTA parts |"
    )
    print("|---|--:|--:|---|--:|--:|--:|--:|---|")
    for r in sorted(kp):
        i, h = kp[r]["idle"], rec["windows_exact"]["kept"][str(r)]
        edges = i["window_ns"] - h["span_ns"]
        parts = ", ".join(f"{k} {v / 1e3:,.1f}" for k, v in i["parts_ns"].items() if v)
        cats = ", ".join(f"{k} {v / 1e3:,.1f}" for k, v in h["idle_by_category_ns"].items())
        print(
            f"| {r} | {i['window_ns'] / 1e3:,.1f} | {i['idle_ns'] / 1e3:,.1f} | {parts} | {h['span_ns'] / 1e3:,.1f} | "
            f"{h['idle_ns'] / 1e3:,.1f} | {(h['idle_ns'] + edges) / 1e3:,.1f} | "
            f"{_ratio(i['idle_ns'], h['idle_ns'] + edges)} | {cats} |"
        )
    print()
    with tempfile.TemporaryDirectory() as d:
        kd = kprof_figures(derive_overlapped(TRACES, Path(d)))
    print(
        "Derived traces, each NCCL kernel on a stream of its own from its step's first GEMM (not recorded):\n"
    )
    for key, what in (("windows", "as it comes"), ("windows_exact", "HTA_DISABLE_NS_ROUNDING=1")):
        print(f"HTA {what}:\n")
        rows = [x for x in table(kd, rec["derived_overlapped"], key) if x["figure"] in DERIVED_SHOWN]
        print(markdown(rows, rec["hta_version"]))
    for r in sorted(kp):
        k = kp[r]["kept"]
        print(
            f"rank {r}: {len(kp[r]['steps'])} kept steps, {k['step_ns'] / 1e3:,.1f} µs in steps of a "
            f"{k['window_ns'] / 1e3:,.1f} µs window (the rest: between steps)"
        )


if __name__ == "__main__":
    main()

"""Cluster throughput on a mixed batch (issue 30): profiles of several kernels, one comparison, one
sweep and one user command, submitted at once through the MCP server (``--cluster ADDR
--allow-commands``) to a Dask scheduler with one ``kprof worker`` per GPU (separate processes); the
same batch on one GPU's worker (with more than one GPU) and through a local server (no
``--cluster``) on the same GPUs (``--no-local``: skip). Prints the throughput ratios, that every job
finished, how many pairs of jobs ran at once on one worker (the scheduler's task stream, every job;
the spans the profile results record, profiles and the command), and each cluster job's result
against the local runs of the same job (``--local-reps`` batches): stage medians (profiles, the
command: the same stage names too), per-point medians (the sweep) within the local runs' own spread
plus 1 %, and the comparison's verdicts with its speed-up CIs overlapping the local ones.

    python benchmarks/bench_cluster_mixed.py --gpus 0,1                       # 2 GPUs
    KPROF_FORCE_CPU=1 python benchmarks/bench_cluster_mixed.py --gpus cpu,cpu --small   # logic, CPU
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_cluster import _start_cluster  # noqa: E402

from kprof_mcp.cluster import stop_processes  # noqa: E402

ROOT = HERE.parent
SCRIPT = """import torch, kprof
dev = 'cuda' if torch.cuda.is_available() else 'cpu'
x = torch.randn(4096, 4096, device=dev)
for _ in range(STEPS):
    with kprof.range('step'):
        y = torch.relu(x @ x).sum()
print('done', float(y))
"""


def jobs(small: bool) -> list[tuple[str, dict]]:
    """(tool, arguments) of the batch."""
    if small:  # CPU logic check: tiny problems
        prof = [("vector_add", "v0", {"n": 4096}), ("vector_add", "v1", {"n": 8192})]
        return [
            ("profile_kernel", {"kernel": k, "version": v, "params": p, "mode": "event"}) for k, v, p in prof
        ] + [
            (
                "compare_versions",
                {
                    "kernel": "vector_add",
                    "versions": ["v0", "v1"],
                    "params": {"n": 4096},
                    "budget_ms": 150,
                    "rounds": 4,
                },
            ),
            (
                "sweep",
                {
                    "kernel": "vector_add",
                    "param": "n",
                    "values": [1024, 4096],
                    "versions": ["v1"],
                    "budget_ms": 60,
                },
            ),
            ("profile_command", {"command": ["python", "step.py"], "mode": "event"}),
        ]
    prof = [("matmul", "v3", {}), ("softmax", "v2", {}), ("vector_add", "v1", {}), ("mla_decode", "v3", {})]
    return (
        [
            ("profile_kernel", {"kernel": k, "version": v, "params": p, "mode": "annotation"})
            for k, v, p in prof
        ]
        + [("profile_kernel", {"kernel": k, "version": v, "params": p, "mode": "event"}) for k, v, p in prof]
        + [
            ("compare_versions", {"kernel": "matmul", "versions": ["v1", "v3"], "rounds": 20}),
            (
                "sweep",
                {
                    "kernel": "vector_add",
                    "param": "n",
                    "values": [1 << 20, 1 << 22, 1 << 24],
                    "versions": ["v1"],
                },
            ),
            ("profile_command", {"command": ["python", "step.py"], "mode": "event"}),
        ]
    )


SLACK_PCT = 1.0  # as bench_cluster.py: a cluster median may stray this much beyond the local spread


def _figures(tool: str, s: dict) -> dict:
    """What the job's result says that the local run of the same job must say too: ``medians`` (µs,
    by stage or sweep point), ``stages`` (names), ``comparisons`` (verdict and speed-up CI), and its
    span on a cluster worker where the result records one (profiles and commands)."""
    f: dict = {}
    if tool in ("profile_kernel", "profile_command"):
        f["medians"] = {f"stage {st['name']}": st["duration_us"] for st in s.get("stages", [])}
        f["stages"] = [st["name"] for st in s.get("stages", [])]
        d = s.get("profile_dir")
        if d and (Path(d) / "result.json").exists():
            cl = json.loads((Path(d) / "result.json").read_text()).get("profiler", {}).get("cluster")
            if cl:
                f["span"] = {"worker": cl["worker"], "started": cl["started"], "finished": cl["finished"]}
    elif tool == "compare_versions":  # get_profile gives its directory: compare.json
        r = json.loads((Path(s["profile_dir"]) / "compare.json").read_text())
        f["comparisons"] = {
            f"{c['version']} vs {c['baseline']}": [c["verdict"], c["speedup"], c["ci_low"], c["ci_high"]]
            for c in r["comparisons"]
        }
        f["medians"] = {f"version {v['version']}": v["median_ns"] / 1e3 for v in r["versions"]}
    elif tool == "sweep":  # get_profile gives its directory: sweep.json, a result per point
        r = json.loads((Path(s["profile_dir"]) / "sweep.json").read_text())
        f["medians"] = {
            f"point {r['param']}={p['params'][r['param']]} {p['version']}": p["stages"][0]["timing"][
                "median_ns"
            ]
            / 1e3
            for p in r["points"]
        }
    return f


def run_batch(
    addr: str | None, ws: Path, batch: list[tuple[str, dict]], warm: int, reps: int, gpus: list[str]
) -> list[tuple[float, list[dict]]]:
    """Through one MCP server (``--cluster addr``, or local when addr is None, on ``gpus``): first
    ``warm`` jobs of the batch, untimed (a local server's warm workers live with the server), then
    the batch ``reps`` times, each at once: per batch the wall time from the first call to the last
    result and each job's row."""
    import anyio
    from mcp import Client, StdioServerParameters

    env = {
        "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "KPROF_FORCE_CPU": os.environ.get("KPROF_FORCE_CPU", ""),
    }
    if addr is None and not os.environ.get("KPROF_FORCE_CPU"):
        env["KPROF_GPUS"] = ",".join(gpus)
    server = StdioServerParameters(
        command=sys.executable,
        env=env,
        args=["-m", "kprof_mcp", "--workspace", str(ws), "--allow-commands"]
        + (["--cluster", addr] if addr else []),
    )

    async def one(c, jobs):
        t0 = time.monotonic()
        ids = []
        for tool, a in jobs:
            r = await c.call_tool(tool, {**a, "wait_s": 0})
            assert not r.is_error, f"{tool}: {r.content[0].text[:500]}"
            ids.append((tool, r.structured_content["job_id"]))
        rows = []
        for tool, i in ids:
            while True:
                r = await c.call_tool("get_profile", {"job_id": i, "wait_s": 50})
                s = r.structured_content or {}
                if r.is_error or s.get("status") in ("done", "failed", "cancelled"):
                    ok = not r.is_error and s.get("status") == "done"
                    rows.append(
                        {
                            "tool": tool,
                            "ok": ok,
                            "error": r.content[0].text[:300] if not ok else None,
                            **(_figures(tool, s) if ok else {}),
                        }
                    )
                    break
        return time.monotonic() - t0, rows

    async def main():
        async with Client(server, read_timeout_seconds=900) as c:
            if warm:
                await one(c, batch[:warm])
            return [await one(c, batch) for _ in range(reps)]

    return anyio.run(main)


def _overlaps(spans: list[tuple[str, float, float]]) -> int:
    """Pairs of spans that overlap on one worker (its one GPU): 0 when Dask's GPU resource held."""
    by: dict[str, list] = {}
    for w, a, b in spans:
        by.setdefault(w, []).append((a, b))
    return sum(x[1] > y[0] for s in by.values() for x, y in zip(sorted(s), sorted(s)[1:]))


def _task_spans(addr: str, since: float) -> list[tuple[str, str, float, float]]:
    """(job kind, worker, start, stop) of every kprof task the scheduler saw computed since ``since``
    (Unix s): its task stream, which :func:`_watch` switched on before the batch."""
    from distributed import Client

    with Client(addr, set_as_default=False, timeout=30) as c:
        out = []
        for t in c.get_task_stream(start=since):
            key = str(t["key"])
            for ss in t["startstops"]:
                if key.startswith("kprof-") and ss["action"] == "compute":
                    out.append((key.split("-")[1], t["worker"], ss["start"], ss["stop"]))
        return out


def _watch(addr: str) -> None:
    """Switch the scheduler's task stream on (it records from then on)."""
    from distributed import Client

    with Client(addr, set_as_default=False, timeout=30) as c:
        c.get_task_stream(start=time.time())


def _check(label: str, row: dict, local: list[dict]) -> bool:
    """One cluster job against the local runs of the same job; prints a line."""
    notes, same = [], True
    if "stages" in row and any(sorted(row["stages"]) != sorted(x["stages"]) for x in local):
        same = False
        notes.append(f"stages {row['stages']} vs local {[x['stages'] for x in local]}")
    for k, v in row.get("medians", {}).items():
        loc = sorted(x["medians"][k] for x in local if k in x.get("medians", {}))
        if not loc:
            same = False
            notes.append(f"{k}: not in the local runs")
            continue
        ref = loc[len(loc) // 2]
        spread = max(abs(100 * (x - ref) / ref) for x in loc)
        dev = 100 * (v - ref) / ref
        within = abs(dev) <= spread + SLACK_PCT
        if row["tool"] != "compare_versions":  # a comparison is judged by its verdicts and CIs
            same &= within
        notes.append(f"{k} {dev:+.1f} % (local ±{spread:.1f}){'' if within else ' OUTSIDE'}")
    for k, (verdict, sp, lo, hi) in row.get("comparisons", {}).items():
        loc = [x["comparisons"][k] for x in local if k in x.get("comparisons", {})]
        agree = verdict in {x[0] for x in loc}
        overlap = any(lo <= x[3] and x[2] <= hi for x in loc)
        same &= agree and overlap
        notes.append(
            f"{k}: {verdict} {sp:.3f} [{lo:.3f}, {hi:.3f}] vs local "
            + "; ".join(f"{x[0]} {x[1]:.3f} [{x[2]:.3f}, {x[3]:.3f}]" for x in loc)
            + ("" if agree else " VERDICT DIFFERS")
            + ("" if overlap else " CIs DISJOINT")
        )
    print(f"  {label} {row['tool']}: {'same' if same else 'DIFFERS'}: " + "; ".join(notes), flush=True)
    return same


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", default="0,1")
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--no-local", action="store_true", help="skip the local (no --cluster) server")
    ap.add_argument(
        "--local-reps",
        type=int,
        default=3,
        help="batches through the local server: their spread is what a cluster result may stray",
    )
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    gpus = [g for g in a.gpus.split(",") if g]
    batch = jobs(a.small)
    # With one GPU there is no one-GPU phase to compare with: the cluster against the local server only.
    phases = (
        ([] if a.no_local else [("local server", None)])
        + [("all GPUs", gpus)]
        + ([("one GPU", gpus[:1])] if len(gpus) > 1 else [])
    )
    out: dict = {"args": vars(a), "phases": {}}
    for label, use in phases:
        ws = Path(tempfile.mkdtemp(prefix="kprof-mixed-"))
        (ws / "step.py").write_text(SCRIPT.replace("STEPS", "4" if a.small else "30"))
        n = len(use) if use else len(gpus)
        spans: list = []
        if use is None:
            runs = run_batch(None, ws, batch, n, max(1, a.local_reps), gpus)
        else:
            addr, procs = _start_cluster(use)
            try:
                _watch(addr)
                run_batch(addr, ws, batch[:n], 0, 1, use)  # warm-up: one untimed job per worker
                since = time.time()
                runs = run_batch(addr, ws, batch, 0, 1, use)
                spans = _task_spans(addr, since)
            finally:
                stop_processes(procs, 30.0)
        # The local server's first batch pays what its one warm-up job did not (each tool's first run
        # in its workers): its throughput is the median batch's.
        wall, rows = sorted(w for w, _ in runs)[len(runs) // 2], runs[0][1]
        ok = sum(r["ok"] for r in rows)
        ph = out["phases"][label] = {
            "gpus": n,
            "jobs": len(rows),
            "ok": ok,
            "wall_s": round(wall, 1),
            "jobs_per_min": round(60 * len(rows) / wall, 2),
            "rows": rows,
        }
        if len(runs) > 1:
            ph["reps"] = [{"wall_s": round(w, 1), "rows": rs} for w, rs in runs[1:]]
            ph["batch_walls_s"] = [round(w, 1) for w, _ in runs]
            ph["reps_ok"] = all(r["ok"] for _, rs in runs for r in rs)
        print(
            f"{label} ({n} GPU(s)): {ok}/{len(rows)} jobs done in {wall:.1f} s = "
            f"{60 * len(rows) / wall:.2f} jobs/min; by tool: "
            + ", ".join(
                f"{t} {sum(r['ok'] for r in rows if r['tool'] == t)}/{sum(r['tool'] == t for r in rows)}"
                for t in dict.fromkeys(r["tool"] for r in rows)
            )
            + (
                f" (the median of {len(runs)} batches: " + ", ".join(f"{w:.1f} s" for w, _ in runs) + ")"
                if len(runs) > 1
                else ""
            ),
            flush=True,
        )
        for _, rs in runs:
            for r in rs:
                if not r["ok"]:
                    print("  FAILED", r["tool"], r["error"], flush=True)
        if use is not None:
            recorded = [
                (r["span"]["worker"], r["span"]["started"], r["span"]["finished"])
                for r in rows
                if "span" in r
            ]
            ph["task_stream"] = [list(x) for x in spans]
            ph["overlaps_task_stream"] = _overlaps([(w, s0, s1) for _, w, s0, s1 in spans])
            ph["overlaps_results"] = _overlaps(recorded)
            per = Counter(w for _, w, _, _ in spans)
            kinds = {w: dict(Counter(k for k, w2, _, _ in spans if w2 == w)) for w in per}
            print(
                f"  tasks per worker (scheduler's task stream): {kinds}; pairs of jobs at once on one worker: "
                f"{ph['overlaps_task_stream']} of {len(spans)} tasks; in the spans {len(recorded)} profile/command "
                f"results record: {ph['overlaps_results']}",
                flush=True,
            )
            ph["tasks_seen"] = len(spans)
    P = out["phases"]
    if "one GPU" in P:
        out["ratio_all_vs_one"] = P["all GPUs"]["jobs_per_min"] / P["one GPU"]["jobs_per_min"]
        print(
            f"\nthroughput ratio ({len(gpus)} GPUs / 1 GPU, on the cluster) on the mixed batch: {out['ratio_all_vs_one']:.2f}"
        )
    if "local server" in P:
        out["ratio_cluster_vs_local"] = P["all GPUs"]["jobs_per_min"] / P["local server"]["jobs_per_min"]
        print(
            f"throughput, cluster with {len(gpus)} GPU(s) / local server on the same GPU(s): "
            f"{out['ratio_cluster_vs_local']:.2f}"
        )
    all_ok = all(v["ok"] == v["jobs"] and v.get("reps_ok", True) for v in P.values())
    no_overlap = all(
        v.get("overlaps_task_stream", 0) == 0 and v.get("overlaps_results", 0) == 0 for v in P.values()
    )
    seen = all(v["tasks_seen"] == v["jobs"] for k, v in P.items() if k != "local server")
    same = None
    if "local server" in P:
        print(f"\nresults against the local server's {max(1, a.local_reps)} run(s) of the same job:")
        local = [P["local server"]["rows"]] + [r["rows"] for r in P["local server"].get("reps", [])]
        same, verdicts = True, {}
        for label in [k for k in ("all GPUs", "one GPU") if k in P]:
            for i, row in enumerate(P[label]["rows"]):
                if not row["ok"]:
                    same = False
                    continue
                loc = [rs[i] for rs in local if rs[i]["ok"]]
                verdicts[f"{label}/{i}"] = v = _check(f"{label} job {i}", row, loc)
                same &= v
        out["same_as_local"] = verdicts
    print(
        f"\nsummary: every job done: {all_ok}; every job seen in the task stream: {seen}; "
        f"no worker ran two jobs at once: {no_overlap}"
        + ("" if same is None else f"; every cluster result as in the local runs: {same}"),
        flush=True,
    )
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1))
    return 0 if all_ok and no_overlap and seen and same is not False else 1


if __name__ == "__main__":
    sys.exit(main())

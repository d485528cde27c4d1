"""Cluster throughput: N profiles submitted at once through the MCP server started with
``--cluster``, on a Dask scheduler with one worker per GPU (separate processes: ``dask scheduler``,
``kprof worker --gpus ...``), against the same N on one GPU's worker. Prints the throughput ratio
and checks every job's result against a local profile of the same request.

    python benchmarks/bench_cluster.py --gpus 0,1 --jobs 6                    # 2 x H200
    KPROF_FORCE_CPU=1 python benchmarks/bench_cluster.py --gpus cpu,cpu --kernel vector_add \\
        --params '{"n": 4096}' --mode event --jobs 4                                # logic check on a CPU
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kprof_mcp.cluster import stop_processes

ROOT = Path(__file__).resolve().parents[1]
MIN_GAIN_PCT = 5.0  # an opportunity under this is "at the roof" in the report


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_cluster(
    gpus: list[str], logs: Path | None = None, tag: str = ""
) -> tuple[str, list[subprocess.Popen]]:
    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"

    def sink(name):
        return open(logs / f"{tag}{name}.log", "w") if logs else subprocess.DEVNULL

    sched = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--dashboard-address",
            ":0",
        ],
        stdout=subprocess.DEVNULL,
        stderr=sink("scheduler"),
    )
    time.sleep(3)
    workers = subprocess.Popen(
        [sys.executable, "-m", "kprof_mcp.cli", "worker", "--scheduler", addr, "--gpus", ",".join(gpus)],
        stdout=subprocess.DEVNULL,
        stderr=sink("workers"),
    )
    from distributed import Client

    with Client(addr, set_as_default=False, timeout=30) as c:
        t0 = time.monotonic()
        while len(c.scheduler_info()["workers"]) < len(gpus):
            if time.monotonic() - t0 > 120:
                raise SystemExit("workers did not register within 120 s")
            time.sleep(0.5)
    return addr, [workers, sched]


def _run_jobs(
    addr: str | None, workspace: Path, args, env_extra: dict[str, str] | None = None, n_gpus: int = 1
) -> tuple[float, list[dict]]:
    """N profile_kernel calls at once through a real MCP server (``--cluster addr``, or local when
    addr is None); the wall time from the first call to the last result, and each job's summary.
    First, untimed, ``--warmup-jobs`` jobs per GPU, so that both set-ups are measured warm (a local server starts
    its warm workers with the server, a cluster worker with the Dask worker)."""
    import anyio
    from mcp import Client, StdioServerParameters

    env = {
        "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "KPROF_FORCE_CPU": os.environ.get("KPROF_FORCE_CPU", ""),
        **(env_extra or {}),
    }
    argv = ["-m", "kprof_mcp", "--workspace", str(workspace)] + (["--cluster", addr] if addr else [])
    server = StdioServerParameters(command=sys.executable, args=argv, env=env)
    params = json.loads(args.params)

    async def main():
        async def batch(c, n):
            ids = []
            for _ in range(n):
                r = await c.call_tool(
                    "profile_kernel",
                    {
                        "kernel": args.kernel,
                        "version": args.version,
                        "params": params,
                        "mode": args.mode,
                        "wait_s": 0,
                    },
                )
                assert not r.is_error, r.content[0].text
                ids.append(r.structured_content["job_id"])
            done = []
            for i in ids:
                while True:
                    r = await c.call_tool("get_profile", {"job_id": i, "wait_s": 50})
                    assert not r.is_error, r.content[0].text
                    if r.structured_content.get("status") == "done":
                        done.append(r.structured_content)
                        break
            return done

        async with Client(server) as c:
            await batch(c, args.warmup_jobs * n_gpus)  # warm-up, untimed
            t0 = time.monotonic()
            done = await batch(c, args.jobs)
            return time.monotonic() - t0, done

    return anyio.run(main)


def _job_row(d: dict) -> dict:
    result = json.loads((Path(d["profile_dir"]) / "result.json").read_text())
    cl = result.get("profiler", {}).get("cluster", {})
    return {
        "worker": cl.get("worker", "local"),
        "span": [cl.get("started"), cl.get("finished")],
        "seconds": cl.get("seconds"),
        "gpu": d.get("gpu"),
        "bottleneck": d.get("bottleneck"),
        "opportunity_1": (d.get("opportunities") or [{}])[0].get("name"),
        "opportunity_1_gain_pct": (d.get("opportunities") or [{}])[0].get("est_gain_pct"),
        "stages": {
            s["name"]: {
                "median_us": s["duration_us"],
                "iqr_us": s["iqr_us"],
                "runs": s["runs"],
                "sm_clock_mhz": s["sm_clock_mhz"],
            }
            for s in d["stages"]
        },
        "params": result["params"],
        "device": result["device"]["name"],
    }


def _overlaps(jobs: list[dict]) -> int:
    """How many pairs of jobs ran at once on one worker (its one GPU): 0 when Dask's GPU resource held."""
    by: dict[str, list] = {}
    for j in jobs:
        by.setdefault(j["worker"], []).append(tuple(j["span"]))
    return sum(x[1] > y[0] for spans in by.values() for x, y in zip(sorted(spans), sorted(spans)[1:]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", default="0,1")
    ap.add_argument("--jobs", type=int, default=6)
    ap.add_argument("--kernel", default="matmul")
    ap.add_argument("--version", default="v3")
    ap.add_argument("--params", default="{}")
    ap.add_argument("--mode", default="event")
    ap.add_argument(
        "--warmup-jobs",
        type=int,
        default=2,
        help="untimed jobs per GPU before the timed ones (on the H100 the first job after the GPU sat "
        "idle for ~10 s measured 4-7 %% slower at a normal SM clock)",
    )
    ap.add_argument("--no-local", action="store_true", help="skip the local (no --cluster) reference run")
    ap.add_argument("--json", default=None, help="write every job's figures here")
    ap.add_argument("--logs", default=None, help="directory for the scheduler's and workers' logs")
    a = ap.parse_args(argv)
    gpus = [g for g in a.gpus.split(",") if g]
    logs = Path(a.logs) if a.logs else None
    if logs:
        logs.mkdir(parents=True, exist_ok=True)
    rows, jobs_of = {}, {}
    # Untimed: one profile first, so that no phase pays Triton's first compile or a cold GPU.
    subprocess.run(
        [
            sys.executable,
            "-m",
            "kprof_mcp.cli",
            "--workspace",
            tempfile.mkdtemp(prefix="kprof-bench-"),
            "profile",
            a.kernel,
            "--version",
            a.version,
            "--mode",
            a.mode,
            "--quiet",
        ]
        + [f"--param={k}={v}" for k, v in json.loads(a.params).items()],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")),
        check=True,
    )
    # With one GPU there is no one-GPU phase to compare with: the cluster against the local server only.
    phases = (
        ([] if a.no_local else [("local server", None)])
        + [("all GPUs", gpus)]
        + ([("one GPU", gpus[:1])] if len(gpus) > 1 else [])
    )
    for label, use in phases:
        ws = Path(tempfile.mkdtemp(prefix="kprof-bench-cluster-"))
        if use is None:  # the same jobs through a server without --cluster, on the same GPUs
            extra = {} if os.environ.get("KPROF_FORCE_CPU") else {"KPROF_GPUS": ",".join(gpus)}
            wall, done = _run_jobs(None, ws, a, extra, n_gpus=len(gpus))
        else:
            addr, procs = _start_cluster(use, logs, label.replace(" ", "_") + "-")
            try:
                wall, done = _run_jobs(addr, ws, a, n_gpus=len(use))
            finally:
                stop_processes(procs, 30.0)
        jobs_of[label] = [_job_row(d) for d in done]
        workers = sorted({j["worker"] if use else str(j["gpu"]) for j in jobs_of[label]})
        rows[label] = {
            "wall_s": round(wall, 2),
            "jobs": len(done),
            "jobs_per_min": 60 * len(done) / wall,
            "workers_used": workers,
        }
        meds = [round(st["median_us"], 2) for j in jobs_of[label] for st in j["stages"].values()]
        print(
            f"{label} ({len(use) if use else len(gpus)} GPU(s)): {len(done)} jobs in {wall:.1f} s = "
            f"{rows[label]['jobs_per_min']:.2f} jobs/min on {len(workers)} worker(s)/GPU(s); stage medians (us) "
            f"{meds}",
            flush=True,
        )
        if use:
            rows[label]["overlapping_jobs_on_one_worker"] = _overlaps(jobs_of[label])
            per = {w: sum(j["worker"] == w for j in jobs_of[label]) for w in workers}
            print(
                f"  jobs per worker {per}; pairs of jobs at once on one worker: "
                f"{rows[label]['overlapping_jobs_on_one_worker']}"
            )
            secs = [j["seconds"] for j in jobs_of[label] if j.get("seconds")]
            if secs:
                mid = {k: sorted(x.get(k, 0.0) for x in secs)[len(secs) // 2] for k in secs[0]}
                rows[label]["median_seconds_per_job"] = mid
                print("  median seconds per job: " + ", ".join(f"{k} {v:.3f}" for k, v in mid.items()))
    ratio = rows["all GPUs"]["jobs_per_min"] / rows["one GPU"]["jobs_per_min"] if "one GPU" in rows else None
    if ratio is not None:
        print(f"\nthroughput ratio ({len(gpus)} GPUs / 1 GPU, on the cluster): {ratio:.2f}")
    if "local server" in rows:
        print(
            f"throughput, cluster with {len(gpus)} GPU(s) / local server on the same GPU(s): "
            f"{rows['all GPUs']['jobs_per_min'] / rows['local server']['jobs_per_min']:.2f}"
        )
    # Results against local runs: the same stages, params and bottleneck; the same opportunity 1
    # unless neither side offers one above MIN_GAIN_PCT (the report's "at the roof" line: a 2-3 %
    # generic estimate comes and goes with the clock); every cluster job's median no further from
    # the local jobs' median than the local jobs themselves are (the GPU boosts between 1.7 and
    # 2.0 GHz from one job to the next; memory clocks do not lock), with 1 % of slack.
    ref = jobs_of.get("local server") or jobs_of.get("one GPU") or jobs_of["all GPUs"]
    ref_label = (
        "local server"
        if "local server" in jobs_of
        else "one-GPU cluster"
        if "one GPU" in jobs_of
        else "cluster"
    )
    same = True
    checks = {}
    for stage in ref[0]["stages"]:
        ref_med = sorted(j["stages"][stage]["median_us"] for j in ref)[len(ref) // 2]
        own = [100 * (j["stages"][stage]["median_us"] - ref_med) / ref_med for j in ref]
        for label in [k for k in ("all GPUs", "one GPU") if k in jobs_of]:
            devs = [100 * (j["stages"][stage]["median_us"] - ref_med) / ref_med for j in jobs_of[label]]
            within = max(map(abs, devs)) <= max(map(abs, own)) + 1.0
            same &= within
            checks[f"{label}/{stage}"] = {
                "cluster_jobs_pct": [round(d, 2) for d in devs],
                "reference_jobs_pct": [round(d, 2) for d in own],
                "within": within,
            }
            print(
                f"  stage {stage}: {label} medians vs the {ref_label}'s median ({ref_med:.2f} us): {min(devs):+.2f} .. "
                f"{max(devs):+.2f} %; the {ref_label}'s own jobs: {min(own):+.2f} .. {max(own):+.2f} % -> "
                f"{'within' if within else 'OUTSIDE'} their spread"
            )

    def opp(j):
        return j["opportunity_1"] if (j["opportunity_1_gain_pct"] or 0) >= MIN_GAIN_PCT else None

    ref_opps = {opp(j) for j in ref}
    for label in [k for k in ("all GPUs", "one GPU") if k in jobs_of]:
        for j in jobs_of[label]:
            if (j["bottleneck"], sorted(j["stages"]), j["params"]) != (
                ref[0]["bottleneck"],
                sorted(ref[0]["stages"]),
                ref[0]["params"],
            ) or opp(j) not in ref_opps:
                same = False
                print(
                    f"  DIFFERS: {label} job on {j['worker']}: {j['bottleneck']} / {j['opportunity_1']} "
                    f"({j['opportunity_1_gain_pct']} %)"
                )
    print(
        f"same stages, params, bottleneck ({ref[0]['bottleneck']}), opportunity 1 above {MIN_GAIN_PCT:.0f} % "
        f"({sorted(map(str, ref_opps))}) and medians as in the {ref_label}: {same}"
    )
    if a.json:
        Path(a.json).write_text(
            json.dumps(
                {
                    "args": vars(a),
                    "phases": rows,
                    "jobs": jobs_of,
                    "throughput_ratio": ratio,
                    "same_as_local": same,
                    "medians": checks,
                },
                indent=2,
            )
        )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

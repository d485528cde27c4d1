"""Cluster throughput: N profiles submitted at once through the MCP server started with
``--cluster``, on a Dask scheduler with one worker per GPU (separate processes: ``dask scheduler``,
``kprof worker --gpus ...``), against the same N on one GPU's worker. Prints the throughput ratio
and checks every job's result against a local profile of the same request.

    python tests/benchmark/bench_cluster.py --gpus 0,1 --jobs 6                    # 2 x H200
    KPROF_FORCE_CPU=1 python tests/benchmark/bench_cluster.py --gpus cpu,cpu --kernel vector_add \\
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

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_cluster(gpus: list[str]) -> tuple[str, list[subprocess.Popen]]:
    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"
    sched = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
                              str(port), "--dashboard-address", ":0"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    time.sleep(3)
    workers = subprocess.Popen([sys.executable, "-m", "kprof_mcp.cli", "worker", "--scheduler", addr, "--gpus",
                                ",".join(gpus)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    from distributed import Client

    with Client(addr, set_as_default=False, timeout=30) as c:
        t0 = time.monotonic()
        while len(c.scheduler_info()["workers"]) < len(gpus):
            if time.monotonic() - t0 > 120:
                raise SystemExit("workers did not register within 120 s")
            time.sleep(0.5)
    return addr, [workers, sched]


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()


def _run_jobs(addr: str, workspace: Path, args) -> tuple[float, list[dict]]:
    import anyio
    from mcp import Client, StdioServerParameters

    env = {"PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "KPROF_FORCE_CPU": os.environ.get("KPROF_FORCE_CPU", "")}
    server = StdioServerParameters(command=sys.executable, args=["-m", "kprof_mcp", "--workspace", str(workspace),
                                                                 "--cluster", addr], env=env)
    params = json.loads(args.params)

    async def main():
        async with Client(server) as c:
            t0 = time.monotonic()
            ids = []
            for _ in range(args.jobs):
                r = await c.call_tool("profile_kernel", {"kernel": args.kernel, "version": args.version,
                                                         "params": params, "mode": args.mode, "wait_s": 0})
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
            return time.monotonic() - t0, done

    return anyio.run(main)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", default="0,1")
    ap.add_argument("--jobs", type=int, default=6)
    ap.add_argument("--kernel", default="matmul")
    ap.add_argument("--version", default="v3")
    ap.add_argument("--params", default="{}")
    ap.add_argument("--mode", default="event")
    a = ap.parse_args(argv)
    gpus = [g for g in a.gpus.split(",") if g]
    rows = {}
    for label, use in (("all GPUs", gpus), ("one GPU", gpus[:1])):
        addr, procs = _start_cluster(use)
        try:
            ws = Path(tempfile.mkdtemp(prefix="kprof-bench-cluster-"))
            wall, done = _run_jobs(addr, ws, a)
        finally:
            _stop(procs)
        results = [json.loads((Path(d["profile_dir"]) / "result.json").read_text()) for d in done]
        med = [s["timing"]["median_ns"] for r in results for s in r["stages"]]
        hosts = sorted({r["profiler"]["cluster"]["worker"] for r in results})
        rows[label] = {"wall_s": wall, "jobs_per_min": 60 * len(done) / wall, "workers": len(hosts),
                       "stage_median_us": [round(m / 1e3, 2) for m in med]}
        print(f"{label} ({len(use)} worker(s)): {len(done)} jobs in {wall:.1f} s, {rows[label]['jobs_per_min']:.2f} "
              f"jobs/min on {len(hosts)} worker(s); stage medians (us) {rows[label]['stage_median_us']}", flush=True)
    ratio = rows["all GPUs"]["jobs_per_min"] / rows["one GPU"]["jobs_per_min"]
    meds = rows["all GPUs"]["stage_median_us"] + rows["one GPU"]["stage_median_us"]
    spread = (max(meds) - min(meds)) / min(meds) if meds else 0.0
    print(f"\nthroughput ratio ({len(gpus)} GPUs / 1 GPU): {ratio:.2f}; stage medians across all jobs within "
          f"{100 * spread:.1f} % of each other")
    return 0


if __name__ == "__main__":
    sys.exit(main())

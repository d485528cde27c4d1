"""Cluster throughput on a mixed batch (issue 30): profiles of several kernels, one comparison, one
sweep and one user command, submitted at once through the MCP server (``--cluster ADDR
--allow-commands``) to a Dask scheduler with one ``kprof worker`` per GPU (separate processes); the
same batch on one GPU's worker; the ratio of throughputs, and that every job finished.

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


def run_batch(addr: str, ws: Path, batch: list[tuple[str, dict]]) -> tuple[float, list[dict]]:
    import anyio
    from mcp import Client, StdioServerParameters

    env = {
        "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "KPROF_FORCE_CPU": os.environ.get("KPROF_FORCE_CPU", ""),
    }
    server = StdioServerParameters(
        command=sys.executable,
        env=env,
        args=["-m", "kprof_mcp", "--workspace", str(ws), "--cluster", addr, "--allow-commands"],
    )

    async def main():
        async with Client(server, read_timeout_seconds=900) as c:
            t0 = time.monotonic()
            ids = []
            for tool, a in batch:
                r = await c.call_tool(tool, {**a, "wait_s": 0})
                assert not r.is_error, f"{tool}: {r.content[0].text[:500]}"
                ids.append((tool, r.structured_content["job_id"]))
            rows = []
            for tool, i in ids:
                while True:
                    r = await c.call_tool("get_profile", {"job_id": i, "wait_s": 50})
                    s = r.structured_content or {}
                    if r.is_error or s.get("status") in ("done", "failed", "cancelled"):
                        rows.append(
                            {
                                "tool": tool,
                                "ok": not r.is_error and s.get("status") == "done",
                                "error": r.content[0].text[:300] if r.is_error else None,
                            }
                        )
                        break
            return time.monotonic() - t0, rows

    return anyio.run(main)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", default="0,1")
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    gpus = [g for g in a.gpus.split(",") if g]
    batch = jobs(a.small)
    out = {}
    for label, use in (("all GPUs", gpus), ("one GPU", gpus[:1])):
        ws = Path(tempfile.mkdtemp(prefix="kprof-mixed-"))
        (ws / "step.py").write_text(SCRIPT.replace("STEPS", "4" if a.small else "30"))
        addr, procs = _start_cluster(use)
        try:
            run_batch(addr, ws, batch[: len(use)])  # warm-up: one untimed job per worker
            wall, rows = run_batch(addr, ws, batch)
        finally:
            stop_processes(procs, 30.0)
        ok = sum(r["ok"] for r in rows)
        out[label] = {
            "gpus": len(use),
            "jobs": len(rows),
            "ok": ok,
            "wall_s": round(wall, 1),
            "jobs_per_min": round(60 * len(rows) / wall, 2),
            "rows": rows,
        }
        print(
            f"{label} ({len(use)} GPU(s)): {ok}/{len(rows)} jobs done in {wall:.1f} s = "
            f"{60 * len(rows) / wall:.2f} jobs/min; by tool: "
            + ", ".join(
                f"{t} {sum(r['ok'] for r in rows if r['tool'] == t)}/{sum(r['tool'] == t for r in rows)}"
                for t in dict.fromkeys(r["tool"] for r in rows)
            ),
            flush=True,
        )
        for r in rows:
            if not r["ok"]:
                print("  FAILED", r["tool"], r["error"], flush=True)
    ratio = out["all GPUs"]["jobs_per_min"] / out["one GPU"]["jobs_per_min"]
    print(f"\nthroughput ratio ({len(gpus)} GPUs / 1 GPU) on the mixed batch: {ratio:.2f}")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1))
    return 0 if all(v["ok"] == v["jobs"] for v in out.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

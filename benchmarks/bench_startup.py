"""Server start-up to answering tools/list: kprof-mcp vs a trivial MCP server, side by side.

Also times classify_bottleneck per call (engine function and through an in-process MCP client).
Target: start-up ratio <= 1.5; classify < 10 ms per call.

    python benchmarks/bench_startup.py [--runs 7]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


async def _time_list_tools(args: list[str]) -> float:
    params = StdioServerParameters(
        command=sys.executable,
        args=args,
        env={"PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")},
    )
    t0 = time.perf_counter()
    async with Client(params) as c:
        await c.list_tools()
        return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    ws = tempfile.mkdtemp(prefix="kprof-startup-")
    ours, ref = [], []
    for _ in range(a.runs):  # interleaved so drift hits both alike
        ref.append(anyio.run(_time_list_tools, [str(ROOT / "benchmarks/trivial_server.py")]))
        ours.append(anyio.run(_time_list_tools, ["-m", "kprof_mcp.server", "--workspace", ws]))
    mo, mr = statistics.median(ours), statistics.median(ref)

    from kprof_mcp.engine import Engine
    from kprof_mcp.server import build_server

    n = 2000
    t0 = time.perf_counter()
    for _ in range(n):
        Engine.classify(5, 85, 12, 60, 256, 0.5)
    per_call_engine = (time.perf_counter() - t0) / n

    async def mcp_calls() -> float:
        async with Client(build_server()) as c:
            t = time.perf_counter()
            for _ in range(200):
                await c.call_tool(
                    "classify_bottleneck",
                    {
                        "tc_pct": 5,
                        "dram_pct": 85,
                        "occupancy_pct": 12,
                        "l2_hit_pct": 60,
                        "local_spill_bytes": 256,
                        "waves_per_sm": 0.5,
                    },
                )
            return (time.perf_counter() - t) / 200

    per_call_mcp = anyio.run(mcp_calls)
    print(f"runs: {a.runs} (interleaved), python {sys.version.split()[0]}")
    print("| measure | kprof-mcp | reference | ratio | target |")
    print("|---|---|---|---|---|")
    print(
        f"| start-up to tools/list answered (median s) | {mo:.3f} | {mr:.3f} (trivial MCPServer) | {mo / mr:.2f} | <= 1.5 |"
    )
    print(f"| classify_bottleneck, engine (ms/call) | {per_call_engine * 1e3:.4f} | -- | -- | < 10 |")
    print(
        f"| classify_bottleneck, in-process MCP call (ms/call) | {per_call_mcp * 1e3:.3f} | -- | -- | < 10 |"
    )


if __name__ == "__main__":
    main()

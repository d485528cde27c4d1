"""Issue 26's cases through the MCP server, as an agent meets them: for each planted problem, the
server (stdio, the SDK's client) profiles the slow version in annotation mode and the answer's
opportunity 1 is printed beside the cause the fix removes. GPU only.

    python benchmarks/bench_catalogue_via_mcp.py [--json out.json] [--only calib_spill_tile,...]
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "tests" / "calibration" / "kernels"
CASES = [  # (kernel, slow version, params, the cause the fix removes)
    ("calib_fma_gemm", "v0", {}, "fma_dot"),
    ("calib_histogram", "v0", {}, "atomics"),
    ("calib_atomic", "v0", {}, "atomics"),
    ("calib_small_tiles", "v0", {}, "small_tiles"),
    ("calib_bank_conflicts", "v0", {}, "bank_conflicts"),
    ("calib_transpose", "v0", {}, "over_fetch"),
    ("calib_spill", "v0", {}, "spills"),
    ("calib_spill_tile", "v0", {}, "spills"),  # issue 26's "64x256 fp32 tile on one warp"
]


async def main(out: Path | None, only: list[str]) -> int:
    cases = [c for c in CASES if not only or c[0] in only]
    ws = Path(tempfile.mkdtemp(prefix="kprof-catalogue-"))
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kprof_mcp", "--workspace", str(ws), "--kernels-dir", str(KERNELS)],
        env={"PYTHONPATH": f"{ROOT}:{':'.join(sys.path[1:])}"},
    )
    rows, failures = [], 0
    async with Client(server, read_timeout_seconds=600) as c:
        for kernel, version, params, cause in cases:
            t0 = time.perf_counter()
            r = await c.call_tool(
                "profile_kernel",
                {"kernel": kernel, "version": version, "params": params, "mode": "annotation", "wait_s": 50},
            )
            while not r.is_error and r.structured_content.get("status") in ("queued", "running"):
                r = await c.call_tool("get_profile", {"job_id": r.structured_content["job_id"], "wait_s": 50})
            if r.is_error:
                rows.append({"kernel": kernel, "error": r.content[0].text[:500]})
                failures += 1
                print(f"{kernel} {version}: ERROR {r.content[0].text[:300]}", flush=True)
                continue
            top = (r.structured_content.get("opportunities") or [{}])[0]
            ok = top.get("cause") == cause
            failures += not ok
            rows.append(
                {
                    "kernel": kernel,
                    "version": version,
                    "expected": cause,
                    "top": top,
                    "wall_s": round(time.perf_counter() - t0, 1),
                }
            )
            print(
                f"{kernel} {version}: opportunity 1 = {top.get('cause')} ({top.get('name', '')[:70]}, est "
                f"{top.get('est_gain_pct')} %, trigger {top.get('trigger')}) — expected {cause}: "
                f"{'OK' if ok else 'WRONG'}",
                flush=True,
            )
    if out:
        out.write_text(json.dumps(rows, indent=2))
    print(f"{len(cases) - failures} of {len(cases)} cases: opportunity 1 names the cause the fix removes")
    return 1 if failures else 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--only", default="", help="comma-separated kernels (default: every case)")
    a = ap.parse_args()
    sys.exit(anyio.run(main, a.json, [k for k in a.only.split(",") if k]))

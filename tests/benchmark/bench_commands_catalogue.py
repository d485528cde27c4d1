"""Issue 26's eager chains through the MCP server's profile_command (annotation mode, stage
models given): each range's duration per occurrence (its kernels summed), its bandwidth as a share
of the device's peak (never above 100 %), and opportunity 1 (the chains should be told to fuse).
GPU only; the server is started with --allow-commands.

    python tests/benchmark/bench_commands_catalogue.py [--json out.json]
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]
MODELS = {"chain": {"bytes": 3 * 4 * 2 ** 25, "flops": 6 * 2 ** 25, "dtype": "float32"},
          "rmsnorm": {"bytes": 2 * 4 * 2 ** 25, "flops": 4 * 2 ** 25, "dtype": "float32"}}


async def main(out: Path | None) -> int:
    ws = Path(tempfile.mkdtemp(prefix="kprof-commands-"))
    (ws / "chain.py").write_text((ROOT / "examples" / "eager_chain" / "chain.py").read_text())
    server = StdioServerParameters(command=sys.executable, args=["-m", "kprof_mcp", "--workspace", str(ws),
                                                                 "--allow-commands"],
                                   env={"PYTHONPATH": f"{ROOT}:{':'.join(sys.path[1:])}"})
    failures = 0
    async with Client(server, read_timeout_seconds=600) as c:
        t0 = time.perf_counter()
        r = await c.call_tool("profile_command", {"command": ["python", "chain.py", "--steps", "4"],
                                                  "mode": "annotation", "stage_models": MODELS, "wait_s": 50})
        while not r.is_error and r.structured_content.get("status") in ("queued", "running"):
            r = await c.call_tool("get_profile", {"job_id": r.structured_content["job_id"], "wait_s": 50})
        if r.is_error:
            print("ERROR", r.content[0].text[:2000])
            return 1
        s = r.structured_content
        print(r.content[0].text[:3000])
        rows = []
        for st in s["stages"]:
            rows.append({k: st.get(k) for k in ("name", "duration_us", "gbps", "pct_of_peak_bw", "dram_bytes_over_model",
                                                "tc_pct", "dram_pct", "kernels")})
        top = (s.get("opportunities") or [{}])[0]
        print("\nstages:", json.dumps(rows, indent=1))
        print("opportunity 1:", json.dumps(top))
        if top.get("cause") != "fusion":
            failures += 1
        print(f"wall {time.perf_counter() - t0:.1f} s; opportunity 1 {'is' if not failures else 'is NOT'} 'fusion'")
        if out:
            out.write_text(json.dumps({"summary": s, "contract": r.content[0].text}, indent=2))
    return 1 if failures else 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", type=Path, default=None)
    sys.exit(anyio.run(main, ap.parse_args().json))

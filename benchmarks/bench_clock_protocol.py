"""Issue 27's clock protocol on a GPU, side by side in one run, through the MCP server (stdio, the
SDK's client): eight alternating event-mode profiles each of matmul v3, softmax v2 and vector_add v1
with the SM clock locked (clock_control='base', the default) and eight with it free
(clock_control='none'), interleaved; for each kernel and setting the stage time's (max − min) ÷
median over the eight profiles, and the SM clock the profiles ran at. Target: ≤ 0.5 % locked.

    python benchmarks/bench_clock_protocol.py [--rounds 8] [--json out.json] [--locked-only]

``--locked-only``: the locked profiles alone (no free-clock reference between them), so that the server
keeps the lock between them (issue 40) as in an agent's loop; each profile's wall time, stopping reason
and runs are printed too. ``KPROF_*`` variables are passed to the server (``KPROF_CLOCK_KEEP_S=0``: the
clock locked and reset around every profile, as before issue 40; ``KPROF_TIMING_STOP=ci``: the opt-in
early stop).

Also, before the profiles, the sustained-clock probe (--probe): the SM clock a heavy bf16 GEMM holds
at the power limit under each candidate lock, to choose devices.json's sustained_sm_mhz.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
CASES = [("matmul", "v3", {}), ("softmax", "v2", {}), ("vector_add", "v1", {})]


def probe(candidates: list[int], seconds: float = 3.0) -> list[dict]:
    """Lock at each candidate, run a bf16 8192^3 GEMM back to back, sample the SM clock."""
    import torch

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    rows = []
    for mhz in candidates:
        subprocess.run(["nvidia-smi", "-lgc", f"{mhz},{mhz}"], capture_output=True, check=True)
        samples, stop = [], threading.Event()

        def sample():
            while not stop.is_set():
                out = (
                    subprocess.run(
                        ["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits"],
                        capture_output=True,
                        text=True,
                    )
                    .stdout.strip()
                    .split(",")
                )
                samples.append((float(out[0]), float(out[1])))
                time.sleep(0.2)

        for _ in range(20):
            a @ a
        torch.cuda.synchronize()
        t = threading.Thread(target=sample)
        t.start()
        t0 = time.time()
        n = 0
        while time.time() - t0 < seconds:
            a @ a
            n += 1
        torch.cuda.synchronize()
        stop.set()
        t.join()
        tflops = 2 * 8192**3 * n / (time.time() - t0) / 1e12
        clk = [c for c, _ in samples[2:]] or [c for c, _ in samples]
        rows.append(
            {
                "lock_mhz": mhz,
                "sm_mhz_min": min(clk),
                "sm_mhz_median": statistics.median(clk),
                "power_w_median": statistics.median(p for _, p in samples),
                "tflops": tflops,
                "holds": min(clk) >= mhz - 15,
            }
        )
        print(
            f"lock {mhz} MHz: SM clock min {min(clk):.0f} / median {statistics.median(clk):.0f} MHz, "
            f"power {rows[-1]['power_w_median']:.0f} W, {tflops:.0f} TFLOP/s -> {'holds' if rows[-1]['holds'] else 'drops'}",
            flush=True,
        )
    subprocess.run(["nvidia-smi", "-rgc"], capture_output=True)
    return rows


async def profiles(rounds: int, settings: tuple[str, ...] = ("base", "none")) -> dict:
    ws = Path(tempfile.mkdtemp(prefix="kprof-clocks-"))
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kprof_mcp", "--workspace", str(ws)],
        env={
            "PYTHONPATH": f"{ROOT}:{':'.join(sys.path[1:])}",
            **{k: v for k, v in os.environ.items() if k.startswith("KPROF_")},
        },
    )
    got: dict = {}
    async with Client(server, read_timeout_seconds=600) as c:
        for r in range(rounds):
            for kernel, version, params in CASES:
                for cc in settings:
                    t0 = time.perf_counter()
                    res = await c.call_tool(
                        "profile_kernel",
                        {
                            "kernel": kernel,
                            "version": version,
                            "params": params,
                            "mode": "event",
                            "clock_control": cc,
                            "wait_s": 50,
                        },
                    )
                    while not res.is_error and res.structured_content.get("status") in ("queued", "running"):
                        res = await c.call_tool(
                            "get_profile", {"job_id": res.structured_content["job_id"], "wait_s": 50}
                        )
                    if res.is_error:
                        print("ERROR", kernel, cc, res.content[0].text[:500], flush=True)
                        continue
                    wall = time.perf_counter() - t0
                    s = res.structured_content
                    d = json.loads((Path(s["profile_dir"]) / "params.json").read_text())
                    full = json.loads((Path(s["profile_dir"]) / "result.json").read_text())
                    timing = full["stages"][0]["timing"]
                    st = s["stages"][0]
                    clk = st.get("sm_clock_mhz") or []
                    row = {
                        "duration_us": st["duration_us"],
                        "locked": d.get("clock_state", {}).get("clocks_locked"),
                        "clock_control": d.get("clock_state", {}).get("clock_control"),
                        "sm_mhz_median": statistics.median(clk) if clk else None,
                        "wall_s": round(wall, 3),
                        "stop": timing.get("stop_reason"),
                        "runs": len(timing.get("samples_ns") or []),
                        "clock": (full.get("timings") or {}).get("clock"),
                        "phases": (full.get("timings") or {}).get("phases"),
                    }
                    got.setdefault(f"{kernel} {version}", {}).setdefault(cc, []).append(row)
                    print(
                        f"round {r + 1} {kernel} {version} clock_control={cc}: {st['duration_us']:.3f} us, SM "
                        f"{row['sm_mhz_median']} MHz, locked={row['locked']} ({row['clock']}), wall "
                        f"{wall:.2f} s, {row['stop']} after {row['runs']} runs",
                        flush=True,
                    )
    return got


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument(
        "--probe", default="", help="comma-separated candidate locks in MHz (e.g. 1755,1590,1410)"
    )
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--cases", default="", help="comma-separated kernels (default: matmul, softmax, vector_add)"
    )
    ap.add_argument(
        "--locked-only", action="store_true", help="no free-clock profiles between the locked ones"
    )
    a = ap.parse_args()
    if a.cases:
        CASES[:] = [c for c in CASES if c[0] in a.cases.split(",")]
    out: dict = {}
    if a.probe:
        out["probe"] = probe([int(x) for x in a.probe.split(",")])
        held = [r["lock_mhz"] for r in out["probe"] if r["holds"]]
        if held and "KPROF_SM_LOCK_MHZ" not in __import__("os").environ:
            __import__("os").environ["KPROF_SM_LOCK_MHZ"] = str(max(held))
            print(
                f"locking at {max(held)} MHz for the profiles (the highest candidate the GEMM held)",
                flush=True,
            )
    out["profiles"] = anyio.run(profiles, a.rounds, ("base",) if a.locked_only else ("base", "none"))
    ok = True
    print(
        "\n| kernel | clock_control | profiles | median (us) | (max - min) / median | SM MHz (min-max of medians) "
        "| target | wall per profile (s, median) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, by in out["profiles"].items():
        for cc, rows in by.items():
            t = [r["duration_us"] for r in rows]
            spread = 100.0 * (max(t) - min(t)) / statistics.median(t)
            target = "≤ 0.5 %" if cc == "base" else "(reference)"
            if cc == "base" and spread > 0.5:
                ok = False
            mhz = [r["sm_mhz_median"] for r in rows if r["sm_mhz_median"]]
            clk = f"{min(mhz):.0f}-{max(mhz):.0f}" if mhz else "n/a"
            walls = [r["wall_s"] for r in rows]
            print(
                f"| {name} | {cc} | {len(t)} | {statistics.median(t):.3f} | {spread:.2f} % | {clk} | {target} "
                f"| {statistics.median(walls):.2f} |"
            )
    free = {n: by.get("none") for n, by in out["profiles"].items()}
    locked = {n: by.get("base") for n, by in out["profiles"].items()}
    for n in out["profiles"]:
        if free[n] and locked[n]:
            print(
                f"{n}: locked ÷ free median time {statistics.median(r['duration_us'] for r in locked[n]) / statistics.median(r['duration_us'] for r in free[n]):.3f}"
            )
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))
    print("clock protocol target (locked spread ≤ 0.5 % for each kernel):", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Issue 6's GPU evidence, through the real MCP server over stdio (run on the GPU machine).

    python docs/evidence/gpu-reliability/device_reliability.py faults   WORKSPACE OUTFILE   # CUDA faults, kills, clocks
    python docs/evidence/gpu-reliability/device_reliability.py parallel WORKSPACE OUTFILE   # one job per GPU, the rest queued

faults: each broken package of tests/fixtures/user_kernels/scale.py (real illegal memory access,
real GPU out-of-memory, segfault, raise, wrong result, abort, hang past its time limit), then
an annotation job cancelled while Nsight Compute runs, ncu missing; after every fault the
server must answer and a normal profile must work. Clocks and stray processes are recorded.
parallel: three event-mode profiles submitted at once; their GPUs and start/finish times.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[3]  # the repository root
USER = ROOT / "tests" / "fixtures" / "user_kernels"


def smi() -> str:
    try:
        return subprocess.run(
            [
                "nvidia-smi",
                "--query-gpu=index,clocks.sm,clocks.max.sm,clocks_event_reasons.active",
                "--format=csv,noheader",
            ],
            capture_output=True,
            text=True,
            timeout=20,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"nvidia-smi failed: {e}"


def stray() -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,pgid,cmd"], capture_output=True, text=True).stdout.splitlines()
    return [
        ln.strip()
        for ln in out
        if ("kprof_mcp.child" in ln or "/ncu " in ln or " sleep 1000" in ln) and "ps -eo" not in ln
    ]


def broken(ws: Path, mode: str) -> str:
    dst = ws / "mykernels" / f"scale_{mode}.py"
    dst.parent.mkdir(exist_ok=True, parents=True)
    dst.write_text((USER / "scale.py").read_text().replace('MODE = "ok"', f'MODE = "{mode}"'))
    return str(dst.relative_to(ws))


def server(ws: Path, extra=None) -> StdioServerParameters:
    env = {
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "PATH": os.environ.get("PATH", ""),
        **(extra or {}),
    }
    return StdioServerParameters(
        command=sys.executable, args=["-m", "kprof_mcp.server", "--workspace", str(ws)], env=env
    )


async def faults(ws: Path, out: list[str]) -> None:
    rows = []
    async with Client(server(ws)) as c:

        async def check_alive():
            r = await c.call_tool(
                "profile_kernel",
                {
                    "kernel": "vector_add",
                    "version": "v0",
                    "mode": "event",
                    "params": {"n": 1 << 20},
                    "wait_s": 50,
                },
            )
            return (not r.is_error) and r.structured_content["status"] == "done"

        cases = [
            ("illegal", {}),
            ("oom", {}),
            ("segfault", {}),
            ("raise", {}),
            ("wrong", {}),
            ("abort", {}),
            ("exit", {}),
            ("hang", {"timeout_s": 20}),
        ]
        for mode, extra in cases:
            t0 = time.time()
            r = await c.call_tool(
                "profile_kernel",
                {"kernel": broken(ws, mode), "params": {"n": 4096}, "mode": "event", "wait_s": 50, **extra},
            )
            wall = time.time() - t0
            text = r.content[0].text if r.content else ""
            alive = await check_alive()
            rows.append(
                {
                    "fault": mode,
                    "is_error": r.is_error,
                    "wall_s": round(wall, 1),
                    "message": text[:400],
                    "server_answers_and_profiles_after": alive,
                    "stray_processes": stray(),
                }
            )
            print(f"{mode}: error={r.is_error} alive={alive} {text[:160]!r}", flush=True)
        # cancel an annotation job while Nsight Compute runs (mla_decode v0 at the defaults: ~17 s under ncu)
        before = smi()
        r = await c.call_tool(
            "profile_kernel", {"kernel": "mla_decode", "version": "v0", "mode": "annotation", "wait_s": 0}
        )
        if r.is_error:
            rows.append(
                {"fault": "cancel an annotation job while ncu runs", "skipped": r.content[0].text[:300]}
            )
            out.append("```json\n" + json.dumps(rows, indent=1) + "\n```\n")
            return
        job = r.structured_content["job_id"]
        seen = []
        t0 = time.time()
        while time.time() - t0 < 120:
            g = await c.call_tool("get_profile", {"job_id": job})
            st = g.structured_content or {}
            seen.append((round(time.time() - t0, 1), st.get("status"), st.get("message")))
            if any("/ncu " in p for p in stray()):  # Nsight Compute is running the kernel: let it work a bit
                await anyio.sleep(3.0)
                seen.append((round(time.time() - t0, 1), "ncu process seen", None))
                break
            await anyio.sleep(0.5)
        during = smi()
        strays_during = stray()
        cancel = await c.call_tool("cancel_profile", {"job_id": job})
        await anyio.sleep(1.0)
        rows.append(
            {
                "fault": "cancel an annotation job while ncu runs",
                "progress_seen": seen[-4:],
                "cancel_result": cancel.structured_content,
                "clocks_before": before,
                "clocks_during": during,
                "clocks_after": smi(),
                "processes_during": strays_during,
                "stray_processes_after": stray(),
                "server_answers_and_profiles_after": await check_alive(),
            }
        )
        print(json.dumps(rows[-1], indent=1), flush=True)
    # ncu missing: a server whose PATH has no ncu and KPROF_NCU pointing nowhere
    async with Client(server(ws, {"PATH": "/usr/bin:/bin", "KPROF_NCU": "/nonexistent/ncu"})) as c:
        r = await c.call_tool("profile_kernel", {"kernel": "vector_add", "mode": "annotation", "wait_s": 50})
        rows.append({"fault": "ncu missing", "is_error": r.is_error, "message": r.content[0].text[:400]})
        print(rows[-1], flush=True)
    out.append("```json\n" + json.dumps(rows, indent=1) + "\n```\n")


async def parallel(ws: Path, out: list[str]) -> None:
    async with Client(server(ws)) as c:
        subs = []
        t0 = time.time()
        for _ in range(3):
            r = await c.call_tool(
                "profile_kernel",
                {"kernel": "matmul", "version": "v0", "mode": "event", "params": SIZE, "wait_s": 0},
            )
            subs.append({k: r.structured_content[k] for k in ("job_id", "status", "queue_position")})
        jobs = {
            s["job_id"]: {"submitted": s, "running_at": None, "done_at": None, "gpu": None, "positions": []}
            for s in subs
        }
        while any(j["done_at"] is None for j in jobs.values()) and time.time() - t0 < 500:
            for jid, j in jobs.items():
                if j["done_at"] is not None:
                    continue
                g = await c.call_tool("get_profile", {"job_id": jid})
                st = g.structured_content or {}
                now = round(time.time() - t0, 1)
                if st.get("queue_position") and (
                    not j["positions"] or j["positions"][-1][1] != st["queue_position"]
                ):
                    j["positions"].append((now, st["queue_position"]))
                if st.get("status") == "running" and j["running_at"] is None:
                    j["running_at"], j["gpu"] = now, st.get("gpu")
                if g.is_error or st.get("status") == "done":
                    j["done_at"], j["gpu"] = now, st.get("gpu", j["gpu"])
                    j["result"] = (
                        g.content[0].text[:300]
                        if g.is_error
                        else {"total_us": st.get("total_duration_us"), "profile_dir": st.get("profile_dir")}
                    )
            await anyio.sleep(0.3)
        out.append("```json\n" + json.dumps(jobs, indent=1, default=str) + "\n```\n")
        print(json.dumps(jobs, indent=1, default=str), flush=True)


SIZE = (
    {"M": 64, "N": 64, "K": 64, "dtype": "float16"}
    if "--small" in sys.argv
    else {"M": 8192, "N": 8192, "K": 8192}
)

if __name__ == "__main__":
    what, ws, outfile = sys.argv[1], Path(sys.argv[2]).resolve(), sys.argv[3]
    ws.mkdir(parents=True, exist_ok=True)
    lines = [
        f"# device_reliability {what} — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n",
        "```\n" + smi() + "\n```\n",
    ]
    anyio.run(faults if what == "faults" else parallel, ws, lines)
    Path(outfile).write_text("\n".join(lines))

"""Record Profiler Output Contracts through the real MCP server over stdio, for before/after evidence.

For each (kernel, mode) this asks a freshly started ``kprof_mcp.server`` (the official MCP SDK's
stdio client and ``ClientSession``) for ``profile_kernel`` and saves, under ``--out DIR``:

    <kernel>-<version>-<mode>.md    the contract, verbatim as the tool returned it
    <kernel>-<version>-<mode>.json  structured content, wall time, read_params' device/clocks/versions,
                                    or the error
    summary.json                    every run's outcome, the server command, the device_info answer, and
                                    which kprof_mcp the server's Python imports
    server.log                      the server's stderr

A profile that fails (tool error, time-out, server crash) records its error and the script goes
on; after a crash the next profile gets a new server. Exit status: 0 when every profile gave a
contract, 1 otherwise.

    python docs/evidence/refactor-contracts/contract_evidence.py --out /tmp/ev                       # matmul, mla_decode v3; 4 modes
    python docs/evidence/refactor-contracts/contract_evidence.py --out /tmp/ev --modes event --kernels matmul \\
        --params '{"matmul": {"M": 128, "N": 128, "K": 128}}'
    # a server from another source tree (e.g. a clean export of an older commit):
    python docs/evidence/refactor-contracts/contract_evidence.py --out /tmp/ev \\
        --server-cmd "PYTHONPATH=$PWD/.before:/tmp/site python3 -m kprof_mcp.server"

``--server-cmd`` is split like a shell line; leading ``NAME=value`` words set the server's
environment (the SDK hands the server only a safe subset of ours, plus PYTHONPATH, which is passed
on unless the command sets it). ``--workspace WS`` is appended. The server runs in ``--server-cwd``
(default: the workspace), so that a checkout in the current directory does not shadow the
package named by PYTHONPATH.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

MODES = ("annotation", "ncu", "nsys", "event")
PENDING = ("queued", "running")


def parse_server_cmd(cmd: str | None) -> tuple[list[str], dict[str, str]]:
    """``"A=1 B=2 python3 -m kprof_mcp.server"`` -> (argv, {"A": "1", "B": "2"})."""
    if not cmd:
        return [sys.executable, "-m", "kprof_mcp.server"], {}
    words = shlex.split(cmd)
    env: dict[str, str] = {}
    if words and words[0] == "env":
        words = words[1:]
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
        k, v = words.pop(0).split("=", 1)
        env[k] = v
    if not words:
        raise SystemExit(f"--server-cmd {cmd!r} names no program")
    return words, env


def server_env(extra: dict[str, str]) -> dict[str, str]:
    env = {}
    for k in (
        "PYTHONPATH",
        "CUDA_VISIBLE_DEVICES",
        "KPROF_NCU",
        "KPROF_FORCE_CPU",
        "KPROF_GPUS",
        "LD_LIBRARY_PATH",
        "TRITON_CACHE_DIR",
        "PYTHONUNBUFFERED",
    ):
        if os.environ.get(k):
            env[k] = os.environ[k]
    env.update(extra)
    return env


def which_kprof(argv: list[str], env: dict[str, str], cwd: str) -> dict[str, Any]:
    """Ask the server's own Python which kprof_mcp (and kernels) it imports, from the server's cwd."""
    if "-m" not in argv:
        return {"note": "server command has no '-m': not checked"}
    py = argv[: argv.index("-m")]
    code = (
        "import json, sys, kprof_mcp, kernels; print(json.dumps({'kprof_mcp': kprof_mcp.__file__, "
        "'kernels': list(kernels.__path__), 'python': sys.version.split()[0], 'executable': sys.executable}))"
    )
    full_env = {**{k: v for k, v in os.environ.items() if k in ("PATH", "HOME")}, **env}
    try:
        cp = subprocess.run(
            [*py, "-c", code], env=full_env, cwd=cwd, capture_output=True, text=True, timeout=120
        )
        if cp.returncode == 0:
            return json.loads(cp.stdout.strip().splitlines()[-1])
        return {"error": (cp.stdout + cp.stderr)[-2000:]}
    except Exception as e:  # noqa: BLE001 — recorded, not fatal
        return {"error": repr(e)}


def _text(result) -> str:
    return "\n".join(
        getattr(c, "text", "") for c in (result.content or []) if getattr(c, "type", "") == "text"
    )


def _err(e: BaseException) -> str:
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(_err(x) for x in e.exceptions)
    return f"{type(e).__name__}: {e}"


class Runner:
    def __init__(self, a: argparse.Namespace):
        self.a = a
        self.out = Path(a.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.argv, self.env_extra = parse_server_cmd(a.server_cmd)
        self.ws = Path(a.workspace or tempfile.mkdtemp(prefix="kprof-ws-")).resolve()
        self.ws.mkdir(parents=True, exist_ok=True)
        self.cwd = str(Path(a.server_cwd).resolve() if a.server_cwd else self.ws)
        self.env = server_env(self.env_extra)
        self.params = json.loads(a.params) if a.params else {}
        self.items = [(k, m) for k in a.kernels.split(",") if k for m in a.modes.split(",") if m]
        for _, m in self.items:
            if m not in MODES:
                raise SystemExit(f"unknown mode {m!r}; one of {MODES}")
        self.records: list[dict[str, Any]] = []
        self.device_info: Any = None
        self.server_starts = 0

    def log(self, msg: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    def server(self) -> StdioServerParameters:
        return StdioServerParameters(
            command=self.argv[0],
            args=[*self.argv[1:], "--workspace", str(self.ws)],
            env=self.env,
            cwd=self.cwd,
        )

    async def profile(self, s: ClientSession, kernel: str, mode: str) -> dict[str, Any]:
        a = self.a
        args: dict[str, Any] = {
            "kernel": kernel,
            "version": a.version,
            "mode": mode,
            "wait_s": a.wait_s,
            "timeout_s": a.timeout_s,
        }
        if self.params.get(kernel):
            args["params"] = self.params[kernel]
        rec: dict[str, Any] = {
            "kernel": kernel,
            "version": a.version,
            "mode": mode,
            "args": args,
            "started_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        t0 = time.perf_counter()
        polls = 0
        job_id = None
        call_timeout = a.wait_s + 120
        try:
            with anyio.fail_after(a.timeout_s + 180):
                r = await s.call_tool("profile_kernel", args, read_timeout_seconds=call_timeout)
                while not r.is_error and (r.structured_content or {}).get("status") in PENDING:
                    job_id = r.structured_content["job_id"]
                    polls += 1
                    self.log(
                        f"  {kernel} {mode}: {r.structured_content['status']} "
                        f"({r.structured_content.get('message') or ''}); get_profile #{polls}"
                    )
                    r = await s.call_tool(
                        "get_profile", {"job_id": job_id, "wait_s": 50}, read_timeout_seconds=call_timeout
                    )
        except TimeoutError:
            rec.update(ok=False, error=f"no contract within {a.timeout_s + 180:.0f} s")
            if job_id:
                try:
                    with anyio.fail_after(60):
                        await s.call_tool("cancel_profile", {"job_id": job_id})
                except Exception as e:  # noqa: BLE001
                    rec["cancel_error"] = _err(e)
            rec["wall_s"] = round(time.perf_counter() - t0, 2)
            return rec
        rec["wall_s"] = round(time.perf_counter() - t0, 2)
        rec["polls"] = polls
        text = _text(r)
        if r.is_error:
            rec.update(ok=False, error=text)
            return rec
        sc = r.structured_content or {}
        rec.update(ok=True, contract=text, structured=sc)
        if sc.get("profile_dir"):
            try:
                rp = await s.call_tool(
                    "read_params", {"profile_dir": sc["profile_dir"]}, read_timeout_seconds=60
                )
                p = (rp.structured_content or {}).get("params") or {}
                rec["read_params"] = {k: p.get(k) for k in ("device", "clock_state", "versions") if k in p}
            except Exception as e:  # noqa: BLE001 — extra information only
                rec["read_params_error"] = _err(e)
        return rec

    def save(self, rec: dict[str, Any]) -> None:
        stem = f"{rec['kernel']}-{rec['version']}-{rec['mode']}"
        if rec.get("ok"):
            (self.out / f"{stem}.md").write_text(rec["contract"])
        else:
            (self.out / f"{stem}.md").unlink(missing_ok=True)
        (self.out / f"{stem}.json").write_text(
            json.dumps({k: v for k, v in rec.items() if k != "contract"}, indent=1, default=str) + "\n"
        )
        self.records.append(rec)
        st = rec.get("structured") or {}
        figs = ", ".join(f"{x['name']} {x['duration_us']:.2f} us" for x in st.get("stages", []))
        self.log(
            f"{stem}: {'ok' if rec.get('ok') else 'FAILED'} in {rec.get('wall_s')} s"
            + (f" [{figs}; {st.get('bottleneck')}]" if figs else f" — {str(rec.get('error'))[:300]}")
        )

    async def run(self) -> None:
        todo = list(self.items)
        with open(self.out / "server.log", "a") as errlog:
            while todo:
                self.server_starts += 1
                self.log(
                    f"starting server #{self.server_starts}: {shlex.join(self.server().args)} "
                    f"(cwd {self.cwd})"
                )
                current = None
                try:
                    async with stdio_client(self.server(), errlog=errlog) as (read, write):
                        async with ClientSession(read, write) as s:
                            with anyio.fail_after(120):
                                await s.initialize()
                            if self.device_info is None:
                                try:
                                    di = await s.call_tool("device_info", {}, read_timeout_seconds=120)
                                    self.device_info = di.structured_content
                                except Exception as e:  # noqa: BLE001
                                    self.device_info = {"error": _err(e)}
                            while todo:
                                current = todo[0]
                                self.log(f"profile_kernel {current[0]} {self.a.version} mode={current[1]}")
                                rec = await self.profile(s, *current)
                                todo.pop(0)
                                current = None
                                self.save(rec)
                except Exception as e:  # noqa: BLE001 — server died or the session broke: next one
                    msg = _err(e)
                    self.log(f"session failed: {msg}")
                    if current is not None and todo and todo[0] == current:
                        todo.pop(0)
                        self.save(
                            {
                                "kernel": current[0],
                                "version": self.a.version,
                                "mode": current[1],
                                "ok": False,
                                "error": f"session failed: {msg}",
                            }
                        )
                    elif current is None and self.server_starts > 3:
                        for k, m in todo:
                            self.save(
                                {
                                    "kernel": k,
                                    "version": self.a.version,
                                    "mode": m,
                                    "ok": False,
                                    "error": f"server would not start: {msg}",
                                }
                            )
                        todo = []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument(
        "--kernels", default="matmul,mla_decode", help="comma-separated (default matmul,mla_decode)"
    )
    ap.add_argument("--version", default="v3", help="kernel version (default v3)")
    ap.add_argument("--modes", default=",".join(MODES), help=f"comma-separated (default {','.join(MODES)})")
    ap.add_argument(
        "--params",
        default=None,
        help='JSON per kernel, e.g. \'{"matmul": {"M": 1024}}\' (default: the kernels\' defaults)',
    )
    ap.add_argument(
        "--server-cmd",
        default=None,
        help="server command line without --workspace (default: this "
        "Python -m kprof_mcp.server); leading NAME=value words set "
        "its environment",
    )
    ap.add_argument("--server-cwd", default=None, help="server working directory (default: the workspace)")
    ap.add_argument("--workspace", default=None, help="server workspace (default: a new temporary directory)")
    ap.add_argument("--wait-s", type=float, default=55, help="profile_kernel wait_s (max 55)")
    ap.add_argument("--timeout-s", type=float, default=900, help="profile_kernel timeout_s per profile")
    a = ap.parse_args(argv)
    r = Runner(a)
    t0 = time.perf_counter()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    origin = which_kprof(r.argv, r.env, r.cwd)
    r.log(f"server imports: {json.dumps(origin)}")
    anyio.run(r.run)
    summary = {
        "started_utc": started,
        "total_wall_s": round(time.perf_counter() - t0, 1),
        "server_cmd": shlex.join(r.argv),
        "server_env": r.env,
        "server_cwd": r.cwd,
        "workspace": str(r.ws),
        "server_imports": origin,
        "server_starts": r.server_starts,
        "client": {"python": platform.python_version(), "mcp": _version("mcp"), "host": platform.node()},
        "device_info": r.device_info,
        "runs": [
            {
                "kernel": x["kernel"],
                "version": x["version"],
                "mode": x["mode"],
                "ok": x.get("ok", False),
                "wall_s": x.get("wall_s"),
                "polls": x.get("polls"),
                "error": x.get("error"),
                "total_duration_us": (x.get("structured") or {}).get("total_duration_us"),
                "stages": [
                    {
                        "name": s["name"],
                        "duration_us": s["duration_us"],
                        "bottleneck": s.get("bottleneck"),
                        "tc_pct": s.get("tc_pct"),
                        "dram_pct": s.get("dram_pct"),
                        "occupancy_pct": s.get("occupancy_pct"),
                    }
                    for s in (x.get("structured") or {}).get("stages", [])
                ],
                "bottleneck": (x.get("structured") or {}).get("bottleneck"),
                "opportunities": [o["name"] for o in (x.get("structured") or {}).get("opportunities", [])],
            }
            for x in r.records
        ],
    }
    (r.out / "summary.json").write_text(json.dumps(summary, indent=1, default=str) + "\n")
    bad = [f"{x['kernel']}/{x['mode']}" for x in r.records if not x.get("ok")]
    r.log(
        f"done in {summary['total_wall_s']} s: {len(r.records) - len(bad)} ok, {len(bad)} failed {bad or ''}"
    )
    return 1 if bad or len(r.records) < len(r.items) else 0


def _version(dist: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # noqa: BLE001
        return None


if __name__ == "__main__":
    sys.exit(main())

"""The agent's loop, timed side by side in alternating rounds on one machine (issue 14).

The unit is a **fresh script**: ``python fresh.py`` imports torch and Triton, loads the same
kernel package (the same ``@triton.jit`` function), builds the inputs, launches the kernel,
checks it against the reference and runs ``triton.testing.do_bench`` — what a person does by
hand. Against it, through the real MCP server over stdio (``python -m kprof_mcp.server``):

* **first** — a new server: from spawning it to the first ``profile_kernel`` result in event mode
  (also from the end of the MCP handshake, the moment an agent can first call a tool);
* **same** — ``profile_kernel`` again with nothing changed (its warm worker reused);
* **edited** — the kernel's source edited (a line inside the ``@triton.jit`` function, so Triton
  compiles it anew), then ``profile_kernel``.

Targets (issue 40): same ≤ 0.2×, edited ≤ 0.6×, first ≤ 1.5× the fresh script. Each round runs a
fresh script, then a server's first/same/same/edited, then a fresh script again; medians are printed
with every sample, the medians each side measured (they must agree: a fast answer that measures
something else would be worthless), and where the profiles' time went: each phase of
``result.json``'s ``timings`` (issue 40), its median over the re-profiles ("same"), the first
profiles and the edited ones, and the stage's stopping reason and runs.

    python benchmarks/bench_agent_loop.py [--rounds 3] [--version v0] [--workspace DIR] [--small] [--json F]

``KPROF_*`` variables are passed to the server: ``KPROF_CLOCK_KEEP_S=0`` locks and resets the clock
around every profile (as before issue 40), ``KPROF_TIMING_STOP=ci`` turns on the opt-in early stop.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]

FRESH = r"""
import importlib.util, json, os, sys, time
if os.environ.get("KPROF_FORCE_CPU") == "1":
    os.environ["TRITON_INTERPRET"] = "1"
t0 = time.perf_counter()
import torch, triton, triton.testing
pkg_dir, version, params = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
spec = importlib.util.spec_from_file_location("loop_pkg", pkg_dir + "/__init__.py", submodule_search_locations=[pkg_dir])
mod = importlib.util.module_from_spec(spec); sys.modules["loop_pkg"] = mod; spec.loader.exec_module(mod)
pkg = mod.KERNEL
p = pkg.validate_params(params)
cuda = torch.cuda.is_available()
inputs = pkg.make_inputs(p, "cuda" if cuda else "cpu")
plan = pkg.version(version).build(inputs, p)
fn = plan.stages[0].fn
fn()
ref = pkg.reference(inputs, p)
torch.testing.assert_close(plan.output(), ref)
if cuda:
    ms = triton.testing.do_bench(fn, return_mode="median")
else:  # no GPU: the wall clock of a few runs stands in (the CPU smoke run of this benchmark)
    s = []
    for _ in range(5):
        a = time.perf_counter(); fn(); s.append(time.perf_counter() - a)
    ms = sorted(s)[2] * 1e3
print(json.dumps({"median_us": ms * 1e3, "inside_s": time.perf_counter() - t0}))
"""


def _pythonpath() -> str:
    return os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)


MARK = "    pid = tl.program_id(axis=0)\n"


def fresh(script: Path, pkg: Path, version: str, params: dict) -> tuple[float, float]:
    t0 = time.perf_counter()
    cp = subprocess.run(
        [sys.executable, str(script), str(pkg), version, json.dumps(params)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": _pythonpath()},
    )
    wall = time.perf_counter() - t0
    if cp.returncode != 0:
        raise SystemExit(f"fresh script failed: {cp.stderr[-3000:]}")
    return wall, json.loads(cp.stdout.strip().splitlines()[-1])["median_us"]


def edit(pkg: Path, n: int) -> None:
    impl = pkg / "impl.py"
    src = impl.read_text()
    lines = [ln for ln in src.splitlines(keepends=True) if "# kprof-bench edit" not in ln]
    src = "".join(lines)
    impl.write_text(src.replace(MARK, MARK + f"    # kprof-bench edit {n}: a new source, a new compile\n", 1))


async def server_round(
    ws: Path, pkg: Path, version: str, params: dict, n_edit: int, think: float = 0.0
) -> dict:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kprof_mcp", "--workspace", str(ws)],
        env={
            "PYTHONPATH": _pythonpath(),
            **{
                k: os.environ[k]
                for k in os.environ
                if k in ("PATH", "LD_LIBRARY_PATH", "HOME") or k.startswith("KPROF_")
            },
        },
    )
    args = {"kernel": str(pkg), "version": version, "params": params, "mode": "event"}
    out: dict = {}

    async def profile() -> tuple[float, dict]:
        t = time.perf_counter()
        r = await c.call_tool("profile_kernel", args)
        wall = time.perf_counter() - t
        if r.is_error or "profile_dir" not in (r.structured_content or {}):
            raise SystemExit(f"profile_kernel failed: {r.content[0].text[:3000]}")
        d = Path(r.structured_content["profile_dir"])
        res = json.loads((d / "result.json").read_text())
        return wall, {
            "median_us": res["stages"][0]["timing"]["median_ns"] / 1e3,
            "runs": len(res["stages"][0]["timing"]["samples_ns"]),
            "stop": res["stages"][0]["timing"]["stop_reason"],
            "launch_stop": (res["stages"][0].get("launch_timing") or {}).get("stop_reason"),
            "timings": {k: v for k, v in (res.get("timings") or {}).items() if k != "stopping"},
            "wall_s": wall,
        }

    t_spawn = time.perf_counter()
    async with Client(server) as c:
        t_ready = time.perf_counter()
        wall, info = await profile()
        out["first_from_spawn"] = time.perf_counter() - t_spawn
        out["first_from_handshake"] = wall
        out["handshake"] = t_ready - t_spawn
        out["first_info"] = info
        dev = await c.call_tool("device_info", {})
        out["workers"] = dev.structured_content["info"].get("warm_workers")
        out["same"], out["same_info"] = [], []
        for _ in range(2):
            await anyio.sleep(think)  # an agent reading the result (and editing) before it profiles again
            wall, info = await profile()
            out["same"].append(wall)
            out["same_info"].append(info)
        edit(pkg, n_edit)
        await anyio.sleep(think)
        wall, info = await profile()
        out["edited"], out["edited_info"] = wall, info
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--version", default="v0")
    ap.add_argument("--workspace", default=None)
    ap.add_argument("--small", action="store_true", help="n = 65536 (a CPU smoke run)")
    ap.add_argument("--json", type=Path, default=None, help="every round's detail, as JSON")
    ap.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="seconds between a result and the next profile (an agent reading it), not counted; 0: back to back",
    )
    a = ap.parse_args()
    ws = Path(a.workspace or tempfile.mkdtemp(prefix="kprof-loop-"))
    pkg = ws / "vadd_loop"
    shutil.rmtree(pkg, ignore_errors=True)
    shutil.copytree(ROOT / "kernels" / "vector_add", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    script = ws / "fresh.py"
    script.write_text(FRESH)
    params = {"n": 1 << 16} if a.small else {}
    fresh(script, pkg, a.version, params)  # untimed: Triton's disk cache warm for both sides
    rows = {"fresh": [], "first_from_spawn": [], "first_from_handshake": [], "same": [], "edited": []}
    medians = {"fresh": [], "kprof": []}
    detail = []
    for r in range(a.rounds):
        w, m = fresh(script, pkg, a.version, params)
        rows["fresh"].append(w)
        medians["fresh"].append(m)
        o = anyio.run(server_round, ws, pkg, a.version, params, r + 1, a.think)
        for k in ("first_from_spawn", "first_from_handshake", "edited"):
            rows[k].append(o[k])
        rows["same"] += o["same"]
        medians["kprof"] += [o["first_info"]["median_us"]] + [i["median_us"] for i in o["same_info"]]
        detail.append(o)
        w, m = fresh(script, pkg, a.version, params)
        rows["fresh"].append(w)
        medians["fresh"].append(m)
        print(
            f"round {r + 1}: fresh {rows['fresh'][-2]:.2f}/{rows['fresh'][-1]:.2f} s, first {o['first_from_spawn']:.2f} s "
            f"(handshake {o['handshake']:.2f} s), same {', '.join(f'{x:.2f}' for x in o['same'])} s, "
            f"edited {o['edited']:.2f} s",
            flush=True,
        )
    unit = statistics.median(rows["fresh"])
    targets = {"first_from_spawn": 1.5, "first_from_handshake": 1.5, "same": 0.2, "edited": 0.6}
    print()
    print(
        f"vector_add {a.version} {params or '(default n = 16777216, float32)'}; rounds={a.rounds}; "
        f"think {a.think:g} s between profiles (not counted); wall seconds"
    )
    print("| step | median (s) | samples (s) | ÷ fresh script | target | met |")
    print("|---|---|---|---|---|---|")
    print(f"| fresh script | {unit:.2f} | {', '.join(f'{x:.2f}' for x in rows['fresh'])} | 1.00 | | |")
    for k, tgt in targets.items():
        med = statistics.median(rows[k])
        print(
            f"| {k} | {med:.2f} | {', '.join(f'{x:.2f}' for x in rows[k])} | {med / unit:.2f} | ≤ {tgt} | "
            f"{'yes' if med / unit <= tgt else 'NO'} |"
        )
    print()
    fm, km = statistics.median(medians["fresh"]), statistics.median(medians["kprof"])
    print(
        f"kernel time: do_bench median {fm:.2f} us (CUDA events, launch included), kprof median {km:.2f} us "
        f"(CUPTI kernel time); kprof ÷ do_bench = {km / fm:.3f}"
    )
    print()
    phase_table(detail)
    for i, o in enumerate(detail):
        print(f"round {i + 1} warm workers after the first profile: {o['workers']}")
    if a.json:
        a.json.write_text(json.dumps({"rows": rows, "medians": medians, "detail": detail}, indent=1))


def phase_table(detail: list[dict]) -> None:
    """Where the profiles' time went (result.json's timings): each phase's median (ms) over the
    re-profiles, the first profiles and the edited ones; the wall time the client waited beside."""
    kinds = {
        "same": [i for o in detail for i in o["same_info"]],
        "first": [o["first_info"] for o in detail],
        "edited": [o["edited_info"] for o in detail],
    }
    names: list[str] = []
    for infos in kinds.values():
        for i in infos:
            names += [k for k in (i["timings"].get("phases") or {}) if k not in names]

    def med(infos: list[dict], get) -> str:
        xs = [x for x in (get(i) for i in infos) if x is not None]
        return f"{1e3 * statistics.median(xs):.0f}" if xs else ""

    print("Where the time went (result.json timings; median ms over the profiles of each kind):")
    print("| phase | same (re-profile) | first | edited |")
    print("|---|---|---|---|")
    for n in names:
        print(
            f"| {n} | "
            + " | ".join(med(v, lambda i, n=n: i["timings"].get("phases", {}).get(n)) for v in kinds.values())
            + " |"
        )
    for label, key in (("unaccounted", "unaccounted_s"), ("**wall (result)**", "wall_s")):
        print(
            f"| {label} | "
            + " | ".join(med(v, lambda i, k=key: i["timings"].get(k)) for v in kinds.values())
            + " |"
        )
    print("| wall (client) | " + " | ".join(med(v, lambda i: i["wall_s"]) for v in kinds.values()) + " |")
    for k, v in kinds.items():
        print(
            f"{k}: stops {[i['stop'] for i in v]}, runs {[i['runs'] for i in v]}, launch-timing stops "
            f"{[i['launch_stop'] for i in v]}, clock {[i['timings'].get('clock') for i in v]}"
        )
    print()


if __name__ == "__main__":
    main()

"""Timing truth: event mode's kernel time against Nsight Systems and triton's do_bench, for every
shipped kernel version at its default parameters (GPU only).

    python benchmarks/bench_timing_truth.py [--kernels matmul softmax ...] [--out DIR]

Three measurements of each stage, in this order (alternating processes, the same GPU):

1. **ours**: ``kprof profile <kernel> --version vX --mode event`` through the engine (a child
   process): the stage's median kernel time (CUPTI, L2 flushed before each run), its IQR, and the
   launch-inclusive CUDA-event median recorded beside it.
2. **do_bench**: ``triton.testing.do_bench(stage.fn, return_mode="median")`` in this process (CUDA
   events around each call, L2 flushed by do_bench itself).
3. **nsys**: a child process run under ``nsys profile -t cuda,nvtx`` that runs each stage
   ``--nsys-runs`` times, the L2 flushed before each run outside an NVTX range around the run;
   the SQLite export gives each run's kernel durations (kernels matched to runs through the
   launch call's correlation id), summed per run. This is the reference.

Prints, per stage: the three medians, ours ÷ nsys and do_bench ÷ nsys, our IQR/median, and
PASS/FAIL on the target (issue 13): within 1 % of Nsight Systems for stages of 20 µs or more, and
IQR/median ≤ 1 %. Writes ``timing_truth.json`` and ``timing_truth.md`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

RANGE = "truth"  # NVTX range per run: truth|<kernel>|<version>|<stage>
TARGET_RATIO = 0.01
TARGET_IQR = 0.01
MIN_US = 20.0


def versions(kernels: list[str] | None) -> list[tuple[str, str]]:
    from kprof_mcp.packages import available, load

    out = []
    for name, path in sorted(available().items()):
        if kernels and name not in kernels:
            continue
        pkg = load(path)
        out += [(name, v.name) for v in pkg.versions]
    return out


def build(kernel: str, version: str):
    import torch

    from kprof_mcp.packages import available, load

    pkg = load(available()[kernel])
    params = pkg.validate_params({})
    inputs = pkg.make_inputs(params, "cuda")
    plan = pkg.version(version).build(inputs, params)
    for st in plan.stages:  # compile / autotune outside any measurement
        st.fn()
    torch.cuda.synchronize()
    return plan


def nsys_child(pairs: list[tuple[str, str]], runs: int) -> None:
    """Run under nsys: each stage ``runs`` times, L2 flushed outside the per-run NVTX range."""
    import torch

    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
    for kernel, version in pairs:
        try:
            plan = build(kernel, version)
        except Exception as e:  # noqa: BLE001 — one broken version must not lose the others
            print(f"nsys child: {kernel} {version}: {type(e).__name__}: {e}", flush=True)
            continue
        for st in plan.stages:
            for _ in range(3):
                flush.zero_()
                st.fn()
            torch.cuda.synchronize()
            for _ in range(runs):
                flush.zero_()
                torch.cuda.nvtx.range_push(f"{RANGE}|{kernel}|{version}|{st.name}")
                st.fn()
                torch.cuda.nvtx.range_pop()
            torch.cuda.synchronize()
        del plan
        torch.cuda.empty_cache()


def nsys_medians(sqlite_path: Path) -> dict[str, dict]:
    """Per ``kernel|version|stage``: the median over runs of the summed kernel durations."""
    con = sqlite3.connect(sqlite_path)
    cols = {r[1] for r in con.execute("PRAGMA table_info(NVTX_EVENTS)")}
    text = "COALESCE(n.text, s.value)" if "textId" in cols else "n.text"
    join = "LEFT JOIN StringIds s ON n.textId = s.id" if "textId" in cols else ""
    ranges = con.execute(
        f"SELECT n.start, n.end, {text} FROM NVTX_EVENTS n {join} WHERE n.end IS NOT NULL"
    ).fetchall()
    ranges = sorted((s, e, t) for s, e, t in ranges if t and t.startswith(RANGE + "|"))
    rows = con.execute(
        "SELECT r.start, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON k.correlationId = r.correlationId"
    ).fetchall()
    con.close()
    import bisect

    starts = [r[0] for r in ranges]
    per_run: dict[int, float] = {}
    for api_start, dur in rows:
        i = bisect.bisect_right(starts, api_start) - 1
        if i >= 0 and api_start <= ranges[i][1]:
            per_run[i] = per_run.get(i, 0.0) + float(dur)
    out: dict[str, list[float]] = {}
    for i, total in per_run.items():
        out.setdefault(ranges[i][2][len(RANGE) + 1 :], []).append(total)

    def rel_iqr(v: list[float]) -> float:
        if len(v) < 4:
            return float("nan")
        q = statistics.quantiles(v, n=4)
        return (q[2] - q[0]) / statistics.median(v)

    return {
        k: {"median_ns": statistics.median(v), "runs": len(v), "rel_iqr": rel_iqr(v)} for k, v in out.items()
    }


KEEP = {("vector_add", "v0"), ("matmul", "v3"), ("tiny_chain", "v0"), ("two_streams", "v1")}  # profiles kept


def nsys_round(nsys: str, base: Path, pairs: list[tuple[str, str]], runs: int) -> dict[str, dict]:
    """One process under ``nsys profile`` running every pair (:func:`nsys_child`); medians per stage."""
    cmd = [
        nsys,
        "profile",
        "-t",
        "cuda,nvtx",
        "--cuda-graph-trace=node",
        "--sample=none",
        "--cpuctxsw=none",
        "-o",
        str(base),
        "--force-overwrite",
        "true",
        sys.executable,
        str(Path(__file__).resolve()),
        "--nsys-child",
        "--nsys-runs",
        str(runs),
        "--pairs-json",
        json.dumps(pairs),
    ]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        print(r.stdout[-1500:], r.stderr[-1500:], flush=True)
    rep = base.with_suffix(".nsys-rep")
    subprocess.run(
        [
            nsys,
            "export",
            "--type",
            "sqlite",
            "--force-overwrite",
            "true",
            "-o",
            str(base.with_suffix(".sqlite")),
            str(rep),
        ],
        capture_output=True,
        text=True,
    )
    return nsys_medians(base.with_suffix(".sqlite")) if base.with_suffix(".sqlite").exists() else {}


def merge_rounds(rounds: list[dict[str, dict]]) -> dict[str, dict]:
    """Per stage: the median over rounds of each figure, and the round medians themselves."""
    out: dict[str, dict] = {}
    for key in {k for r in rounds for k in r}:
        got = [r[key] for r in rounds if key in r]
        merged = dict(got[0])
        for f in ("median_ns", "rel_iqr", "launch_median_ns"):
            vals = [g[f] for g in got if g.get(f) is not None]
            if vals:
                merged[f] = statistics.median(vals)
        merged["round_medians_ns"] = [g["median_ns"] for g in got]
        out[key] = merged
    return out


def ours(
    pairs: list[tuple[str, str]],
    workspace: Path,
    keep_dir: Path | None = None,
    budget_ms: float | None = None,
) -> dict[str, dict]:
    import shutil

    from kprof_mcp.engine import Config, Engine, KprofError

    eng = Engine(Config(workspace=workspace, timeout_s=300, budget_ms=budget_ms))
    out = {}
    for kernel, version in pairs:
        try:
            o = eng.profile(kernel, version, {}, "event", timeout_s=300, clock_control=CLOCK_CONTROL)
        except KprofError as e:
            print(f"ours: {kernel} {version}: {e}", flush=True)
            continue
        if keep_dir is not None and (kernel, version) in KEEP:
            shutil.copytree(o.profile_dir, keep_dir / f"{kernel}_{version}", dirs_exist_ok=True)
        for s in o.result.stages:
            out[f"{kernel}|{version}|{s.name}"] = {
                "median_ns": s.timing.median_ns,
                "rel_iqr": s.timing.rel_iqr,
                "runs": s.timing.runs,
                "method": s.timing.method,
                "sm_clock_mhz": s.timing.sm_clock_mhz,
                "launch_median_ns": s.launch_timing.median_ns if s.launch_timing else None,
                "kernels": [k.model_dump() for k in s.kernel_times],
            }
    return out


def do_bench_all(pairs: list[tuple[str, str]]) -> dict[str, dict]:
    import torch
    from triton.testing import do_bench

    out = {}
    for kernel, version in pairs:
        try:
            plan = build(kernel, version)
        except Exception as e:  # noqa: BLE001
            print(f"do_bench: {kernel} {version}: {type(e).__name__}: {e}", flush=True)
            continue
        for st in plan.stages:
            ms = do_bench(st.fn, warmup=25, rep=200, return_mode="median")
            out[f"{kernel}|{version}|{st.name}"] = {"median_ns": ms * 1e6}
        del plan
        torch.cuda.empty_cache()
    return out


def _cupti_runs(fn, pre, runs: int) -> list[float]:
    """Per-run kernel time (ns) of ``runs`` runs of ``fn``, each after ``pre()`` (outside the run's range)."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    from kprof_mcp.analysis.timeline import ITER_RANGE, kernels_per_iteration
    from kprof_mcp.parsers import kineto

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            pre()
            with record_function(ITER_RANGE):
                fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        prof.export_chrome_trace(f"{d}/t.json")
        sums, _, _ = kernels_per_iteration(kineto.load_trace(Path(f"{d}/t.json")))
    return sums[2:]  # the first runs of a session carry CUPTI's start-up


def _row(v: list[float]) -> dict:
    q = statistics.quantiles(v, n=4)
    return {
        "runs": len(v),
        "median_us": statistics.median(v) / 1e3,
        "iqr_pct": 100 * (q[2] - q[0]) / statistics.median(v),
    }


def flush_study(pairs: list[tuple[str, str]], runs: int = 60, rounds: int = 4) -> list[dict]:
    """How the L2 flush before each run moves the kernel time and its spread: CUPTI kernel
    durations per run after zeroing a 256 MiB buffer (writes: dirty lines left in L2, as
    do_bench and event mode), after reading it (a sum: clean lines) and with no flush,
    interleaved in ``rounds`` rounds of ``runs`` runs."""
    import torch

    buf = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
    treatments = {"write (zero_)": lambda: buf.zero_(), "read (sum)": lambda: buf.sum(), "none": lambda: None}
    out = []
    for kernel, version in pairs:
        plan = build(kernel, version)
        fn = plan.stages[0].fn
        got: dict[str, list[float]] = {t: [] for t in treatments}
        for _ in range(rounds):
            for name, pre in treatments.items():
                got[name] += _cupti_runs(fn, pre, runs)
        for name, v in got.items():
            out.append({"kernel": kernel, "version": version, "flush": name, **_row(v)})
        del plan
    return out


def placement_study(
    pairs: list[tuple[str, str]], pads_mib: tuple[int, ...] = (0, 1, 3, 7, 17, 33, 65, 129), runs: int = 80
) -> list[dict]:
    """Does a kernel's speed depend on where its buffers land? In one process, for each pad:
    allocate ``pad`` MiB (kept), then fresh inputs (kept too, so each set gets new memory), and
    time the stage with CUPTI (write flush, as event mode)."""
    import torch

    buf = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
    keep = []
    out = []
    for kernel, version in pairs:
        for pad in pads_mib:
            keep.append(torch.empty(pad * 1024 * 1024 + 4096, dtype=torch.uint8, device="cuda"))
            plan = build(kernel, version)
            keep.append(plan)
            v = _cupti_runs(plan.stages[0].fn, lambda: buf.zero_(), runs)
            out.append({"kernel": kernel, "version": version, "pad_mib": pad, **_row(v)})
            print(out[-1], flush=True)
        keep.clear()
        torch.cuda.empty_cache()
    return out


CLOCK_CONTROL = (
    "base"  # event mode's own clock protocol; --lock-mhz holds one lock over both processes instead
)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", nargs="*", default=None)
    ap.add_argument(
        "--lock-mhz",
        type=int,
        default=None,
        help="lock the SM clock at this for the whole benchmark (both processes), reset after; event "
        "mode's own lock is then off (clock_control='none') so it does not reset it between runs",
    )
    ap.add_argument("--only", nargs="*", default=None, help="kernel:version pairs (instead of every version)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "evidence" / "timing-truth"))
    ap.add_argument("--nsys-runs", type=int, default=50)
    ap.add_argument(
        "--rounds", type=int, default=2, help="alternating rounds (ours, then nsys), fresh processes"
    )
    ap.add_argument(
        "--budget-ms", type=float, default=None, help="event mode's timing budget per stage and timer"
    )
    ap.add_argument("--nsys-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--flush-study", action="store_true", help="only the L2-flush study (see flush_study)")
    ap.add_argument(
        "--placement-study", action="store_true", help="only the placement study (see placement_study)"
    )
    ap.add_argument("--pairs-json", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.lock_mhz and not a.nsys_child:
        import atexit
        import subprocess

        global CLOCK_CONTROL
        CLOCK_CONTROL = "none"
        subprocess.run(["nvidia-smi", "-lgc", f"{a.lock_mhz},{a.lock_mhz}"], check=True, capture_output=True)
        atexit.register(lambda: subprocess.run(["nvidia-smi", "-rgc"], capture_output=True))
    if a.nsys_child:
        nsys_child([tuple(p) for p in json.loads(a.pairs_json)], a.nsys_runs)
        return 0
    from kprof_mcp.tools.nsys import candidates

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    pairs = versions(a.kernels)
    if a.only:
        pairs = [p for p in pairs if f"{p[0]}:{p[1]}" in a.only]
    t0 = time.time()
    if a.flush_study:
        rows = flush_study(pairs)
        text = "\n".join(
            [
                "| Kernel | Version | Flush before each run | Runs | Median (µs) | IQR/median % |",
                "|---|---|---|---|---|---|",
            ]
            + [
                f"| {r['kernel']} | {r['version']} | {r['flush']} | {r['runs']} | {r['median_us']:.2f} | "
                f"{r['iqr_pct']:.2f} |"
                for r in rows
            ]
        )
        print(text)
        (out / "flush_study.md").write_text(text + "\n")
        return 0
    if a.placement_study:
        rows = placement_study(pairs)
        text = "\n".join(
            [
                "| Kernel | Version | Pad before the inputs (MiB) | Runs | Median (µs) | IQR/median % |",
                "|---|---|---|---|---|---|",
            ]
            + [
                f"| {r['kernel']} | {r['version']} | {r['pad_mib']} | {r['runs']} | {r['median_us']:.2f} | "
                f"{r['iqr_pct']:.2f} |"
                for r in rows
            ]
        )
        print(text)
        (out / "placement_study.md").write_text(text + "\n")
        return 0
    ws = Path(tempfile.mkdtemp(prefix="kprof-truth-"))
    print(f"{len(pairs)} kernel versions, {a.rounds} rounds: {pairs}", flush=True)
    nsys = os.environ.get("KPROF_NSYS") or next((str(p) for p in candidates()), None)
    rounds_ours: list[dict] = []
    rounds_nsys: list[dict] = []
    for rnd in range(a.rounds):  # fresh processes each round: allocation and placement change with them
        rounds_ours.append(ours(pairs, ws, out / "profiles" if rnd == 0 else None, a.budget_ms))
        print(f"round {rnd}: ours done ({time.time() - t0:.0f} s)", flush=True)
        if nsys:
            rounds_nsys.append(nsys_round(nsys, ws / f"truth{rnd}", pairs, a.nsys_runs))
        print(f"round {rnd}: nsys done ({time.time() - t0:.0f} s)", flush=True)
    res_db = do_bench_all(pairs)
    print(f"do_bench done ({time.time() - t0:.0f} s)", flush=True)
    res_ours = merge_rounds(rounds_ours)
    res_nsys = merge_rounds(rounds_nsys)
    lines = [
        "| Kernel | Version | Stage | nsys (µs) | ours (µs) | ours ÷ nsys | rounds: ours ÷ nsys | IQR/median (ours) | "
        "IQR/median (nsys) | events (µs) | events ÷ nsys | do_bench (µs) | do_bench ÷ nsys | Target |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    judged = []
    for key in sorted(set(res_ours) | set(res_nsys)):
        k, v, s = key.split("|")
        o, n, d = res_ours.get(key), res_nsys.get(key), res_db.get(key)
        ref = n["median_ns"] if n else None

        def r(x):
            return f"{x / ref:.4f}" if x and ref else "n/a"

        def us(x):
            return f"{x / 1e3:.2f}" if x else "n/a"

        verdict = "n/a"
        if o and ref:
            ok_ratio = abs(o["median_ns"] / ref - 1) <= TARGET_RATIO
            ok_iqr = o["rel_iqr"] <= TARGET_IQR
            if ref >= MIN_US * 1e3:
                verdict = (
                    "PASS" if ok_ratio and ok_iqr else ("FAIL (ratio)" if not ok_ratio else "FAIL (IQR)")
                )
                judged.append(verdict == "PASS")
            else:
                verdict = f"< {MIN_US:.0f} µs (not judged)"
        per_round = "n/a"
        if o and n:
            rr = [x / y for x, y in zip(o["round_medians_ns"], n["round_medians_ns"])]
            per_round = f"{min(rr):.4f}–{max(rr):.4f}" if len(rr) > 1 else f"{rr[0]:.4f}"
        lines.append(
            f"| {k} | {v} | {s} | {us(ref)} | {us(o and o['median_ns'])} | {r(o and o['median_ns'])} | "
            f"{per_round} | "
            f"{(100 * o['rel_iqr']) if o else float('nan'):.2f}% | {(100 * n['rel_iqr']) if n else float('nan'):.2f}% | {us(o and o['launch_median_ns'])} | "
            f"{r(o and o['launch_median_ns'])} | {us(d and d['median_ns'])} | {r(d and d['median_ns'])} | "
            f"{verdict} |"
        )
    summary = f"Stages ≥ {MIN_US:.0f} µs within 1 % of Nsight Systems with IQR/median ≤ 1 %: {sum(judged)} of {len(judged)}"
    text = "\n".join(lines + ["", summary])
    print(text)
    (out / "timing_truth.md").write_text(text + "\n")
    (out / "timing_truth.json").write_text(
        json.dumps(
            {
                "ours": res_ours,
                "do_bench": res_db,
                "nsys": res_nsys,
                "rounds_ours": rounds_ours,
                "rounds_nsys": rounds_nsys,
                "pairs": pairs,
                "nsys_runs": a.nsys_runs,
                "wall_s": round(time.time() - t0, 1),
            },
            indent=2,
        )
    )
    return 0 if judged and all(judged) else 1


if __name__ == "__main__":
    sys.exit(main())

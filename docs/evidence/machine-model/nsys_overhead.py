"""What Nsight Systems adds to the host's time per traced CUDA call (issue 36: a replay of a recorded
timeline estimates the *unprofiled* program, so the host time the profiler adds must come out first).

Three loops, each inside its own NVTX range, timed with perf_counter (best of 5 rounds):

* ``launch``: ``x.add_(1)`` on a one-element tensor — one kernel launch per iteration (and the small
  runtime calls PyTorch makes around it, e.g. cudaGetDevice);
* ``sync``: ``torch.cuda.synchronize()`` on an idle GPU — one cudaDeviceSynchronize per iteration;
* ``query``: ``torch.cuda.current_stream().query()`` — one cudaStreamQuery per iteration;
* ``getdevice``: cudaGetDevice through ctypes on the libcudart PyTorch loaded — the cheapest call;
* ``python``: arithmetic with no CUDA call — does tracing slow plain Python?

Run once plainly and once under ``nsys profile`` with kprof's own flags (``tools.nsys.profile_prefix``,
with and without ``--python-backtrace``); the traced run's SQLite gives the CUDA API calls per iteration
of each loop. Then per loop: overhead per iteration = traced − plain, per call = that ÷ calls per
iteration. Usage on the GPU machine (from the repository root, .whl and .nsyslibs carried):

    python docs/evidence/machine-model/nsys_overhead.py all   # writes $OUT/nsys_overhead.json
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

LOOPS = {"launch": 20000, "sync": 20000, "query": 20000, "getdevice": 50000, "python": 200000}


def run_loops() -> dict:
    import torch

    x = torch.zeros(1, device="cuda")
    torch.cuda.synchronize()

    def launch(n):
        for _ in range(n):
            x.add_(1)

    def sync(n):
        for _ in range(n):
            torch.cuda.synchronize()

    st = torch.cuda.current_stream()

    def query(n):
        for _ in range(n):
            st.query()

    import ctypes

    lib = next(
        ln.split()[-1]
        for ln in open("/proc/self/maps")
        if "libcudart.so" in ln and ln.split()[-1].startswith("/")
    )
    cudart = ctypes.CDLL(lib)
    dev = ctypes.c_int()

    def getdevice(n):
        for _ in range(n):
            cudart.cudaGetDevice(ctypes.byref(dev))

    def python(n):
        s = 0
        for i in range(n):
            s += i * i
        return s

    out = {}
    for name, fn in (
        ("launch", launch),
        ("sync", sync),
        ("query", query),
        ("getdevice", getdevice),
        ("python", python),
    ):
        n = LOOPS[name]
        fn(1000)
        torch.cuda.synchronize()
        best = float("inf")
        for _ in range(5):
            torch.cuda.nvtx.range_push(f"loop:{name}")
            t0 = time.perf_counter_ns()
            fn(n)
            torch.cuda.synchronize()
            t = (time.perf_counter_ns() - t0) / n
            torch.cuda.nvtx.range_pop()
            best = min(best, t)
        out[name] = best
    return out


def calls_per_iteration(sqlite: Path) -> dict:
    """CUDA API calls inside each loop's ranges (5 rounds) per iteration, by API name."""
    from kprof_mcp.parsers import nsys

    tr = nsys.load_sqlite(sqlite)
    out = {}
    for name, n in LOOPS.items():
        r = tr.ranges[tr.ranges["name"] == f"loop:{name}"]
        total, by = 0, {}
        for lo, hi in zip(r["start"], r["end"]):
            a = tr.api[(tr.api["start"] >= lo) & (tr.api["start"] <= hi)]
            total += len(a)
            for k, v in a["name"].value_counts().items():
                by[k] = by.get(k, 0) + int(v)
        rounds = max(1, len(r))
        out[name] = {
            "calls_per_iter": total / (rounds * n),
            "by_api": {k: v / (rounds * n) for k, v in by.items()},
        }
    return out


def main() -> int:
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    if what == "loops":
        print(json.dumps(run_loops()))
        return 0
    from kprof_mcp.tools import nsys as tools_nsys

    out_dir = Path(os.environ.get("OUT", "."))
    chk = tools_nsys.check_nsys()
    exe = Path(chk.path) if getattr(chk, "path", None) else tools_nsys.candidates()[0]
    me = [sys.executable, __file__, "loops"]
    plain = json.loads(
        subprocess.run(me, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
    )
    result = {"plain_ns_per_iter": plain, "nsys": str(exe), "nsys_version": chk.version, "traced": {}}
    for label, bt in (("default", False), ("python_backtrace", True)):
        base = Path("/tmp") / f"nsys_overhead_{label}"
        cp = subprocess.run(
            tools_nsys.profile_prefix(exe, base, python_backtrace=bt) + me, capture_output=True, text=True
        )
        traced = json.loads([ln for ln in cp.stdout.splitlines() if ln.startswith("{")][-1])
        db = tools_nsys.export_sqlite(exe, base.with_suffix(".nsys-rep"), base.with_suffix(".sqlite"))
        calls = calls_per_iteration(db)
        per = {}
        for name in LOOPS:
            extra = traced[name] - plain[name]
            c = calls[name]["calls_per_iter"]
            per[name] = {
                "plain_ns": plain[name],
                "traced_ns": traced[name],
                "extra_ns_per_iter": extra,
                "calls_per_iter": c,
                "extra_ns_per_call": extra / c if c else None,
                "by_api": calls[name]["by_api"],
            }
        result["traced"][label] = per
    (out_dir / "nsys_overhead.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

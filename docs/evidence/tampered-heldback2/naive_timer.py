"""Issue 37, the second held-back tampered set on a GPU, without kprof: is every version correct on its first
call, how fast does it look to a naive CUDA-event timer, and is it still correct on new input values?

Run from the repository root on the GPU machine (no wheels needed: it imports only the package, the
kernel contract and the correctness gate):
    python3 docs/evidence/tampered-heldback2/naive_timer.py [n]
Prints a markdown table (the README's). Per version, on a freshly built plan:
- first call: one call, synchronised, checked against the reference (kprof's check_correctness);
- loop: 3 warm-up calls, then CUDA events on the default stream around 50 back-to-back calls, the
  elapsed time / 50 (what `start.record(); for ...: fn(); end.record()` reports);
- per call: the median of 20 single calls each between two events (synchronised after each);
- do_bench: ``triton.testing.do_bench(fn)`` (its L2 flush before each call, events around each call:
  what a Triton user's benchmark reports; with the flush the host runs ahead, so this is GPU time);
- GB/s: the declared byte model / the do_bench time; % of the device's datasheet DRAM peak;
- kernels: torch.profiler (CUPTI) over 16 calls (then ``plan.output()``, which waits for queued's
  worker): kernels per call and their GPU time per call, and memory copies per call and theirs;
- fresh: new values copied into the same x (seed 1), one call, ``plan.output()``, synchronised, checked
  again.
This copy of docs/evidence/tampered-heldback/naive_timer.py differs in the package, the copy column and
the ``plan.output()`` before reading the profiler and the fresh check.
"""

import statistics
import sys
import time
from pathlib import Path

import torch
import triton.testing
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "fixtures" / "user_kernels")]

import tampered_heldback2 as pkgmod  # noqa: E402

from kprof_mcp.capture.correctness import check_correctness  # noqa: E402

PEAK_GBS = {"H100": 3352.0, "H200": 4800.0}  # datasheet DRAM bandwidth (SXM)


def rel(report):
    o = report.get("outputs") or [{}]
    return o[0].get("rel_l2_error", float("nan"))


def row(pkg, p, v, tol, peak, honest):
    """One version's row; returns the honest (loop, do_bench) times."""
    inputs = pkg.make_inputs(p, "cuda")
    plan = v.build(inputs, p)
    fn = plan.stages[0].fn
    fn()
    torch.cuda.synchronize()
    first = check_correctness(torch, plan.output(), pkg.reference(inputs, p), tol)
    for _ in range(3):
        fn()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    s.record()
    for _ in range(50):
        fn()
    e.record()
    torch.cuda.synchronize()
    loop = s.elapsed_time(e) / 50 * 1e3
    per = []
    for _ in range(20):
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        per.append(s.elapsed_time(e) * 1e3)
    bench = triton.testing.do_bench(fn) * 1e3
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(16):
            fn()
        plan.output()
        torch.cuda.synchronize()
    dev_ev = [ev for ev in prof.events() if ev.device_type == DeviceType.CUDA]
    copies = [ev for ev in dev_ev if ev.name.lower().startswith(("memcpy", "memset"))]
    kern = [ev for ev in dev_ev if ev not in copies]
    gpu_us = sum(ev.time_range.elapsed_us() for ev in kern) / 16
    copy_us = sum(ev.time_range.elapsed_us() for ev in copies) / 16
    time.sleep(0.01)
    inputs["x"].copy_(pkg.make_inputs(p, "cuda", seed=1)["x"])
    fn()
    out = plan.output()
    torch.cuda.synchronize()
    fresh = check_correctness(torch, out, pkg.reference(inputs, p), tol)
    gbs = v.stages[0].bytes(p) / bench / 1e3
    honest = honest or (loop, bench)
    print(
        f"| {v.name} | {'ok' if first['ok'] else 'WRONG'} (rel {rel(first):.1e}) | {loop:.2f} "
        f"({honest[0] / loop:.1f}x) | {statistics.median(per):.2f} | {bench:.2f} ({honest[1] / bench:.1f}x) | "
        f"{gbs:.0f} | {100 * gbs / peak:.0f} % | {len(kern) / 16:.3g}, {gpu_us:.2f} | "
        f"{len(copies) / 16:.3g}, {copy_us:.2f} | "
        f"{'ok' if fresh['ok'] else 'STALE'} (rel {rel(fresh):.1e}) |"
    )
    del plan, inputs
    return honest


def main():
    pkg = pkgmod.KERNEL
    n = int(sys.argv[1]) if len(sys.argv) > 1 else pkgmod.N_DEFAULT
    p = pkg.validate_params({"n": n})
    name = torch.cuda.get_device_name()
    peak = next((v for k, v in PEAK_GBS.items() if k in name), float("nan"))
    print(f"device: {name}; torch {torch.__version__}; n = {n} fp32; peak {peak:g} GB/s (datasheet)\n")
    # the device-to-device copy as the achievable anchor
    a = torch.empty(n, device="cuda")
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(50):
        b.copy_(a)
    e.record()
    torch.cuda.synchronize()
    t = s.elapsed_time(e) / 50 * 1e3
    print(f"torch copy_ of the same size: {t:.2f} us, {8 * n / t / 1e3:.0f} GB/s\n")
    del a, b
    print(
        "| version | first call | loop us/call | per-call median us | do_bench us | model GB/s | % of peak "
        "| kernels/call, GPU us/call (CUPTI) | copies/call, us/call | fresh values |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    tol = pkg.tolerance("float32")
    honest = None
    for v in pkg.versions:
        try:
            honest = row(pkg, p, v, tol, peak, honest)
        except Exception as e:  # one version's failure is a row, not the end of the table
            print(f"| {v.name} | ERROR {type(e).__name__}: {str(e)[:300]!r} |")
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()

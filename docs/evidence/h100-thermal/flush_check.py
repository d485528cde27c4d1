"""Where does matmul v3's call-to-call spread come from? SM clock locked at 1305 MHz, one process.

Ten rounds, each timing matmul v3 and a cuBLAS GEMM (4096^3 bf16) four ways, interleaved:
  fixed-flush  kprof's event Timer (CUPTI, L2 flushed), one flush buffer for all rounds
  fresh-flush  the same Timer, a new flush buffer each round (what each event profile does)
  no-flush     CUDA events around 200 back-to-back runs, no flush, median of 5 blocks of 40
  per-batch    within the fresh-flush call, the spread of its batch medians
"""
import json, statistics, subprocess, sys
sys.path.insert(0, ".")
import torch
from kprof_mcp.models import ProfileRequest
from kprof_mcp.modes.event import Timer, L2_FLUSH_BYTES
from kprof_mcp.packages import available, load

subprocess.run(["nvidia-smi", "-lgc", "1305,1305"], capture_output=True)
res = {}
try:
    req = ProfileRequest(kernel="matmul", kernel_source="x", version="v3", params={}, mode="event",
                         out_root="/tmp", budget_ms=300, warmup_ms=50)
    pkg = load(available([])["matmul"])
    p = pkg.validate_params({})
    inputs = pkg.make_inputs(p, "cuda")
    fns = {"matmul v3": pkg.version("v3").build(inputs, p).stages[0].fn}
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    fns["cublas"] = lambda: torch.matmul(a, b)
    fixed = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    keep = []

    def noflush(fn):
        meds = []
        for _ in range(5):
            ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
            fn(); torch.cuda.synchronize()
            ev[0].record()
            for _ in range(40):
                fn()
            ev[1].record(); torch.cuda.synchronize()
            meds.append(ev[0].elapsed_time(ev[1]) * 1e3 / 40)
        return statistics.median(meds)

    for fn in fns.values():
        fn()
    for r in range(10):
        for name, fn in fns.items():
            t1 = Timer(torch, True, req, "cupti", flush_buf=fixed).time(fn).median_ns / 1e3
            fresh = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
            keep.append(fresh)  # keep it alive: the next round's lands elsewhere
            tim = Timer(torch, True, req, "cupti", flush_buf=fresh)
            timing = tim.time(fn)
            t2 = timing.median_ns / 1e3
            t3 = noflush(fn)
            row = res.setdefault(name, {"fixed-flush": [], "fresh-flush": [], "no-flush": [], "fresh ptr": []})
            row["fixed-flush"].append(round(t1, 2)); row["fresh-flush"].append(round(t2, 2))
            row["no-flush"].append(round(t3, 2)); row["fresh ptr"].append(hex(fresh.data_ptr()))
            print(name, r, f"fixed {t1:.2f} fresh {t2:.2f} noflush {t3:.2f} ptr {hex(fresh.data_ptr())}", flush=True)
finally:
    subprocess.run(["nvidia-smi", "-rgc"], capture_output=True)
rng = lambda xs: 100 * (max(xs) - min(xs)) / statistics.median(xs)
for name, row in res.items():
    for k in ("fixed-flush", "fresh-flush", "no-flush"):
        xs = row[k]
        print(f"{name:10s} {k:12s} median {statistics.median(xs):8.2f} us  range {rng(xs):5.2f} %  ({min(xs):.2f}-{max(xs):.2f})")
json.dump(res, open(sys.argv[1], "w"), indent=1)

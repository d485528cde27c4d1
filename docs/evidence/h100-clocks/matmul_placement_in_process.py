"""matmul v3 (4096^3 bf16) kernel time by CUPTI (kprof's event Timer), SM clock locked at 1305 MHz,
in one process: the same inputs timed 8 times, then 8 fresh allocations (the old ones kept alive, so
each new set lands elsewhere)."""
import statistics, subprocess, sys
sys.path.insert(0, ".")
import torch
from kprof_mcp.models import ProfileRequest
from kprof_mcp.modes.event import Timer
from kprof_mcp.packages import available, load
subprocess.run(["nvidia-smi", "-lgc", "1305,1305"], capture_output=True)
try:
    pkg = load(available([])["matmul"])
    p = pkg.validate_params({})
    req = ProfileRequest(kernel="matmul", kernel_source="x", version="v3", params={}, mode="event", out_root="/tmp",
                         budget_ms=300, warmup_ms=50)
    def med(plan):
        return Timer(torch, True, req, "cupti").time(plan.stages[0].fn).median_ns / 1e3
    inputs = pkg.make_inputs(p, "cuda")
    plan = pkg.version("v3").build(inputs, p)
    same = [med(plan) for _ in range(8)]
    keep, fresh, ptrs = [], [], []
    for _ in range(8):
        keep.append(inputs)
        inputs = pkg.make_inputs(p, "cuda")
        ptrs.append(hex(inputs[next(iter(inputs))].data_ptr()))
        plan = pkg.version("v3").build(inputs, p)
        fresh.append(med(plan))
finally:
    subprocess.run(["nvidia-smi", "-rgc"], capture_output=True)
r = lambda xs: 100 * (max(xs) - min(xs)) / statistics.median(xs)
print("same inputs :", " ".join(f"{x:.1f}" for x in same), f"-> range {r(same):.2f} %")
print("fresh inputs:", " ".join(f"{x:.1f}" for x in fresh), f"-> range {r(fresh):.2f} %")
print("first operand addresses:", ptrs)

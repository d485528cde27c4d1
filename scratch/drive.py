"""Exploration driver: run a kernel package stage under NVTX ranges kprof_<stage>."""
import sys, time, torch
from pathlib import Path
from kprof_mcp import registry
name, version = sys.argv[1], sys.argv[2]
extra = dict(a.split("=") for a in sys.argv[3:])
pkg = registry.load(Path("kernels") / name)
params = pkg.validate_params({k: (v if k == "dtype" else int(v)) for k, v in extra.items()})
inputs = pkg.make_inputs(params, "cuda")
ver = pkg.version(version)
plan = ver.build(inputs, params)
t0 = time.time()
rets = [s.fn() for s in plan.stages]
torch.cuda.synchronize()
print("first run", time.time() - t0, [getattr(r, "metadata", None) and r.metadata.name for r in rets], flush=True)
for s in plan.stages:
    torch.cuda.nvtx.range_push(f"kprof_{s.name}")
    s.fn()
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print("done", flush=True)

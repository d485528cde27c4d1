"""Launches matmul v3 and a cuBLAS GEMM (4096^3 bf16) N times each, alternating; for ncu_cycles.sh."""
import sys
sys.path.insert(0, ".")
import torch
from kprof_mcp.packages import available, load
n = int(sys.argv[1])
pkg = load(available([])["matmul"])
p = pkg.validate_params({})
fn = pkg.version("v3").build(pkg.make_inputs(p, "cuda"), p).stages[0].fn
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    fn(); torch.matmul(a, b)
torch.cuda.synchronize()
for _ in range(n):
    fn(); torch.matmul(a, b)
torch.cuda.synchronize()

"""The second look before recording (not a test): calib_tf32x3 with W [N, K] and calib_cache_capacity at
several (BLOCK_T, num_warps), each version against its reference and timed (do_bench). Its log:
quick_check_probe.log (H100, 2026-11-26 ~09:57 UTC).

    PYTHONPATH=. python3 tests/calibration/recorded-heldout6/quick_check_probe.py
"""

import sys

import torch
import triton

sys.path.insert(0, "tests/calibration/kernels")
import calib_cache_capacity  # noqa: E402
import calib_tf32x3  # noqa: E402
from calib_cache_capacity import impl as cimpl  # noqa: E402

print(torch.cuda.get_device_name(), flush=True)
CASES = (
    ("tf32x3", calib_tf32x3, [None]),
    ("cache", calib_cache_capacity, [(64, 4), (128, 4), (64, 8), (128, 8), (32, 4)]),
)
for name, mod, cfgs in CASES:
    pkg = mod.KERNEL
    p = pkg.validate_params({})
    inputs = pkg.make_inputs(p, "cuda")
    ref = pkg.reference(inputs, p).double()
    (st,) = pkg.version("v0").stages
    for cfg in cfgs:
        if cfg:
            cimpl.BLOCK_T, cimpl.WARPS = cfg
        ms = {}
        for v in ("v0", "v1"):
            plan = pkg.version(v).build(inputs, p)
            k = plan.stages[0].fn()
            torch.cuda.synchronize()
            err = float((plan.output().double() - ref).norm() / ref.norm())
            ms[v] = triton.testing.do_bench(plan.stages[0].fn, warmup=25, rep=100)
            s = ms[v] * 1e-3
            streamed = (pkg.memory_bytes(p) if v == "v0" else st.bytes(p)) if name == "cache" else st.bytes(p)
            print(
                name,
                cfg,
                v,
                f"err {err:.1e} {ms[v] * 1e3:.0f} us {st.flops(p) / s / 1e12:.1f} TFLOP/s model, "
                f"{streamed / s / 1e9:.0f} GB/s streamed, regs {k.n_regs} smem {k.metadata.shared}",
                flush=True,
            )
        print(name, cfg, f"{ms['v0'] / ms['v1']:.2f}x", flush=True)
    del inputs, ref
    torch.cuda.empty_cache()

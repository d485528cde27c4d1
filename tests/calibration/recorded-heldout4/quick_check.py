"""The quick check made on the GPU before recording (not a test): each kernel version against its
reference at the default sizes and timed (triton.testing.do_bench, L2 flushed, median), with the
compiled kernel's registers, shared memory and the instructions that show the planted problem; both
variants of each command script compared (outputs within tolerance), timed without a profiler, and
the bad variant's problem shown (the cuBLAS kernel each LM-head variant runs; the kernels per
optimizer step).

    PYTHONPATH=. python3 tests/calibration/recorded-heldout4/quick_check.py
"""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import torch
import triton

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "calibration" / "kernels"))
sys.path.insert(0, str(ROOT / "tests" / "calibration" / "commands"))
from kprof_mcp.kernel.api import Params  # noqa: E402

PATTERNS = r"wgmma\.mma_async\.sync\.aligned\.\w+\.f32\.\w+|cp\.async\.c[ag]|ld\.global\.v4|ld\.global\.b16"
t0 = time.time()
print(torch.cuda.get_device_name(), torch.__version__, triton.__version__, flush=True)
for name in ("calib_square_roundtrip", "calib_upcast_dot", "calib_no_pipelining", "calib_tile_order"):
    pkg = __import__(name).KERNEL
    p = pkg.validate_params({})
    assert isinstance(p, Params)
    inputs = pkg.make_inputs(p, "cuda")
    ref = pkg.reference(inputs, p).double()
    ms = {}
    for v in ("v0", "v1"):
        plan = pkg.version(v).build(inputs, p)
        fn = plan.stages[0].fn
        k = fn()
        torch.cuda.synchronize()
        out = plan.output().double()
        err = float((out - ref).norm() / ref.norm())
        ms[v] = triton.testing.do_bench(fn, warmup=25, rep=150)
        ptx = k.asm.get("ptx", "")
        insts = {}
        for m in re.findall(PATTERNS, ptx):
            insts[m] = insts.get(m, 0) + 1
        print(
            f"{name} {v}: err {err:.2e} (tol {pkg.tolerance(p['dtype'])}) {ms[v] * 1e3:.1f} us; "
            f"regs {k.n_regs} spills {k.n_spills} smem {k.metadata.shared} B; ptx {insts}",
            flush=True,
        )
    print(f"{name}: v0/v1 = {ms['v0'] / ms['v1']:.2f}x", flush=True)
    del inputs, ref, plan, out
    torch.cuda.empty_cache()

# Command scripts: the same outputs (within tolerance), the bad variant's problem, then wall time per step
# as record.py measures it.
import lm_head_vocab  # noqa: E402
import optimizer_loop  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

for mod in (lm_head_vocab, optimizer_loop):
    outs = []
    for variant in ("bad", "good"):
        loop, output = mod.make(variant, True)
        loop(2)
        torch.cuda.synchronize()
        try:
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                loop(1)
                torch.cuda.synchronize()
            kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
            names = sorted({e.name for e in kernels})
            print(
                f"{mod.__name__} {variant}: {len(kernels)} kernels per step; e.g. {[n[:90] for n in names[:3]]}"
            )
        except Exception as e:  # the check goes on without the kernel list
            print(f"{mod.__name__} {variant}: no kernel list ({e})")
        outs.append(output().float().cpu())
        del loop, output
        torch.cuda.empty_cache()
    diff = float((outs[0] - outs[1]).abs().max())
    print(
        f"{mod.__name__}: max |bad - good| {diff:.3g} (max |out| {float(outs[1].abs().max()):.3g})",
        flush=True,
    )
    del outs

for script in ("lm_head_vocab.py", "optimizer_loop.py"):
    t = {}
    for variant in ("bad", "good"):
        cp = subprocess.run(
            [sys.executable, script, "--variant", variant, "--time", "--steps", "30", "--rounds", "3"],
            cwd=ROOT / "tests" / "calibration" / "commands",
            capture_output=True,
            text=True,
        )
        if cp.returncode:
            print(script, variant, "FAILED", cp.stderr[-1500:])
            continue
        t[variant] = json.loads(cp.stdout.strip().splitlines()[-1])["step_ns_median"]
    if len(t) == 2:
        print(
            f"{script}: bad {t['bad'] / 1e3:.0f} us, good {t['good'] / 1e3:.0f} us per step: "
            f"{t['bad'] / t['good']:.2f}x",
            flush=True,
        )
print(f"check took {time.time() - t0:.0f} s")

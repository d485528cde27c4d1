"""The quick check made on the GPU before recording (not a test): each kernel version against its
reference at the default sizes and timed (triton.testing.do_bench, L2 flushed, median), with the compiled
kernel's registers, spills, shared memory, the PTX instructions that show the planted problem and the rate
the version reached against its model (and, for the KV-cache pair, against the bytes it streams); both
variants of each command script compared (kept outputs identical), the kernels and copies each runs per
step, and both timed without a profiler as record.py times them.

    PYTHONPATH=. python3 tests/calibration/recorded-heldout6/quick_check.py [kernel ...]

With kernel names, only those kernels are checked (no commands).
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

PATTERNS = (
    r"ld\.global(?:\.\w+)*\.(?:v\d\.)?[bf]\d+|st\.global(?:\.\w+)*\.(?:v\d\.)?[bf]\d+|bar\.sync|"
    r"cp\.async\.c[ag]|cp\.async\.bulk\.tensor|wgmma\.mma_async\.sync\.aligned\.\w+\.f32\.\w+|mma\.sync\.\w+|"
    r"mul\.hi\.u32|mul\.wide\.u32|cvt\.rna\.tf32\.f32|ex2\.approx\.\w+|shfl\.sync\.\w+"
)
t0 = time.time()
props = torch.cuda.get_device_properties(0)
print(
    torch.cuda.get_device_name(),
    torch.__version__,
    triton.__version__,
    f"{props.multi_processor_count} SMs",
    flush=True,
)
ONLY = sys.argv[1:]
for name in ONLY or ("calib_tf32x3", "calib_window_sum", "calib_cache_capacity", "calib_philox_dropout"):
    mod = __import__(name)
    pkg = mod.KERNEL
    p = pkg.validate_params({})
    inputs = pkg.make_inputs(p, "cuda")
    ref = pkg.reference(inputs, p).double()
    (st,) = pkg.version("v0").stages
    ms = {}
    for v in ("v0", "v1"):
        plan = pkg.version(v).build(inputs, p)
        stage = plan.stages[0]
        k = stage.fn()
        torch.cuda.synchronize()
        out = plan.output().double()
        err = float((out - ref).norm() / ref.norm())
        ms[v] = triton.testing.do_bench(stage.fn, warmup=25, rep=150)
        ptx = k.asm.get("ptx", "")
        insts = {}
        for m in re.findall(PATTERNS, ptx):
            insts[m] = insts.get(m, 0) + 1
        s = ms[v] * 1e-3
        extra = ""
        if name == "calib_cache_capacity":
            streamed = pkg.memory_bytes(p) if v == "v0" else st.bytes(p)
            extra = f", {streamed / s / 1e9:.0f} GB/s of the bytes it streams"
        print(
            f"{name} {v}: err {err:.2e} (tol {pkg.tolerance(p['dtype'])}) {ms[v] * 1e3:.1f} us "
            f"({st.bytes(p) / s / 1e9:.0f} GB/s, {st.flops(p) / s / 1e12:.2f} TFLOP/s of the model{extra}); "
            f"grid {stage.grid_blocks} warps {k.metadata.num_warps} regs {k.n_regs} spills {k.n_spills} "
            f"smem {k.metadata.shared} B; ptx {insts}",
            flush=True,
        )
    if name == "calib_philox_dropout":
        kept = plan.output() != 0
        print(f"{name}: kept fraction {float(kept.double().mean()):.4f} (expected 0.9)", flush=True)
    print(f"{name}: v0/v1 = {ms['v0'] / ms['v1']:.2f}x", flush=True)
    del inputs, ref, plan, out
    torch.cuda.empty_cache()

# Command scripts: the same outputs, the kernels and copies per step, then wall time per step as record.py
# measures it (fewer steps).
import per_sample_copy  # noqa: E402
import tensor_from_lists  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

for mod in () if ONLY else (tensor_from_lists, per_sample_copy):
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
            by = {}
            for e in kernels:
                by[e.name[:70]] = by.get(e.name[:70], 0) + 1
            print(f"{mod.__name__} {variant}: {len(kernels)} kernels/copies per step: {by}")
        except Exception as e:  # the check goes on without the kernel list
            print(f"{mod.__name__} {variant}: no kernel list ({e})")
        outs.append(output().float().cpu())
        del loop, output
        torch.cuda.empty_cache()
    n = min(len(outs[0]), len(outs[1]))
    diff = float((outs[0][:n] - outs[1][:n]).abs().max())
    print(
        f"{mod.__name__}: max |bad - good| {diff:.3g} (max |out| {float(outs[1].abs().max()):.3g})",
        flush=True,
    )
    del outs

for script in () if ONLY else ("tensor_from_lists.py", "per_sample_copy.py"):
    t = {}
    for variant in ("bad", "good"):
        t1 = time.time()
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
        print(f"{script} {variant}: process took {time.time() - t1:.1f} s", flush=True)
    if len(t) == 2:
        print(
            f"{script}: bad {t['bad'] / 1e3:.0f} us, good {t['good'] / 1e3:.0f} us per step: "
            f"{t['bad'] / t['good']:.2f}x",
            flush=True,
        )
print(f"check took {time.time() - t0:.0f} s")

"""The quick check made on the GPU before recording (not a test): each kernel version against its
reference at the default sizes and timed (triton.testing.do_bench over all the version's stages, L2
flushed, median), with each compiled kernel's registers, spills, shared memory, the PTX instructions that
show the planted problem and the rate the version reached against its model; both variants of each command
script compared (kept outputs), the kernels per step, and both timed without a profiler as record.py times
them.

    PYTHONPATH=. python3 tests/calibration/heldout_kit/quick_check.py NAME

NAME: a kernel package or a script (a name ending in .py). Prints "RATIOS {json}" at the end.
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
    r"ld\.global(?:\.\w+)*\.(?:v\d\.)?[bsuf]\d+|st\.global(?:\.\w+)*\.(?:v\d\.)?[bsuf]\d+|bar\.sync|"
    r"atom\.global\S*|red\.global\S*|div\.\S+|ex2\.approx\S*|lg2\.approx\S*|fma\.rn\.ftz\.f32|selp\.f32|"
    r"shfl\.sync\.\w+|ld\.local\.\w+|bra\.uni|bra"
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
RATIOS = {}


def rel_err(out, ref):
    fin = torch.isfinite(ref)
    o, r = out[fin].double(), ref[fin].double()
    return [
        float((o - r).norm() / max(float(r.norm()), 1e-30)),
        int((out != ref).sum()),
        bool((out[~fin] == ref[~fin]).all()),
    ]


name = sys.argv[1]
if not name.endswith(".py"):
    mod = __import__(name)
    pkg = mod.KERNEL
    p = pkg.validate_params({})
    t1 = time.time()
    inputs = pkg.make_inputs(p, "cuda")
    ref = pkg.reference(inputs, p)
    print(f"{name}: inputs and reference in {time.time() - t1:.1f} s", flush=True)
    ms = {}
    for v in ("v0", "v1"):
        plan = pkg.version(v).build(inputs, p)
        # poisoned again: a version that fails to write cannot pass on the other's output (the packages name
        # their outputs differently: the plan's output is the tensor the version writes)
        out = plan.output()  # NaN where it can hold one; an integer output gets its dtype's least value
        out.fill_(float("nan") if out.is_floating_point() else torch.iinfo(out.dtype).min)

        def fn(plan=plan):
            return [st.fn() for st in plan.stages]

        t1 = time.time()
        ks = fn()
        torch.cuda.synchronize()
        compile_s = time.time() - t1
        err = rel_err(plan.output(), ref)
        ms[v] = triton.testing.do_bench(fn, warmup=25, rep=150)
        err2 = rel_err(plan.output(), ref)  # after many runs (the atomic versions must reset)
        flops = sum(st.flops(p) for st in pkg.version(v).stages)
        nbytes = sum(st.bytes(p) for st in pkg.version(v).stages)
        s = ms[v] * 1e-3
        print(
            f"{name} {v}: err/mismatches/infs-equal {err} after runs {err2} (tol {pkg.tolerance(p['dtype'])}) "
            f"{ms[v] * 1e3:.1f} us ({nbytes / s / 1e9:.0f} GB/s, {flops / s / 1e12:.3f} T/s of the model); "
            f"first call {compile_s:.1f} s",
            flush=True,
        )
        for st, k in zip(plan.stages, ks):
            ptx = k.asm.get("ptx", "")
            insts = {}
            for m in re.findall(PATTERNS, ptx):
                insts[m] = insts.get(m, 0) + 1
            print(
                f"    stage {st.name}: grid {st.grid_blocks} warps {k.metadata.num_warps} regs {k.n_regs} "
                f"spills {k.n_spills} smem {k.metadata.shared} B; ptx lines {ptx.count(chr(10))}, fma.rn "
                f"{ptx.count('fma.rn')}; ptx {insts}",
                flush=True,
            )
    RATIOS[name] = ms["v0"] / ms["v1"]
    print(f"{name}: v0/v1 = {RATIOS[name]:.2f}x", flush=True)
else:
    from torch.profiler import ProfilerActivity, profile

    mod = __import__(name[:-3])
    outs = []
    for variant in ("bad", "good"):
        loop, output = mod.make(variant, True)
        loop(2)
        torch.cuda.synchronize()
        try:
            with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
                loop(1)
                torch.cuda.synchronize()
            kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
            by = {}
            for e in kernels:
                by[e.name[:60]] = by.get(e.name[:60], 0) + 1
            gpu_us = (
                sum(e.device_time for e in kernels) if kernels and hasattr(kernels[0], "device_time") else -1
            )
            print(
                f"{name} {variant}: {len(kernels)} GPU ops per step ({gpu_us:.0f} us): {dict(list(by.items())[:14])}"
            )
        except Exception as e:  # the check goes on without the kernel list
            print(f"{name} {variant}: no kernel list ({type(e).__name__}: {e})")
        outs.append(output().double().cpu())
        del loop, output
        torch.cuda.empty_cache()
    n = min(len(outs[0]), len(outs[1]))
    diff = float((outs[0][:n] - outs[1][:n]).abs().max())
    print(
        f"{name}: max |bad - good| {diff:.3g} (max |out| {float(outs[1].abs().max()):.3g}; bad "
        f"{outs[0][:n].tolist()[:4]}, good {outs[1][:n].tolist()[:4]})",
        flush=True,
    )
    del outs
    t = {}
    for variant in ("bad", "good"):
        t1 = time.time()
        cp = subprocess.run(
            [sys.executable, name, "--variant", variant, "--time", "--steps", "30", "--rounds", "3"],
            cwd=ROOT / "tests" / "calibration" / "commands",
            capture_output=True,
            text=True,
        )
        if cp.returncode:
            print(name, variant, "FAILED", cp.stderr[-1500:])
            continue
        r = json.loads(cp.stdout.strip().splitlines()[-1])
        t[variant] = r["step_ns_median"]
        print(
            f"{name} {variant}: process took {time.time() - t1:.1f} s; rounds {[round(x / 1e3) for x in r['step_ns']]} us"
        )
    if len(t) == 2:
        RATIOS[name] = t["bad"] / t["good"]
        print(
            f"{name}: bad {t['bad'] / 1e3:.0f} us, good {t['good'] / 1e3:.0f} us per step: "
            f"{t['bad'] / t['good']:.2f}x",
            flush=True,
        )
print(f"check took {time.time() - t0:.0f} s")
print("RATIOS " + json.dumps(RATIOS))

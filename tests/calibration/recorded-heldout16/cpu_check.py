"""The CPU check of the sixteenth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes (each version run twice: a version must give the
same result when run again), and both command scripts' variants run on the CPU at small sizes and compared
(the autotune script's kernel in the interpreter with one config: on the CPU its variants differ in nothing but
the autotuner's key), and the long convolution's direct form against a plain sum.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout16/cpu_check.py
"""

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "calibration" / "kernels"))
sys.path.insert(0, str(ROOT / "tests" / "calibration" / "commands"))

SMALL = {
    "calib_matpow": [
        {"N": 100, "dtype": "float16"},  # a ragged tile (one of 128, partly masked), ragged K
        {"N": 256, "dtype": "float16"},
        {"N": 1, "dtype": "float16"},
    ],
    "calib_chunk_copies": [
        {"N": 7, "F": 300, "dtype": "float32"},  # ragged column blocks
        {"N": 16, "F": 1024, "dtype": "float16"},
        {"N": 1, "F": 1, "dtype": "float32"},
    ],
    "calib_sinkhorn_iters": [
        {"B": 5, "n": 32, "dtype": "float32"},
        {"B": 3, "n": 20, "dtype": "float32"},  # masked rows and columns (BLOCK 32)
        {"B": 2, "n": 2, "dtype": "float32"},
    ],
}

bad = 0
for name, cases in SMALL.items():
    pkg = __import__(name).KERNEL
    for given in cases:
        p = pkg.validate_params(given)
        inputs = pkg.make_inputs(p, "cpu")
        ref = pkg.reference(inputs, p)
        tol = pkg.tolerance(p["dtype"])
        for v in ("v0", "v1"):
            plan = pkg.version(v).build(inputs, p)
            plan.output().fill_(float("nan"))  # poisoned again before each version
            for _ in range(2):  # twice: a version must give the same result when run again
                for st in plan.stages:
                    st.fn()
            out = plan.output()
            o, r = out.double(), ref.double()
            err = float((o - r).norm() / max(float(r.norm()), 1e-30))
            ok = bool(torch.isfinite(out).all()) and err <= tol
            bad += not ok
            print(f"{name} {v} {given}: rel err {err:.3g} (tol {tol}) {'ok' if ok else 'FAIL'}", flush=True)

import autotune_every_step  # noqa: E402
import long_conv_direct  # noqa: E402

for mod in (autotune_every_step, long_conv_direct):
    outs = []
    for variant in ("bad", "good"):
        loop, output = mod.make(variant, False)
        loop(3)
        outs.append(output())
    diff = float((outs[0] - outs[1]).abs().max())
    ok = diff <= 1e-4 * max(float(outs[1].abs().max()), 1.0) and float(outs[1].abs().max()) > 0
    bad += not ok
    print(
        f"{mod.__name__}: bad {outs[0].tolist()[:6]}, good {outs[1].tolist()[:6]}: max diff {diff:.3g} "
        f"{'ok' if ok else 'FAIL'}"
    )
# The long convolution's two forms against a plain sum (the variants agree with each other above).
g = torch.Generator().manual_seed(1)
x, h = torch.randn(2, 3, 16, generator=g), torch.randn(3, 16, generator=g)
direct = torch.nn.functional.conv1d(torch.nn.functional.pad(x, (15, 0)), h.flip(-1)[:, None, :], groups=3)
ref = torch.zeros_like(x)
for t in range(16):
    for s_ in range(t + 1):
        ref[..., t] += h[:, s_] * x[..., t - s_]
err = float((direct - ref).abs().max())
bad += err > 1e-4
print(f"long_conv_direct's direct form against the sum: max err {err:.3g} {'ok' if err <= 1e-4 else 'FAIL'}")
print("FAILED" if bad else "all versions match their references")
sys.exit(1 if bad else 0)

"""The CPU check of the fifteenth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes (each version run twice: a version must give the
same result when run again), and both command scripts' variants run on the CPU at small sizes and compared
(the streams script's kernel in the interpreter; on the CPU its variants differ in nothing but the name).

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout15/cpu_check.py
"""

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "calibration" / "kernels"))
sys.path.insert(0, str(ROOT / "tests" / "calibration" / "commands"))

SMALL = {
    "calib_syrk": [
        {"N": 300, "K": 100, "dtype": "float16"},  # ragged tiles (3 x 3 of 128, the last partial), ragged K
        {"N": 256, "K": 64, "dtype": "float16"},
        {"N": 1, "K": 1, "dtype": "float16"},
    ],
    "calib_zeroed_out": [
        {"N": 100, "M": 300, "dtype": "float32"},  # ragged row and column tiles
        {"N": 64, "M": 256, "dtype": "float16"},
        {"N": 1, "M": 1, "dtype": "float32"},
    ],
    "calib_needless_splitk": [
        {"M": 200, "N": 130, "K": 300, "SPLIT_K": 4, "dtype": "float16"},  # ragged tiles and slices
        {"M": 128, "N": 128, "K": 512, "SPLIT_K": 4, "dtype": "float16"},
        {"M": 1, "N": 1, "K": 1, "SPLIT_K": 4, "dtype": "float16"},
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
            for key in inputs:  # poisoned again before each version
                if key in ("c", "d"):
                    inputs[key].fill_(float("nan"))
            plan = pkg.version(v).build(inputs, p)
            for _ in range(2):  # twice: a version must give the same result when run again
                for st in plan.stages:
                    st.fn()
            out = plan.output()
            o, r = out.double(), ref.double()
            err = float((o - r).norm() / max(float(r.norm()), 1e-30))
            ok = bool(torch.isfinite(out).all()) and err <= tol
            bad += not ok
            print(f"{name} {v} {given}: rel err {err:.3g} (tol {tol}) {'ok' if ok else 'FAIL'}", flush=True)

import ensemble_one_stream  # noqa: E402
import inverse_then_matmul  # noqa: E402

for mod in (ensemble_one_stream, inverse_then_matmul):
    outs = []
    for variant in ("bad", "good"):
        loop, output = mod.make(variant, False)
        loop(3)
        outs.append(output())
    diff = float((outs[0] - outs[1]).abs().max())
    ok = diff <= 1e-4 * max(float(outs[1].abs().max()), 1.0)
    bad += not ok
    print(
        f"{mod.__name__}: bad {outs[0].tolist()[:6]}, good {outs[1].tolist()[:6]}: max diff {diff:.3g} "
        f"{'ok' if ok else 'FAIL'}"
    )
# The streams script's kernel against a plain recurrence (the variants agree with each other above).
ens = ensemble_one_stream
g = torch.Generator().manual_seed(1)
x, a = torch.randn(2, 16, 32, generator=g), 0.5 + 0.49 * torch.rand(32, generator=g)
out = torch.empty_like(x)
ens._scan[(2,)](x, a, out, 16, D=32, num_warps=1)
h, ref = torch.zeros(2, 32), torch.empty_like(x)
for t in range(16):
    h = a * h + x[:, t]
    ref[:, t] = h
err = float((out - ref).abs().max())
bad += err > 1e-5
print(
    f"ensemble_one_stream._scan against the recurrence: max err {err:.3g} {'ok' if err <= 1e-5 else 'FAIL'}"
)
print("FAILED" if bad else "all versions match their references")
sys.exit(1 if bad else 0)

"""The CPU check of the thirteenth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes (each version run twice: the atomic versions
must reset their output), and both command scripts' variants run on the CPU at small sizes and compared.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout13/cpu_check.py
"""

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "calibration" / "kernels"))
sys.path.insert(0, str(ROOT / "tests" / "calibration" / "commands"))

SMALL = {
    "calib_separable_filter": [
        {"H": 70, "W": 100, "K": 15, "dtype": "float32"},  # ragged tiles, borders everywhere
        {"H": 33, "W": 65, "K": 5, "dtype": "float32"},
        {"H": 1, "W": 3, "K": 7, "dtype": "float32"},  # smaller than the kernel
    ],
    "calib_kepler_bisect": [
        {"N": 5000, "dtype": "float32"},  # a ragged last tile
        {"N": 3000, "dtype": "float16"},
        {"N": 1, "dtype": "float32"},
    ],
    "calib_cas_max": [
        {"N": 5000, "S": 64, "dtype": "float32"},  # heavy collisions
        {"N": 3000, "S": 4096, "dtype": "float16"},  # empty segments stay -inf
        {"N": 1, "S": 1, "dtype": "float32"},
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
            inputs["out"].fill_(float("nan"))
            plan = pkg.version(v).build(inputs, p)
            for _ in range(2):  # twice: a version must give the same result when run again
                for st in plan.stages:
                    st.fn()
            out = plan.output()
            fin = torch.isfinite(ref)
            same_inf = bool((out[~fin] == ref[~fin]).all())
            o, r = out[fin].double(), ref[fin].double()
            err = float((o - r).norm() / max(float(r.norm()), 1e-30))
            ok = bool(torch.isfinite(out[fin]).all()) and same_inf and err <= tol
            bad += not ok
            print(f"{name} {v} {given}: rel err {err:.3g} (tol {tol}) {'ok' if ok else 'FAIL'}", flush=True)

import fft_prime_length  # noqa: E402
import gc_every_step  # noqa: E402

for mod in (fft_prime_length, gc_every_step):
    outs = []
    for variant in ("bad", "good"):
        loop, output = mod.make(variant, False)
        loop(3)
        outs.append(output())
    diff = float((outs[0] - outs[1]).abs().max())
    ok = diff <= 1e-4 * max(float(outs[1].abs().max()), 1.0)
    bad += not ok
    print(
        f"{mod.__name__}: bad {outs[0].tolist()}, good {outs[1].tolist()}: max diff {diff:.3g} {'ok' if ok else 'FAIL'}"
    )
print("FAILED" if bad else "all versions match their references")
sys.exit(1 if bad else 0)

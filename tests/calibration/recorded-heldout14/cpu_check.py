"""The CPU check of the fourteenth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes (each version run twice: a version must give the
same result when run again), and both command scripts' variants run on the CPU at small sizes and compared.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout14/cpu_check.py
"""

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "calibration" / "kernels"))
sys.path.insert(0, str(ROOT / "tests" / "calibration" / "commands"))

SMALL = {
    "calib_logaddexp": [
        {"N": 100, "M": 300, "dtype": "float32"},  # ragged query and sample tiles
        {"N": 64, "M": 128, "inv_h": 10, "dtype": "float16"},
        {"N": 1, "M": 1, "dtype": "float32"},
    ],
    "calib_tri_prefix": [
        {"R": 100, "L": 64, "dtype": "float32"},  # a ragged last tile of rows
        {"R": 70, "L": 16, "dtype": "float16"},
        {"R": 1, "L": 128, "dtype": "float32"},
    ],
    "calib_two_pass_var": [
        {"C": 3, "M": 1024, "SPLIT": 4, "dtype": "float32"},
        {"C": 2, "M": 512, "SPLIT": 2, "dtype": "float16"},
        {"C": 1, "M": 16, "SPLIT": 1, "dtype": "float32"},
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
            o, r = out.double(), ref.double()
            err = float((o - r).norm() / max(float(r.norm()), 1e-30))
            ok = bool(torch.isfinite(out).all()) and err <= tol
            bad += not ok
            print(f"{name} {v} {given}: rel err {err:.3g} (tol {tol}) {'ok' if ok else 'FAIL'}", flush=True)

import host_register_per_batch  # noqa: E402
import pad_to_max_length  # noqa: E402

for mod in (pad_to_max_length, host_register_per_batch):
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

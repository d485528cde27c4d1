"""The CPU check of the twelfth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes (each version run twice: the atomic versions
must not accumulate), and both command scripts' variants run on the CPU at small sizes and compared.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout12/cpu_check.py
"""

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "calibration" / "kernels"))
sys.path.insert(0, str(ROOT / "tests" / "calibration" / "commands"))

SMALL = {
    "calib_rare_branch": [
        {"N": 5000, "L": 64, "dtype": "float32"},  # a ragged last tile, ~43 tail values
        {"N": 3000, "L": 33, "dtype": "float16"},
        {"N": 1, "L": 5, "dtype": "float32"},
    ],
    "calib_chained_scan": [
        {"N": 10000, "dtype": "int32"},  # a ragged last tile
        {"N": 4096, "dtype": "int32"},
        {"N": 1, "dtype": "int32"},
    ],
    "calib_atomic_order": [
        {"NODES": 100, "EDGES": 1000, "D": 8, "dtype": "float32"},  # a ragged last program
        {"NODES": 7, "EDGES": 600, "D": 32, "dtype": "float16"},  # heavy collisions
        {"NODES": 1, "EDGES": 1, "D": 4, "dtype": "float32"},
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
            inputs["out"].fill_(-1 if p["dtype"] == "int32" else float("nan"))
            plan = pkg.version(v).build(inputs, p)
            for _ in range(2):  # twice: a version must give the same result when run again
                for st in plan.stages:
                    st.fn()
            out = plan.output()
            err = float((out.double() - ref.double()).norm() / max(float(ref.double().norm()), 1e-30))
            ok = bool(torch.isfinite(out).all()) and err <= tol
            bad += not ok
            print(f"{name} {v} {given}: rel err {err:.3g} (tol {tol}) {'ok' if ok else 'FAIL'}", flush=True)

import float_images  # noqa: E402
import lstm_cell_loop  # noqa: E402

for mod in (float_images, lstm_cell_loop):
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

"""The CPU check of the eleventh held-back set's kernel packages (not a test): each version against its
reference in the Triton interpreter at small and ragged sizes.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout11/cpu_check.py
"""

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "calibration" / "kernels"))

SMALL = {
    "calib_capacity_grid": [
        {"CAP": 1000, "LIVE": 77, "D": 16, "dtype": "float16"},  # a ragged last live tile
        {"CAP": 64, "LIVE": 64, "D": 32, "dtype": "float32"},  # all rows live
        {"CAP": 5, "LIVE": 1, "D": 8, "dtype": "float16"},
    ],
    "calib_atomic_epilogue": [
        {"M": 130, "N": 200, "K": 16, "dtype": "float16"},  # ragged tiles in both directions
        {"M": 128, "N": 128, "K": 32, "dtype": "float32"},
        {"M": 1, "N": 1, "K": 16, "dtype": "float16"},
    ],
    "calib_hash_probe": [
        {"N": 3000, "dtype": "float32"},
        {"N": 129, "dtype": "float32"},
        {"N": 1, "dtype": "float32"},
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
            err = float((out.double() - ref.double()).norm() / max(float(ref.double().norm()), 1e-30))
            ok = bool(torch.isfinite(out).all()) and err <= tol
            bad += not ok
            print(f"{name} {v} {given}: rel err {err:.3g} (tol {tol}) {'ok' if ok else 'FAIL'}", flush=True)
    if name == "calib_hash_probe":
        from calib_hash_probe import capacities, home

        p = pkg.validate_params({"N": 1 << 16})
        inputs = pkg.make_inputs(p, "cpu")
        for w, cap in enumerate(capacities(p)):
            tk = inputs[f"table{w}"][:, 0]
            slots = torch.nonzero(tk >= 0).flatten()
            probes = slots - home(tk[slots].long(), cap) + 1
            print(
                f"hash table {w}: C {cap}, length {len(tk)}, load {len(slots) / cap:.3f}, probes mean "
                f"{probes.float().mean():.2f} max {int(probes.max())}; per 128 queries the mean max "
                f"{probes[torch.randperm(len(probes))[: len(probes) // 128 * 128]].view(-1, 128).max(1).values.float().mean():.1f}"
            )
print("FAILED" if bad else "all versions match their references")
sys.exit(1 if bad else 0)

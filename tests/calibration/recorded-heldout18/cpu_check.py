"""The CPU check of the eighteenth held-back set (not a test): each kernel package's versions against its
reference in the Triton interpreter at small and ragged sizes (each version run twice: a version must give the
same result when run again), and both command scripts' variants run on the CPU at small sizes and compared.

    TRITON_INTERPRET=1 PYTHONPATH=. .venv/bin/python tests/calibration/recorded-heldout18/cpu_check.py
"""

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "calibration" / "kernels"))
sys.path.insert(0, str(ROOT / "tests" / "calibration" / "commands"))

SMALL = {
    "calib_pairwise_dist": [
        {"M": 100, "N": 70, "D": 130},  # ragged tiles and a ragged last K block
        {"M": 128, "N": 256, "D": 64},  # whole tiles
        {"M": 1, "N": 1, "D": 1},
    ],
    "calib_softmax_argmax": [
        {"B": 5, "V": 5000},  # a ragged last chunk
        {"B": 3, "V": 2048},  # one whole chunk
        {"B": 2, "V": 1},
        {"B": 4, "V": 37},
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
            first = plan.output()
            first.fill_(
                float("nan") if first.is_floating_point() else -1
            )  # poisoned again before each version
            for _ in range(2):  # twice: a version must give the same result when run again
                for st in plan.stages:
                    st.fn()
            out = plan.output()
            o, r = out.double(), ref.double()
            err = float((o - r).norm() / max(float(r.norm()), 1e-30))
            ok = bool(torch.isfinite(out).all()) and err <= tol
            bad += not ok
            print(f"{name} {v} {given}: rel err {err:.3g} (tol {tol}) {'ok' if ok else 'FAIL'}", flush=True)

import deterministic_pool  # noqa: E402
import weight_offload  # noqa: E402

for mod in (weight_offload, deterministic_pool):
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
print("FAILED" if bad else "all versions match their references")
sys.exit(1 if bad else 0)

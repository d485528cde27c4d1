"""Calibration pair (thirty-sixth held-back set) — calendar dates (year, month, day) of day counts since
1970-01-01 found by walking the calendar a year at a time (subtract the year's length, 365 or 366 by the
Gregorian leap rule, while the count is at least that long; then the months the same way), where the
closed-form civil-from-days conversion (the 400-year era, the year of the era and the March-based day of the
year by a few integer divisions by constants) serves. A branch-free Triton kernel runs the walk's loop to its
worst case (130 years for dates up to 2099). Sources: H. Hinnant, "chrono-Compatible Low-Level Date
Algorithms" (2013: civil_from_days, the era / yoe / doy / mp derivation); H. F. Fliegel, T. C. Van Flandern,
"A Machine Algorithm for Processing Calendar Dates" (CACM 11(10), 1968); the year-at-a-time walk of simple
gmtime implementations (the loop those algorithms replace); the CUDA C++ Best Practices Guide ("Arithmetic
Instructions": integer division by a constant is cheap, a multiply-high).

The work: out [L] int32 = YYYYMMDD of days [L] int32 in [0, 47482) (1970-01-01 .. 2099-12-31), the same in both
versions.

Planted problem (v0): stage "date_walk": one date a lane; 130 year steps (the leap rule's three remainders by
constants, the year's length, a compare, two selects: ~20 integer instructions a step) and 11 month steps
(~10): ~2700 integer instructions a date.
Fix (v1): stage "date_civil": Hinnant's civil_from_days (~10 integer divisions by constants, ~50 integer
instructions a date).

Model (the needed work, for both): FLOPs 0 (integer work); bytes days read and out written: 8 L.

Expected on an H100/H200 (per design): L = 1048576: v0 1048576 x ~2700 = 2.8e9 lane-instructions on the integer
pipes (~1.7e13 a second): ~0.15-0.3 ms; v1 ~5e7 and 8 MB: ~4-8 us (launch-scale): ~25-50x. Cause "move_work"
(the needed date by a costlier method: ~50x the instructions); resource "alu" (the integer compare, remainder
and select chain).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

DAYS = 47482  # 1970-01-01 .. 2099-12-31


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    d = torch.randint(0, DAYS, (p["L"],), generator=g, dtype=torch.int32)
    edges = torch.tensor([0, DAYS - 1, 11016, 11017, 10956, 11322, 789, 790], dtype=torch.int32)  # leap days
    k = min(p["L"], edges.numel())
    d[:k] = edges[:k]
    return {
        "days": d.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((p["L"],), -1, device=device, dtype=torch.int32),
    }


def _reference(inputs, p):
    import numpy as np
    import torch

    d = inputs["days"].cpu().numpy().astype("datetime64[D]")
    mo = d.astype("datetime64[M]")
    y = d.astype("datetime64[Y]").astype(np.int64) + 1970
    m = mo.astype(np.int64) % 12 + 1
    dd = (d - mo).astype(np.int64) + 1
    return torch.from_numpy((y * 10000 + m * 100 + dd).astype(np.int32)).to(inputs["days"].device)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _ops(p):
    return 0.0


def _bytes(p):
    return 8.0 * p["L"]


KERNEL = KernelPackage(
    name="calib_civil_date",
    description="Calibration (held back, set 36; planted: dates from day counts by walking the calendar a "
    "year at a time where the closed-form civil-from-days conversion serves): 1048576 dates 1970-2099; v0 130 "
    "year steps and 11 month steps a date, v1 Hinnant's civil_from_days",
    params=(
        Param("L", 1048576, min=1, max=1 << 24, doc="dates"),
        DTYPE_PARAM("int32", choices=("int32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the calendar walked a year (then a month) at a time, 130 + 11 steps a date",
            (StageModel("date_walk", flops=_ops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: the closed-form civil-from-days conversion",
            (StageModel("date_civil", flops=_ops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 0.0,
)

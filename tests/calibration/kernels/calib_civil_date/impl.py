"""Triton code of calib_civil_date (imported only by the profiling worker).

One date a lane, BLOCK dates a program, data-independent loops (a branch-free kernel's loop runs to its worst
case; a date already placed stays: the year's or month's length it compares with does not change once it
stops advancing).
walk_kernel (v0): YEARS steps of "if rem >= length of year y: rem -= it, y += 1", then 11 month steps.
civil_kernel (v1): Hinnant's civil_from_days (days >= 0 here: the era's division needs no floor fix).
"""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

BLOCK, WARPS, YEARS = 128, 4, 130


@triton.jit
def walk_kernel(d_ptr, o_ptr, L, YEARS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < L
    rem = tl.load(d_ptr + offs, mask=mask, other=0)
    y = tl.full((BLOCK,), 1970, tl.int32)
    for _ in range(YEARS):
        leap = ((y % 4) == 0) & (((y % 100) != 0) | ((y % 400) == 0))
        ylen = 365 + leap.to(tl.int32)
        adv = rem >= ylen
        rem = tl.where(adv, rem - ylen, rem)
        y = tl.where(adv, y + 1, y)
    leap = (((y % 4) == 0) & (((y % 100) != 0) | ((y % 400) == 0))).to(tl.int32)
    m = tl.full((BLOCK,), 1, tl.int32)
    for _ in range(11):
        # 31 28/29 31 30 31 30 31 31 30 31 30 31
        mlen = tl.where(m == 2, 28 + leap, 30 + ((m + (m >> 3)) & 1))
        adv = rem >= mlen
        rem = tl.where(adv, rem - mlen, rem)
        m = tl.where(adv, m + 1, m)
    tl.store(o_ptr + offs, y * 10000 + m * 100 + rem + 1, mask=mask)


@triton.jit
def civil_kernel(d_ptr, o_ptr, L, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < L
    z = tl.load(d_ptr + offs, mask=mask, other=0) + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = tl.where(mp < 10, mp + 3, mp - 9)
    y = yoe + era * 400 + (m <= 2).to(tl.int32)
    tl.store(o_ptr + offs, y * 10000 + m * 100 + d, mask=mask)


def build_v0(inputs, params):
    d, out = inputs["days"], inputs["out"]
    length = params["L"]
    grid = triton.cdiv(length, BLOCK)

    def run():
        return walk_kernel[(grid,)](d, out, length, YEARS=YEARS, BLOCK=BLOCK, num_warps=WARPS)

    st = Stage(
        "date_walk",
        run,
        kernel=walk_kernel,
        tiling={"BLOCK": BLOCK, "YEARS": YEARS, "grid": [grid]},
        grid_blocks=grid,
    )
    return Plan([st], output=lambda: out)


def build_v1(inputs, params):
    d, out = inputs["days"], inputs["out"]
    length = params["L"]
    grid = triton.cdiv(length, BLOCK)

    def run():
        return civil_kernel[(grid,)](d, out, length, BLOCK=BLOCK, num_warps=WARPS)

    st = Stage(
        "date_civil",
        run,
        kernel=civil_kernel,
        tiling={"BLOCK": BLOCK, "grid": [grid]},
        grid_blocks=grid,
    )
    return Plan([st], output=lambda: out)

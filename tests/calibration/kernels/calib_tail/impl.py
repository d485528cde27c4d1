"""Triton code of calib_tail (imported only by the profiling worker)."""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage

from . import BIG, SMALL, A, C, device_sms, v0_programs

WARPS = 32   # 1024 threads per program in both versions: 32 values per thread in a big tile, 4 in a small one
UNROLL = 32  # FMA steps per loop trip: the loop's ~3 overhead instructions are < 3 % of the FMAs


@triton.jit
def _iterate(x, iters, a, c, UNROLL: tl.constexpr):
    for _ in range(iters // UNROLL):
        for _u in tl.static_range(UNROLL):
            x = x * a + c
    for _ in range(iters % UNROLL):
        x = x * a + c
    return x


@triton.jit
def iterate_kernel(x_ptr, out_ptr, n_big, n_small, iters, a, c,
                   BIG: tl.constexpr, SMALL: tl.constexpr, UNROLL: tl.constexpr):
    """Each element goes through `iters` FMAs x <- a*x + c, its values held in registers.

    Phase 1: big tiles (BIG elements: 32 values per thread) pid, pid + grid, ... of the first
    n_big*BIG elements. Phase 2: the rest, in small tiles (SMALL elements: 4 values per thread),
    likewise strided over the programs. The vector is an exact number of tiles (no masks). Both
    phases are in the one kernel, so its register count (that of the big tiles) and its
    occupancy (one program per SM) are the same for both versions.
    """
    pid = tl.program_id(0)
    grid = tl.num_programs(0)
    for t in range(pid, n_big, grid):
        offs = t * BIG + tl.arange(0, BIG)
        tl.store(out_ptr + offs, _iterate(tl.load(x_ptr + offs), iters, a, c, UNROLL))
    base = n_big * BIG
    for t in range(pid, n_small, grid):
        offs = base + t * SMALL + tl.arange(0, SMALL)
        tl.store(out_ptr + offs, _iterate(tl.load(x_ptr + offs), iters, a, c, UNROLL))


def _build(inputs, p, programs, n_big, persistent, note):
    x, out = inputs["x"], inputs["out"]
    n, iters, shrink = x.numel(), p["iters"], p["shrink"]
    big, small = BIG // shrink, SMALL // shrink
    rest = n - n_big * big
    assert rest >= 0 and rest % small == 0, (n, n_big, big, small)
    n_small = rest // small
    tiling = {"BIG": big, "SMALL": small, "num_warps": WARPS, "num_stages": 1, "UNROLL": UNROLL,
              "programs": programs, "big_tiles": n_big, "small_tiles": n_small, "sms": device_sms(x.device),
              "grid": note}

    def run():
        return iterate_kernel[(programs,)](x, out, n_big, n_small, iters, A, C, BIG=big, SMALL=small, UNROLL=UNROLL,
                                           num_warps=WARPS, num_stages=1)

    return Plan([Stage("iterate", run, kernel=iterate_kernel, tiling=tiling, grid_blocks=programs,
                       persistent=persistent)], output=lambda: out)


def build_v0(inputs, p):
    g = v0_programs(device_sms(inputs["x"].device))
    # One big tile per program, nothing for phase 2.
    return _build(inputs, p, g, g, False, f"SMs + SMs//10 = {g} programs of one big tile each (about 1.1 waves)")


def build_v1(inputs, p):
    sms = device_sms(inputs["x"].device)
    # One big tile per SM, then the last SMs//10 big tiles' elements as 8x as many small tiles, at most
    # one per program: every SM finishes after 1 + 1/8 big tiles.
    return _build(inputs, p, sms, sms, True,
                  f"persistent: SMs = {sms} programs, one big tile each, then the rest in {SMALL}-element tiles")

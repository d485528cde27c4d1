"""Triton code of softmax (imported only by the profiling worker).

All kernels compute in FP32 and write y in x's dtype. Row offsets are formed in int64
(M·N may exceed 2^31 elements at the largest allowed sizes).
"""

import os

import torch
import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage
from kprof_mcp.kernel import autotune_bench

TILE_N = 1024             # v0/v1: columns per tile of the looped passes
MAX_ROW_IN_REGS = 32768   # v2/v3: widest row (next_pow2(N)) kept whole in registers
V3_TILE_ELEMS = 4096      # v3: rows per tile chosen so a tile holds at least this many elements
CPU_SMS = 4               # stand-in SM count under the interpreter (no GPU)


# ----------------------------------------------------------------------------- kernels

@triton.jit
def softmax_three_pass_kernel(x_ptr, y_ptr, N, stride_xm, stride_ym, BLOCK_N: tl.constexpr):
    """v0: one program per row; the row is read three times (max, sum of exp, write)."""
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    y_row = y_ptr + row * stride_ym
    cols = tl.arange(0, BLOCK_N)
    # Pass 1: row max (kept per lane, reduced once at the end).
    m_vec = tl.full([BLOCK_N], float("-inf"), tl.float32)
    for start in range(0, N, BLOCK_N):
        mask = start + cols < N
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        m_vec = tl.maximum(m_vec, x)
    m = tl.max(m_vec, axis=0)
    # Pass 2: sum of exp(x - max).
    d_vec = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        mask = start + cols < N
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        d_vec += tl.exp(x - m)
    inv = 1.0 / tl.sum(d_vec, axis=0)
    # Pass 3: write.
    for start in range(0, N, BLOCK_N):
        mask = start + cols < N
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_row + start + cols, (tl.exp(x - m) * inv).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_online_kernel(x_ptr, y_ptr, N, stride_xm, stride_ym, BLOCK_N: tl.constexpr):
    """v1: one program per row; online max/sum (Milakov & Gimelshein 2018), then the write pass."""
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    y_row = y_ptr + row * stride_ym
    cols = tl.arange(0, BLOCK_N)
    # Per-lane running max m_vec and sum d_vec of exp(x - m_vec): when the max grows, the
    # sum is rescaled by exp(m_old - m_new). Lanes past N (only when N < BLOCK_N) stay at
    # -inf / 0; m_safe keeps them from computing exp(-inf - -inf) = NaN.
    m_vec = tl.full([BLOCK_N], float("-inf"), tl.float32)
    d_vec = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        mask = start + cols < N
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m_vec, x)
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        d_vec = d_vec * tl.exp(m_vec - m_safe) + tl.exp(x - m_safe)
        m_vec = m_new
    m = tl.max(m_vec, axis=0)
    inv = 1.0 / tl.sum(d_vec * tl.exp(m_vec - m), axis=0)
    for start in range(0, N, BLOCK_N):
        mask = start + cols < N
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_row + start + cols, (tl.exp(x - m) * inv).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_ym, BLOCK_N: tl.constexpr):
    """v2: persistent; each program strides over rows, holding one whole row in registers."""
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    for row in tl.range(tl.program_id(0), M, tl.num_programs(0)):
        r = tl.cast(row, tl.int64)
        x = tl.load(x_ptr + r * stride_xm + cols, mask=mask, other=float("-inf")).to(tl.float32)
        e = tl.exp(x - tl.max(x, axis=0))
        y = e * (1.0 / tl.sum(e, axis=0))
        tl.store(y_ptr + r * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_tile_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_ym,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PROGS_PER_SM: tl.constexpr):
    """v3: persistent over tiles of BLOCK_M whole rows; x and y are streamed past the caches.

    PROGS_PER_SM is a launch parameter only (the grid function reads it; the autotuner tunes it).
    """
    cols = tl.arange(0, BLOCK_N)
    col_mask = cols < N
    n_tiles = tl.cdiv(M, BLOCK_M)
    for tile in tl.range(tl.program_id(0), n_tiles, tl.num_programs(0)):
        rows = tl.cast(tile, tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
        row_mask = rows < M
        # Rows past M load row M-1 again (valid, finite) instead of -inf rows that would give
        # NaN; they are never stored.
        x_rows = tl.minimum(rows, M - 1)
        x = tl.load(x_ptr + x_rows[:, None] * stride_xm + cols[None, :], mask=col_mask[None, :],
                    other=float("-inf"), eviction_policy="evict_first").to(tl.float32)
        e = tl.exp(x - tl.max(x, axis=1)[:, None])
        y = e * (1.0 / tl.sum(e, axis=1))[:, None]
        tl.store(y_ptr + rows[:, None] * stride_ym + cols[None, :], y.to(y_ptr.dtype.element_ty),
                 mask=row_mask[:, None] & col_mask[None, :], cache_modifier=".cs")


# ----------------------------------------------------------------------------- launch helpers

def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available()


def num_sms() -> int:
    if _interpreting():
        return CPU_SMS
    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count


def _row_warps(block_elems: int) -> int:
    """Warps for a tile held in registers: ~16 FP32 values per thread, 4 to 16 warps."""
    return max(4, min(16, block_elems // 512))


def _occupancy(compiled, num_warps: int) -> tuple[int, str]:
    """Programs of ``compiled`` resident per SM (registers, threads, shared memory), and how it was found."""
    fallback = max(1, 64 // num_warps), "thread limit only (2048 per SM): register count unknown"
    if compiled is None:
        return max(1, 64 // num_warps), "thread limit only (2048 per SM): interpreter, no compiled kernel"
    try:
        compiled._init_handles()
        n_regs, shared = compiled.n_regs, compiled.metadata.shared
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        regs_sm = getattr(props, "regs_per_multiprocessor", 65536)
        threads_sm = getattr(props, "max_threads_per_multi_processor", 2048)
        smem_sm = getattr(props, "shared_memory_per_multiprocessor", 228 * 1024)
        regs_per_warp = -(-max(n_regs, 1) * 32 // 256) * 256  # allocated per warp in units of 256
        by_regs = regs_sm // (regs_per_warp * num_warps)
        by_threads = threads_sm // (32 * num_warps)
        by_smem = smem_sm // shared if shared else 32
        occ = max(1, min(by_regs, by_threads, by_smem, 32))
        return occ, f"compiled kernel: {n_regs} regs/thread, {shared} B shared"
    except Exception:  # noqa: BLE001 — an older/newer Triton without these fields: use the thread limit
        return fallback


def _looped_plan(kernel, inputs, params, version):
    """One program per row, columns in TILE_N tiles (v0, v1, and v2/v3 beyond MAX_ROW_IN_REGS)."""
    x, y = inputs["x"], inputs["y"]
    M, N = params["M"], params["N"]
    block_n = min(TILE_N, triton.next_power_of_2(N))
    tiling = {"BLOCK_N": block_n, "num_warps": 4, "num_stages": 3, "programs": M, "kernel": kernel.__name__}
    if version is not None:
        tiling["fallback"] = f"{version}: next_pow2(N) > {MAX_ROW_IN_REGS} does not fit in registers; v1's kernel"

    def run():
        return kernel[(M,)](x, y, N, x.stride(0), y.stride(0), BLOCK_N=block_n, num_warps=4, num_stages=3)

    return Plan(stages=[Stage("softmax", run, kernel=kernel, tiling=tiling, grid_blocks=M)], output=lambda: y)


# ----------------------------------------------------------------------------- versions

def build_v0(inputs, params):
    return _looped_plan(softmax_three_pass_kernel, inputs, params, None)


def build_v1(inputs, params):
    return _looped_plan(softmax_online_kernel, inputs, params, None)


def build_v2(inputs, params):
    x, y = inputs["x"], inputs["y"]
    M, N = params["M"], params["N"]
    block_n = triton.next_power_of_2(N)
    if block_n > MAX_ROW_IN_REGS:
        return _looped_plan(softmax_online_kernel, inputs, params, "v2")
    warps, stages = _row_warps(block_n), 2
    args = (x, y, M, N, x.stride(0), y.stride(0))
    compiled = None
    if not _interpreting():
        # Compile now (no launch) to size the persistent grid from the real register count.
        compiled = softmax_row_kernel.warmup(*args, BLOCK_N=block_n, num_warps=warps, num_stages=stages, grid=(1,))
    occ, how = _occupancy(compiled, warps)
    programs = max(1, min(M, num_sms() * occ))
    tiling = {"BLOCK_N": block_n, "num_warps": warps, "num_stages": stages, "programs": programs,
              "programs_per_sm": occ, "occupancy_from": how}

    def run():
        return softmax_row_kernel[(programs,)](*args, BLOCK_N=block_n, num_warps=warps, num_stages=stages)

    return Plan(stages=[Stage("softmax", run, kernel=softmax_row_kernel, tiling=tiling, grid_blocks=programs,
                              persistent=True)],
                output=lambda: y)


def _v3_configs():
    cfgs = []
    for w in (4, 8, 16):
        for pps in (64 // w, 32 // w):  # all 2048 threads of an SM resident, or half of them
            for s in (1, 2, 3):
                cfgs.append(triton.Config({"PROGS_PER_SM": pps}, num_warps=w, num_stages=s))
    return cfgs


def _v3_prune(configs, named_args, **kwargs):
    """Keep 4-64 FP32 values per thread (enough for 16-byte loads, few enough to avoid spills)."""
    if _interpreting():
        return configs[:2]  # CPU timings mean nothing: exercise the autotuner, no more
    elems = kwargs["BLOCK_M"] * kwargs["BLOCK_N"]
    kept = [c for c in configs if 4 <= elems // (32 * c.num_warps) <= 64]
    if kept:
        return kept
    best_w = min((c.num_warps for c in configs), key=lambda w: abs(elems // (32 * w) - 16))
    return [c for c in configs if c.num_warps == best_w]


# cache_results: a re-run after a failed autotune starts from the cached best config.
softmax_tile_kernel_tuned = triton.autotune(
    configs=_v3_configs(), key=["N", "BLOCK_M"], cache_results=True, do_bench=autotune_bench,
    prune_configs_by={"early_config_prune": _v3_prune},
)(softmax_tile_kernel)


def build_v3(inputs, params):
    x, y = inputs["x"], inputs["y"]
    M, N = params["M"], params["N"]
    block_n = triton.next_power_of_2(N)
    if block_n > MAX_ROW_IN_REGS:
        return _looped_plan(softmax_online_kernel, inputs, params, "v3")
    block_m = min(triton.next_power_of_2(M), max(1, V3_TILE_ELEMS // block_n))
    n_tiles = triton.cdiv(M, block_m)
    sms = num_sms()

    def grid(meta):
        return (max(1, min(n_tiles, sms * meta["PROGS_PER_SM"])),)

    def run():
        return softmax_tile_kernel_tuned[grid](x, y, M, N, x.stride(0), y.stride(0), BLOCK_M=block_m, BLOCK_N=block_n)

    def blocks():
        cfg = getattr(softmax_tile_kernel_tuned, "best_config", None)
        return grid(cfg.kwargs)[0] if cfg is not None else None

    return Plan(stages=[Stage("softmax", run, kernel=softmax_tile_kernel_tuned, grid_blocks=blocks, persistent=True)],
                output=lambda: y)

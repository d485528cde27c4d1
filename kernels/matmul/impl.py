"""Triton code of matmul (imported only by the profiling worker)."""

import triton
import triton.language as tl

from kprof_mcp.kernel import Plan, Stage
from kprof_mcp.kernel import autotune_bench


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    if GROUP_M == 1:
        # Row-major launch order: consecutive programs sweep a row of C tiles, so B is
        # re-read from DRAM by every row of programs.
        pid_m = pid // num_pid_n
        pid_n = pid % num_pid_n
    else:
        # Grouped order: GROUP_M rows of tiles are swept column by column, so the A and B
        # tiles in flight at once overlap and stay in L2.
        num_pid_in_group = GROUP_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _configs():
    cfgs = []
    for bm, bn, bk, w, s in [
        (128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 64, 8, 4), (128, 128, 64, 4, 4),
        (128, 64, 64, 4, 4), (64, 128, 64, 4, 4), (128, 128, 32, 4, 4), (64, 64, 64, 4, 5),
    ]:
        cfgs.append(triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
                                  num_warps=w, num_stages=s))
    return cfgs


# cache_results: a re-run after a failed autotune starts from the cached best config.
matmul_kernel_tuned = triton.autotune(
    configs=_configs(), key=["M", "N", "K"], cache_results=True, do_bench=autotune_bench
)(matmul_kernel)

V0_TILING = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 1, "num_warps": 8, "num_stages": 3}


def _args(inputs, params):
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    return (a, b, c, params["M"], params["N"], params["K"],
            a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))


def build_v0(inputs, params):
    args = _args(inputs, params)
    t = V0_TILING
    blocks = triton.cdiv(params["M"], t["BLOCK_M"]) * triton.cdiv(params["N"], t["BLOCK_N"])

    def run():
        return matmul_kernel[(blocks,)](*args, BLOCK_M=t["BLOCK_M"], BLOCK_N=t["BLOCK_N"], BLOCK_K=t["BLOCK_K"],
                                        GROUP_M=1, num_warps=t["num_warps"], num_stages=t["num_stages"])

    return Plan(stages=[Stage("matmul", run, kernel=matmul_kernel, tiling=dict(t), grid_blocks=blocks)],
                output=lambda: inputs["c"])


def build_v1(inputs, params):
    args = _args(inputs, params)
    M, N = params["M"], params["N"]

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

    def run():
        return matmul_kernel_tuned[grid](*args)

    def blocks():
        cfg = getattr(matmul_kernel_tuned, "best_config", None)
        return grid(cfg.kwargs)[0] if cfg is not None else None

    return Plan(stages=[Stage("matmul", run, kernel=matmul_kernel_tuned, grid_blocks=blocks)],
                output=lambda: inputs["c"])


# ----------------------------------------------------------------------------- v2: persistent

# H100 limits: 227 KiB of shared memory per block (232448 bytes, the opt-in maximum); a
# little is kept for barriers and the compiler's scratch.
SMEM_LIMIT = 232448 - 2048
# Programs of a persistent grid in the interpreter (no SMs to count): 2 makes each program
# walk several tiles on the small test shapes, as on a GPU.
CPU_NUM_SMS = 2


def _num_sms(device) -> int:
    import torch

    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return CPU_NUM_SMS


@triton.jit
def _tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_M: tl.constexpr):
    # Grouped order (as v1): GROUP_M rows of tiles are swept column by column.
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (tile_id % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def matmul_kernel_persistent(a_ptr, b_ptr, c_ptr, M, N, K,
                             stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                             GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_M * num_pid_n
    # The epilogue recomputes its tile from its own counter, as in Triton's tutorial 09 (the
    # loop pipeliner then finds no value shared by the loads' prologue and the epilogue).
    tile_id_c = start_pid - NUM_SMS
    offs_k_base = tl.arange(0, BLOCK_K)
    # Not flattened: with flatten=True, Triton 3.6 (sm_90) leaves the loads of B ([K, N],
    # N contiguous) unpipelined (one synchronous 64xBLOCK_N tile per step, seen in the TTGIR);
    # unflattened, A and B both get num_stages cp.async buffers.
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS):
        pid_m, pid_n = _tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_M)
        offs_am = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_bn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        # Rows/columns past M/N read row/column 0 instead of being masked (their results are
        # never stored), so only the K edge needs a mask and the loads stay vectorised.
        offs_am = tl.where(offs_am < M, offs_am, 0)
        offs_bn = tl.where(offs_bn < N, offs_bn, 0)
        offs_am = tl.max_contiguous(tl.multiple_of(offs_am, BLOCK_M), BLOCK_M)
        offs_bn = tl.max_contiguous(tl.multiple_of(offs_bn, BLOCK_N), BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_K + offs_k_base
            a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
            b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
            a = tl.load(a_ptrs, mask=offs_k_base[None, :] < K - ki * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k_base[:, None] < K - ki * BLOCK_K, other=0.0)
            acc = tl.dot(a, b, acc)
        tile_id_c += NUM_SMS
        pid_m, pid_n = _tile_coords(tile_id_c, num_pid_in_group, num_pid_m, GROUP_M)
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
        c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


def _cfg(bm, bn, bk, w, s, **extra):
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, **extra},
                         num_warps=w, num_stages=s)


# (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages). The large tiles are for H100 (one 8-warp CTA
# per SM; 128x256 runs two warpgroups of 64x256 wgmma); the two smallest are what the
# interpreter keeps (see _prune) and serve small shapes on a GPU.
_SMALL = ((32, 32, 32, 4, 4), (32, 64, 32, 4, 4))
_V2_TILES = ((128, 256, 64, 8, 3), (128, 256, 64, 8, 4), (256, 128, 64, 8, 3), (256, 128, 64, 8, 4),
             (128, 128, 64, 8, 4), (128, 128, 64, 4, 4), (128, 128, 64, 8, 5), (64, 128, 64, 4, 4),
             (64, 64, 64, 4, 4)) + _SMALL


def _smem_bytes(cfg, itemsize, epilogue_tile_bytes=0):
    """Pipelined A and B tiles (one buffer per stage) plus a shared-memory epilogue buffer."""
    k = cfg.kwargs
    return cfg.num_stages * (k["BLOCK_M"] * k["BLOCK_K"] + k["BLOCK_K"] * k["BLOCK_N"]) * itemsize + epilogue_tile_bytes


def _prune(epilogue):
    """early_config_prune: on a GPU, drop configs whose shared memory exceeds an H100 block
    (fp32 doubles every tile); under the interpreter keep only the small tiles (_SMALL), so
    that the tests stay quick and persistent programs walk several tiles."""

    def prune(configs, named_args, **kwargs):
        if not named_args["a_ptr"].is_cuda:
            small = {(m, n, k) for m, n, k, _, _ in _SMALL}
            return [c for c in configs if (c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.kwargs["BLOCK_K"]) in small]
        isz = named_args["a_ptr"].element_size()
        fits = [c for c in configs if _smem_bytes(c, isz, epilogue(c, isz)) <= SMEM_LIMIT]
        return fits or [min(configs, key=lambda c: _smem_bytes(c, isz, epilogue(c, isz)))]

    return prune


matmul_kernel_persistent_tuned = triton.autotune(
    configs=[_cfg(*t) for t in _V2_TILES], key=["M", "N", "K"], cache_results=True, do_bench=autotune_bench,
    prune_configs_by={"early_config_prune": _prune(lambda c, isz: 0)},
)(matmul_kernel_persistent)


def _persistent_grid(M, N, num_sms):
    def grid(meta):
        return (min(num_sms, triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])),)

    return grid


def _grid_blocks(tuned, grid):
    def blocks():
        cfg = getattr(tuned, "best_config", None)
        return grid(cfg.kwargs)[0] if cfg is not None else None

    return blocks


def build_v2(inputs, params):
    args = _args(inputs, params)
    num_sms = _num_sms(inputs["a"].device)
    grid = _persistent_grid(params["M"], params["N"], num_sms)

    def run():
        return matmul_kernel_persistent_tuned[grid](*args, NUM_SMS=num_sms)

    return Plan(stages=[Stage("matmul", run, kernel=matmul_kernel_persistent_tuned,
                              grid_blocks=_grid_blocks(matmul_kernel_persistent_tuned, grid), persistent=True)],
                output=lambda: inputs["c"])


# ----------------------------------------------------------------------------- v3/v4: TMA

@triton.jit
def matmul_kernel_tma(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr, NUM_SMS: tl.constexpr,
                      WARP_SPECIALIZE: tl.constexpr, FLATTEN: tl.constexpr):
    # Device-side tensor descriptors: tiles move by TMA (bulk async copies, out-of-bounds
    # rows/columns zero-filled on load and clipped on store), so no masks or pointer tiles.
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1],
                                       block_shape=[BLOCK_M, BLOCK_N // 2 if EPILOGUE_SUBTILE else BLOCK_N])
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_M * num_pid_n
    tile_id_c = start_pid - NUM_SMS
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=FLATTEN, warp_specialize=WARP_SPECIALIZE):
        pid_m, pid_n = _tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_M)
        offs_am = pid_m * BLOCK_M
        offs_bn = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_K
            a = a_desc.load([offs_am, offs_k])
            b = b_desc.load([offs_k, offs_bn])
            acc = tl.dot(a, b, acc)
        tile_id_c += NUM_SMS
        pid_m, pid_n = _tile_coords(tile_id_c, num_pid_in_group, num_pid_m, GROUP_M)
        offs_cm = pid_m * BLOCK_M
        offs_cn = pid_n * BLOCK_N
        if EPILOGUE_SUBTILE:
            # Two BLOCK_M x BLOCK_N/2 stores: half the shared-memory staging buffer of the
            # epilogue, which leaves room for another pipeline stage.
            acc = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
            acc0, acc1 = tl.split(acc)
            c_desc.store([offs_cm, offs_cn], acc0.to(c_ptr.dtype.element_ty))
            c_desc.store([offs_cm, offs_cn + BLOCK_N // 2], acc1.to(c_ptr.dtype.element_ty))
        else:
            c_desc.store([offs_cm, offs_cn], acc.to(c_ptr.dtype.element_ty))


def _epilogue_bytes(cfg, isz):
    k = cfg.kwargs
    return k["BLOCK_M"] * k["BLOCK_N"] * isz // (2 if k.get("EPILOGUE_SUBTILE") else 1)


# (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages, EPILOGUE_SUBTILE). bf16 shared memory, A+B
# stages + C staging: 128x256x64 s4 subtiled = 192 + 32 KiB (fits 227 KiB), s3 unsplit =
# 144 + 64 KiB; 128x128x128 s3 subtiled = 192 + 16 KiB. _prune drops what does not fit.
_V3_TILES = ((128, 256, 64, 8, 3, True), (128, 256, 64, 8, 3, False), (128, 256, 64, 8, 4, True),
             (256, 128, 64, 8, 3, True), (256, 128, 64, 8, 4, True), (128, 128, 64, 8, 4, False),
             (128, 128, 64, 4, 4, True), (128, 128, 128, 8, 3, True), (64, 128, 64, 4, 4, False),
             (64, 64, 64, 4, 4, False), (32, 32, 32, 4, 4, False), (32, 64, 32, 4, 4, True))
# Hopper warp specialisation (v4): Triton 3.6 applies it only with num_warps=4, which it
# turns into 12 warps (a TMA producer warpgroup plus two consumer warpgroups that split
# BLOCK_M, with setmaxnreg); with 8 warps it silently compiles v3's code. The tile loop runs
# unflattened and EPILOGUE_SUBTILE stays off (as in Triton's tutorial 09). Checked by
# compiling for sm_90a: 64x256 fails in ConvertTritonGPUToLLVM; 128x256x64 s4 needs 257 KiB.
# The two smallest (interpreter) tiles compile without warp specialisation.
_V4_TILES = ((128, 256, 64, 4, 3), (256, 128, 64, 4, 3), (128, 128, 64, 4, 3), (128, 128, 64, 4, 4),
             (128, 128, 64, 4, 5), (128, 128, 128, 4, 3), (64, 128, 64, 4, 4), (64, 64, 64, 4, 4)) + _SMALL

matmul_kernel_tma_tuned = triton.autotune(
    configs=[_cfg(m, n, k, w, s, EPILOGUE_SUBTILE=sub) for m, n, k, w, s, sub in _V3_TILES],
    key=["M", "N", "K"], cache_results=True, do_bench=autotune_bench,
    prune_configs_by={"early_config_prune": _prune(_epilogue_bytes)},
)(matmul_kernel_tma)

# Configs that fail to compile with warp specialisation (an experimental compiler path on
# Hopper) are recorded here and ranked last instead of aborting the whole autotune.
WS_COMPILE_FAILURES: list[str] = []


def _ws_bench(fn, quantiles=None, **kw):
    try:
        return autotune_bench(fn, quantiles=quantiles, **kw)
    except Exception as e:  # noqa: BLE001 - a compile error of one config; see the re-raises
        msg = f"{type(e).__name__}: {e}"
        if type(e).__name__ in ("OutOfResources", "PTXASError", "CompileTimeAssertionFailure"):
            raise  # the autotuner itself ranks these last
        if "Triton Error [CUDA]" in msg or "CUDA error" in msg or "illegal" in msg.lower():
            raise  # a runtime fault poisons the context: no point going on
        WS_COMPILE_FAILURES.append(msg.splitlines()[0][:300] if msg else type(e).__name__)
        inf = float("inf")
        return [inf] * len(quantiles) if quantiles else inf


matmul_kernel_tma_ws_tuned = triton.autotune(
    configs=[_cfg(m, n, k, w, s, EPILOGUE_SUBTILE=False) for m, n, k, w, s in _V4_TILES],
    key=["M", "N", "K"], cache_results=True, do_bench=_ws_bench,
    prune_configs_by={"early_config_prune": _prune(_epilogue_bytes)},
)(matmul_kernel_tma)


def tma_unusable(inputs) -> str | None:
    """Why TMA descriptors cannot address these tensors (None when they can): TMA needs a
    16-byte aligned base, 16-byte aligned row strides and a contiguous last dimension."""
    for name in ("a", "b", "c"):
        t = inputs[name]
        row_bytes = t.stride(0) * t.element_size()
        if t.stride(1) != 1:
            return f"{name} is not contiguous along its last dimension (stride {t.stride(1)})"
        if row_bytes % 16:
            return f"{name}'s row stride is {row_bytes} bytes, not a multiple of 16"
        if t.data_ptr() % 16:
            return f"{name}'s base address is not 16-byte aligned"
    return None


class _FallbackKernel:
    """v2's autotuner seen from v3's stage: its best config carries the reason for the fallback,
    so the profile's tiling shows that v2's kernel ran."""

    def __init__(self, tuned, reason):
        self._tuned, self._reason = tuned, reason

    @property
    def best_config(self):
        cfg = getattr(self._tuned, "best_config", None)
        if cfg is None:
            return None
        return triton.Config({**cfg.kwargs, "fallback": self._reason}, num_warps=cfg.num_warps,
                             num_stages=cfg.num_stages)

    def __getattr__(self, name):
        return getattr(self._tuned, name)


def _scratch_allocator(device):
    # Device-side descriptors are written by each program into global scratch memory
    # (128 bytes per program) that Triton asks this allocator for at launch.
    import torch

    def alloc(size, alignment, stream):
        return torch.empty(size, device=device, dtype=torch.int8)

    return alloc


def _with_fallback(plan, reason):
    st = plan.stages[0]
    st.kernel, st.tiling = _FallbackKernel(st.kernel, reason), {"fallback": reason}
    return plan


def _build_tma(inputs, params, tuned, warp_specialize, version):
    reason = tma_unusable(inputs)
    if reason is not None:
        return _with_fallback(build_v2(inputs, params), f"{reason}: TMA cannot address it, so {version} ran "
                                                        "v2's kernel (persistent, pointer loads)")
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    M, N, K = params["M"], params["N"], params["K"]
    num_sms = _num_sms(a.device)
    grid = _persistent_grid(M, N, num_sms)
    alloc = _scratch_allocator(a.device)

    def run():
        # Set at every launch: the allocator is a context variable (per thread / context).
        triton.set_allocator(alloc)
        return tuned[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), NUM_SMS=num_sms,
                           WARP_SPECIALIZE=warp_specialize, FLATTEN=not warp_specialize)

    return Plan(stages=[Stage("matmul", run, kernel=tuned, grid_blocks=_grid_blocks(tuned, grid), persistent=True)],
                output=lambda: inputs["c"])


def build_v3(inputs, params):
    return _build_tma(inputs, params, matmul_kernel_tma_tuned, False, "v3")


def build_v4(inputs, params):
    if tma_unusable(inputs) is None and inputs["a"].element_size() == 4:
        # TF32 wgmma wants B K-major; with B [K, N] Triton 3.6's Hopper warp specialisation
        # fails to compile every config (checked for sm_90a), so there is nothing to tune.
        return _with_fallback(build_v3(inputs, params), "float32 (TF32) has no warp-specialised build in Triton "
                                                        "3.6 on Hopper, so v4 ran v3's kernel (TMA, no warp "
                                                        "specialisation)")
    return _build_tma(inputs, params, matmul_kernel_tma_ws_tuned, True, "v4")

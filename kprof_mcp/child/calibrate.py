"""``python -m kprof_mcp.child calibrate --result FILE``: measure the peak of each execution pipe
and memory level of the GPU with microbenchmarks (``kprof device --calibrate``; the parent side is
:mod:`kprof_mcp.engine.calibrate`).

Each benchmark keeps one resource busy (:mod:`kprof_mcp.child.calibrate_kernels` for the pipes,
L2 and L1; cuBLAS through ``torch.matmul`` for the tensor cores; ``Tensor.copy_`` for DRAM) and
counts its work by hand from its source (the ``*_ops``/``*_bytes`` functions below, unit-tested).
It is warmed up, then timed ``REPS`` times with CUDA events, each timing long enough
(``REP_S``) for the SM clock to be read several times through NVML while it runs. The rate of a
pipe is its work ÷ (time × SMs × the SM clock read during that timing): thread-ops (or dense
FLOP for the tensor cores) per clock per SM, the unit of the machine table
(``kprof_mcp/machines.json``). Memory levels: bytes per clock per SM (L1), bytes per clock for
the chip (L2), bytes per second (DRAM, whose clock is not the SM's). The best timing is the peak;
the median says how steady it was. The kernels' SASS opcode counts are recorded where cuobjdump
is found, as evidence that each ran on the pipe it names.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

REPS = 7  # timings per benchmark (after warm-up)
REP_S = 0.03  # each timing runs the benchmark this long, at least: several NVML clock reads
BLOCK = 1024  # values per program of the pipe kernels (4 warps: 8 per thread per tensor)
CHAINS = 4  # independent tensors per program in the pipe kernels
UNROLL = 16  # steps per loop trip
GEMM_N = 8192  # M = N = K of the tensor-core GEMMs


# ---- the work each benchmark does, counted from its source (pure; unit-tested) ----


def pipe_ops(
    programs: int, block: int, iters: int, unroll: int = UNROLL, chains: int = CHAINS, per_step: int = 1
) -> int:
    """Thread-ops of a pipe kernel: every value of ``chains`` tensors of ``block`` values takes
    ``per_step`` ops per step, ``iters × unroll`` steps, in each of ``programs`` programs."""
    return programs * block * chains * iters * unroll * per_step


def gemm_flops(m: int, n: int, k: int) -> int:
    """Dense FLOP of an (m×k)·(k×n) product: one multiply and one add per term."""
    return 2 * m * n * k


def copy_bytes(elements: int, elem_bytes: int) -> int:
    """DRAM bytes of a device-to-device copy: every byte read once and written once."""
    return 2 * elements * elem_bytes


def reread_bytes(programs: int, iters: int, block: int, elem_bytes: int = 4) -> int:
    """Bytes loaded by :func:`calibrate_kernels.reread_kernel`: one block per program per trip."""
    return programs * iters * block * elem_bytes


def per_sm_per_clock(work: float, seconds: float, sm_count: int, mhz: float) -> float:
    """Work per clock per SM: ``work`` done in ``seconds`` by ``sm_count`` SMs at ``mhz``."""
    return work / (seconds * sm_count * mhz * 1e6)


def per_clock(work: float, seconds: float, mhz: float) -> float:
    """Work per clock for the chip (L2's unit)."""
    return work / (seconds * mhz * 1e6)


# ---- timing ----


class ClockSampler:
    """Reads the SM clock (NVML) every few milliseconds on a thread while ``active``."""

    def __init__(self, read: Callable[[], float | None] | None):
        self._read, self._samples, self._on = read, [], threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="kprof-clock") if read else None
        if self._thread:
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            if self._on.wait(0.05):
                v = self._read()
                if v:
                    self._samples.append(v)
                time.sleep(0.002)

    def window(self, run: Callable[[], Any]) -> tuple[Any, list[float]]:
        """Run ``run()`` with sampling on; its result and the clocks read meanwhile (MHz)."""
        self._samples = []
        self._on.set()
        try:
            return run(), list(self._samples)
        finally:
            self._on.clear()

    def close(self) -> None:
        self._stop.set()


@dataclass
class Timed:
    seconds: list[float] = field(default_factory=list)  # per launch, one entry per timing
    mhz: list[float | None] = field(default_factory=list)  # median SM clock read during each timing


def time_it(torch: Any, launch: Callable[[], Any], sampler: ClockSampler, reps: int = REPS) -> Timed:
    """Warm up, size a timing to ``REP_S``, then ``reps`` timings of ``n`` launches (CUDA events)."""
    launch()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    launch()
    end.record()
    end.synchronize()
    n = max(1, min(10000, int(REP_S / max(start.elapsed_time(end) * 1e-3, 1e-7))))
    out = Timed()
    for _ in range(reps):

        def run() -> float:
            start.record()
            for _i in range(n):
                launch()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) * 1e-3 / n

        secs, clocks = sampler.window(run)
        out.seconds.append(secs)
        out.mhz.append(statistics.median(clocks) if clocks else None)
    return out


def rates(
    work: float, t: Timed, to_rate: Callable[[float, float], float], fallback_mhz: float
) -> list[float]:
    return [to_rate(work / s, m or fallback_mhz) for s, m in zip(t.seconds, t.mhz)]


# ---- the benchmarks ----


@dataclass
class Ctx:
    torch: Any
    sm_count: int
    sampler: ClockSampler
    fallback_mhz: float  # the clock nvidia-smi reported, when NVML gives none
    sass: Callable[[Any], dict[str, int] | None]


def _entry(
    ctx: Ctx, work: float, t: Timed, kind: str, unit: str, method: str, sass: Any = None
) -> dict[str, Any]:
    if kind == "sm":
        r = rates(work, t, lambda w, m: per_sm_per_clock(w, 1.0, ctx.sm_count, m), ctx.fallback_mhz)
    elif kind == "chip":
        r = rates(work, t, lambda w, m: per_clock(w, 1.0, m), ctx.fallback_mhz)
    else:  # bytes per second
        r = [work / s for s in t.seconds]
    clocks = [m for m in t.mhz if m]
    e: dict[str, Any] = {
        "rate": max(r),
        "unit": unit,
        "best": max(r),
        "median": statistics.median(r),
        "work": work,
        "seconds": min(t.seconds),
        "sm_clock_mhz": round(statistics.median(clocks), 1) if clocks else ctx.fallback_mhz,
        "method": method,
    }
    if kind == "bytes_per_s":
        e["bytes_per_s"] = e["rate"]
    if sass:
        e["sass_opcodes"] = sass
    return e


def _pipe(ctx: Ctx, name: str) -> dict[str, Any]:
    torch = ctx.torch
    from . import calibrate_kernels as ck

    programs, iters = ctx.sm_count * 64, 256
    out = torch.empty(
        programs * BLOCK, device="cuda", dtype=torch.float64 if name == "fp64" else torch.float32
    )
    if name in ("fma", "fp64"):
        k = ck.fma_kernel
        args, kw, per_step = (
            (out, 0.9999, 1e-4, iters),
            dict(BLOCK=BLOCK, UNROLL=UNROLL, FP64=name == "fp64"),
            1,
        )
        unit = f"{'fp64' if name == 'fp64' else 'fp32'} FMA thread-ops ({'DFMA' if name == 'fp64' else 'FFMA'} = 1)"
    elif name == "fp16":
        out = out.view(torch.int32)
        half2 = torch.tensor([0.9995, 0.0005], dtype=torch.float16).view(torch.int16).to(torch.int32) & 0xFFFF
        a, b = (int(v) | (int(v) << 16) for v in half2.tolist())
        a, b = (v - (1 << 32) if v >= 1 << 31 else v for v in (a, b))
        k, args, kw, per_step = ck.hfma2_kernel, (out, a, b, iters), dict(BLOCK=BLOCK, UNROLL=UNROLL), 2
        unit = "fp16 FMA thread-ops (HFMA2 counts 2)"
    elif name == "xu":
        k, args, kw, per_step = ck.mufu_kernel, (out, iters // 4), dict(BLOCK=BLOCK, UNROLL=UNROLL), 1
        iters //= 4
        unit = "MUFU thread-ops (ex2.approx.ftz.f32)"
    else:  # alu
        out = out.view(torch.int32)
        k, args, kw, per_step = ck.alu_kernel, (out, iters), dict(BLOCK=BLOCK, UNROLL=UNROLL), 2
        unit = "32-bit integer ALU thread-ops (SHF funnel shift + LOP3 per step)"
    compiled = k[(programs,)](*args, num_warps=4, **kw)
    t = time_it(torch, lambda: k[(programs,)](*args, num_warps=4, **kw), ctx.sampler)
    work = pipe_ops(programs, BLOCK, iters, per_step=per_step)
    method = (
        f"Triton {k.fn.__name__}: {programs} programs x {BLOCK} values x {CHAINS} chains x {iters} x {UNROLL} "
        f"steps x {per_step} op(s); CUDA events, best of {REPS}"
    )
    return _entry(ctx, work, t, "sm", unit, method, ctx.sass(compiled))


def _gemm(ctx: Ctx, name: str) -> dict[str, Any]:
    torch = ctx.torch
    n = GEMM_N
    if name == "tensor_fp8":
        if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
            return {"skipped": "this torch has no float8_e4m3fn/_scaled_mm"}
        a = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn).t()  # column-major, as cuBLASLt wants
        one = torch.tensor(1.0, device="cuda")

        def launch() -> Any:
            return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

        how = "torch._scaled_mm e4m3 x e4m3 -> bf16"
    elif name == "tensor_int8":
        a = torch.randint(-8, 8, (n, n), device="cuda", dtype=torch.int8)
        b = torch.randint(-8, 8, (n, n), device="cuda", dtype=torch.int8)

        def launch() -> Any:
            return torch._int_mm(a, b)

        how = "torch._int_mm int8 x int8 -> int32"
    else:
        dtype = {
            "tensor_bf16": torch.bfloat16,
            "tensor_fp16": torch.float16,
            "tensor_tf32": torch.float32,
            "tensor_fp64": torch.float64,
        }[name]
        torch.backends.cuda.matmul.allow_tf32 = name == "tensor_tf32"
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)

        def launch() -> Any:
            return torch.matmul(a, b)

        how = f"torch.matmul {dtype} (cuBLAS{', allow_tf32' if name == 'tensor_tf32' else ''})"
    try:
        t = time_it(torch, launch, ctx.sampler)
    except (RuntimeError, NotImplementedError) as e:
        return {"skipped": f"{how}: {str(e).splitlines()[0][:200]}"}
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
    unit = "dense int ops (2 per multiply-add)" if name == "tensor_int8" else "dense FLOP (2 per FMA)"
    return _entry(ctx, gemm_flops(n, n, n), t, "sm", unit, f"{how}, {n}^3; CUDA events, best of {REPS}")


def _blocks(ctx: Ctx) -> dict[str, Any]:
    """The block scheduler: 2^22 one-warp blocks that do nothing, dispatched as fast as the chip can."""
    from . import calibrate_kernels as ck

    out, grid = ctx.torch.zeros(1, device="cuda", dtype=ctx.torch.int32), 1 << 22
    t = time_it(ctx.torch, lambda: ck.empty_kernel[(grid,)](out, -1, num_warps=1), ctx.sampler)
    method = f"Triton empty_kernel: {grid} one-warp blocks that do nothing; CUDA events, best of {REPS}"
    return _entry(ctx, float(grid), t, "chip", "thread blocks dispatched per SM clock (chip)", method)


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _memory(ctx: Ctx, name: str, l2_bytes: int | None) -> dict[str, Any]:
    torch = ctx.torch
    if name == "dram":
        elems = 1 << 28  # 1 GiB of fp32 each way: far beyond any L2
        src = torch.ones(elems, device="cuda")
        dst = torch.empty_like(src)
        t = time_it(torch, lambda: dst.copy_(src), ctx.sampler)
        del src, dst
        return _entry(
            ctx,
            copy_bytes(elems, 4),
            t,
            "bytes_per_s",
            "bytes/s",
            "Tensor.copy_ of 1 GiB fp32 (read + write counted); CUDA events, best of 7",
        )
    if name == "dram_sector":
        # Scattered traffic: one random 4-byte element per index from a 4 GiB buffer, gathered by a Triton
        # kernel: what an uncoalesced or gathering kernel asks of DRAM. Counted in the bytes DRAM moves, as
        # Nsight Compute's dram% counts them: a 64-byte access per element (measured with ncu on an H100:
        # 72 bytes read per index, docs/evidence/h100-calibrate/dram_sector_ncu.log), the 8-byte index and
        # the 4-byte element written. The throughput at which such traffic saturates DRAM bounds over-fetch.
        from . import calibrate_kernels as ck

        rows, n, block = 1 << 30, 1 << 24, 128
        src = torch.ones(rows, 1, device="cuda")
        idx = torch.randint(0, rows, (n,), device="cuda")
        out = torch.empty(n, 1, device="cuda")
        grid = (triton_cdiv(n, block),)

        def gather() -> Any:
            return ck.gather_rows_kernel[grid](src, idx, out, n, ROW=1, BLOCK=block, num_warps=4)

        compiled = gather()
        t = time_it(torch, gather, ctx.sampler)
        del src, idx, out
        return _entry(
            ctx,
            n * (64 + 8 + 4),
            t,
            "bytes_per_s",
            "bytes/s as DRAM moves them (a 64-byte access per random 4-byte element + index + element written)",
            f"Triton gather_rows_kernel: {n} random 4-byte elements of a 4 GiB fp32 buffer; CUDA events, best of {REPS}",
            ctx.sass(compiled),
        )
    if name == "shared":
        return {
            "skipped": "no shared-memory bandwidth benchmark: Triton gives no direct shared-memory load (its tl.dot staging is not a bandwidth test)"
        }
    from . import calibrate_kernels as ck

    block = 2048
    if name == "l2":
        buf = (
            l2_bytes or 40 << 20
        ) // 4  # a quarter of L2: hits even when lines are homed in the far partition
        chunks = max(1, buf // (block * 4))
        programs, iters, cache, local, stride = ctx.sm_count * 16, 512, ".cg", False, ctx.sm_count * 16
        unit, kind = "bytes per clock (chip)", "chip"
        how = f"re-read of {chunks * block * 4 >> 20} MiB (L2/4) with ld.global.cg (L2 only)"
    else:  # l1
        chunks, programs, iters, cache, local, stride = 2, ctx.sm_count * 16, 4096, ".ca", True, 1
        unit, kind = "bytes per clock per SM", "sm"
        how = "each program re-reads its own 16 KiB with ld.global.ca (L1 hits)"
    src = torch.ones(max(chunks, programs * chunks if local else chunks) * block, device="cuda")
    out = torch.empty(programs, device="cuda")
    args = (src, out, iters, chunks, stride)
    kw = dict(BLOCK=block, CACHE=cache, LOCAL=local)
    compiled = ck.reread_kernel[(programs,)](*args, num_warps=4, **kw)
    t = time_it(torch, lambda: ck.reread_kernel[(programs,)](*args, num_warps=4, **kw), ctx.sampler)
    return _entry(
        ctx,
        reread_bytes(programs, iters, block),
        t,
        kind,
        unit,
        f"Triton reread_kernel: {how}; {programs} programs x {iters} blocks of {block} fp32; CUDA events, best of {REPS}",
        ctx.sass(compiled),
    )


PIPES = ("fma", "fp64", "fp16", "alu", "xu")
# tensor_int8 (torch._int_mm) is left out of the default run: on an H100 it reached 6.5 % of the
# datasheet rate (docs/evidence/h100-calibrate), torch's int8 path and no peak; `--only` still runs it.
TENSORS = ("tensor_fp64", "tensor_tf32", "tensor_fp16", "tensor_bf16", "tensor_fp8")
OPTIONAL = ("tensor_int8",)
MEMORY = ("dram", "dram_sector", "l2", "l1", "shared")
SCHEDULER = ("blocks",)


def _sass_counter() -> Callable[[Any], dict[str, int] | None]:
    """A compiled Triton kernel's SASS opcodes, the 12 most frequent (None without cuobjdump)."""
    from ..parsers.sass import instruction_mix
    from ..tools.sass import sass_listing

    def count(compiled: Any) -> dict[str, int] | None:
        cubin = getattr(compiled, "asm", {}).get("cubin")
        if not cubin:
            return None
        with tempfile.TemporaryDirectory(prefix="kprof-cal-") as d:
            p = Path(d) / "k.cubin"
            p.write_bytes(cubin)
            text = sass_listing(p)
        if not text:
            return None
        ops = instruction_mix(text).opcodes
        return dict(sorted(ops.items(), key=lambda kv: -kv[1])[:12])

    return count


def run(
    only: list[str] | None = None, progress: Callable[[float, str], None] | None = None
) -> dict[str, Any]:
    """Every benchmark (or those named in ``only``) on CUDA device 0; the calibration document."""
    import torch

    from ..devices import try_match_device
    from ..tools import nvidia_smi, nvml

    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA GPU is usable here (torch.cuda.is_available() is False)")
    props = torch.cuda.get_device_properties(0)
    spec, _ = try_match_device(props.name)
    smi = nvidia_smi.smi_id(0)
    before = nvidia_smi.clocks(0)
    try:
        fallback = float(before.get("clocks.sm") or 0) or float(before.get("clocks.max.sm") or 0)
    except ValueError:
        fallback = 0.0
    sampler = ClockSampler(nvml.sm_clock_reader(smi))
    ctx = Ctx(torch, props.multi_processor_count, sampler, fallback or 1.0, _sass_counter())
    names = [
        n
        for n in (*PIPES, *TENSORS, *OPTIONAL, *MEMORY, *SCHEDULER)
        if (n in only if only else n not in OPTIONAL)
    ]
    measured: dict[str, Any] = {}
    try:
        for i, name in enumerate(names):
            if progress:
                progress(0.05 + 0.9 * i / max(1, len(names)), f"calibrating {name}")
            try:
                if name in PIPES:
                    measured[name] = _pipe(ctx, name)
                elif name in TENSORS or name in OPTIONAL:
                    measured[name] = _gemm(ctx, name)
                elif name in SCHEDULER:
                    measured[name] = _blocks(ctx)
                else:
                    measured[name] = _memory(ctx, name, spec.l2_bytes if spec else None)
            except Exception as e:  # noqa: BLE001 — one benchmark failing leaves the others standing
                measured[name] = {
                    "skipped": f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
                }
            torch.cuda.empty_cache()
    finally:
        sampler.close()
    clocks = [m["sm_clock_mhz"] for m in measured.values() if m.get("sm_clock_mhz")]
    import triton

    return {
        "device": props.name,
        "device_key": spec.key if spec else None,
        "arch": f"sm_{props.major}{props.minor}",
        "sm_count": props.multi_processor_count,
        "sm_clock_mhz": round(statistics.median(clocks), 1) if clocks else fallback,
        "clock_source": "NVML SM clock read during each timing"
        if sampler._thread
        else "nvidia-smi clocks.sm before the run",
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "versions": {
            "torch": torch.__version__,
            "triton": triton.__version__,
            "cuda": torch.version.cuda,
            "driver": before.get("driver_version"),
        },
        "clocks_before": before,
        "clocks_after": nvidia_smi.clocks(0),
        "measured": measured,
    }


def main(argv: list[str]) -> int:
    from ..protocol import progress

    ap = argparse.ArgumentParser(prog="python -m kprof_mcp.child calibrate")
    ap.add_argument("--result", required=True)
    ap.add_argument("--only", default="", help="comma-separated benchmark names (default: all)")
    a = ap.parse_args(argv)
    try:
        doc = {"status": "ok", "calibration": run([n for n in a.only.split(",") if n] or None, progress)}
    except Exception as e:  # noqa: BLE001 — said to the parent, which raises it as a KprofError
        doc = {"status": "error", "message": f"{type(e).__name__}: {e}"}
    tmp = Path(a.result).with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    tmp.replace(a.result)
    return 0 if doc["status"] == "ok" else 1

"""What the machine model (``analysis.diagnosis.limiter``) needs of a stage besides its counters: the
architecture's machine (``kprof_mcp.machines``), the stage's dtype, kernels, elements, the clock it ran at, its theoretical occupancy, the launch floor and the speed-of-light time of
the best legal mix of pipes. Pure: a :class:`~kprof_mcp.models.ProfileResult` in, numbers out."""

from __future__ import annotations

import re
from typing import Any

from .. import machines
from ..devices import DeviceSpec, load_devices
from ..machines import Machine
from ..models import ProfileResult, ResultWarning, StageResult
from .diagnosis.limiter import DOT_NAMES
from .diagnosis.static_mix import Listing

_ELEM_BYTES = {
    "float64": 8,
    "float32": 4,
    "tfloat32": 4,
    "bfloat16": 2,
    "float16": 2,
    "float8": 1,
    "int8": 1,
    "int32": 4,
}


def elem_bytes(dtype: str | None) -> int | None:
    return _ELEM_BYTES.get(dtype or "")


def _spec(key: str | None) -> DeviceSpec | None:
    return next((d for d in load_devices() if d.key == key), None) if key else None


def arch_of(result: ProfileResult) -> str | None:
    """``sm_90`` from the device's compute capability (or its devices.json row)."""
    cc = result.device.compute_capability
    if cc and "." in cc:
        major, minor = cc.split(".", 1)
        return f"sm_{major}{minor}"
    spec = _spec(result.device.spec_key)
    return spec.arch if spec else None


def machine_for(result: ProfileResult) -> Machine | None:
    """The machine the result ran on (None: CPU, or an architecture the table does not know)."""
    if result.device.kind != "cuda":
        return None
    return machines.load(arch_of(result), result.device.spec_key)


def kernel_names(s: StageResult) -> tuple[str, ...]:
    """The stage's kernels' names, each once: Nsight Compute's, CUPTI's, the compiled kernel's."""
    names = [*s.ncu_kernels, *(k.name for k in s.kernel_times)]
    if s.resources and s.resources.kernel_name:
        names.append(s.resources.kernel_name)
    return tuple(dict.fromkeys(names))


# Words in a GEMM library kernel's name that say it runs on the FMA pipes, not the tensor cores: CUTLASS's
# and cuBLAS's SIMT kernels (``cutlass_80_simt_sgemm_...``), cuBLAS's and cuDNN's xmma FFMA kernels
# (``..._ffma_aligna4...``): what an fp32 GEMM or convolution runs with TF32 off (H200, torch 2.11:
# docs/evidence/machine-model/kernel_names-h200-2026-11-26.txt).
SIMT_WORDS = ("simt", "_ffma_")


def dot_on_fma_pipes(s: StageResult, result: ProfileResult | None) -> StageResult:
    """The stage as it ran when its model says tensor cores but every GEMM kernel of the stage is a SIMT
    one (:data:`SIMT_WORDS`): its math ran on the FMA pipes, so its utilisation is of the FP32 peak and
    the machine model's move of the FMA pipe's dot products to the tensor cores applies; unchanged
    otherwise (counters, where measured, say where the math ran)."""
    if not s.tensor_cores:
        return s
    dots = [n.lower() for n in kernel_names(s) if any(k in n.lower() for k in DOT_NAMES)]
    if not dots or not all(any(w in n for w in SIMT_WORDS) for n in dots):
        return s
    spec = _spec(result.device.spec_key) if result is not None else None
    peak = spec.peak_flops_per_s(s.dtype, False) if spec is not None else None
    return s.model_copy(update={"tensor_cores": False, "peak_flops_per_s": peak or s.peak_flops_per_s})


def _mma_evidence(s: StageResult) -> str | None:
    """What says the stage's kernels ran matrix instructions on the tensor cores: the compiled kernel's
    SASS has them (and, where counters were read, they executed), or, with no SASS listing (a library's
    kernels), the counters' MMA instructions in a kernel named as a GEMM's. Counters alone are not
    evidence: Hopper's HMMA count is non-zero on elementwise bf16 kernels (1 per ~1,000 elements,
    recorded). None: no evidence."""
    a = s.accounting or {}
    # HMMA counts Hopper's warpgroup MMAs too: the largest of the three, not their sum.
    n = max((a.get(k) or 0.0 for k in ("hmma_inst", "gmma_inst", "dmma_inst")), default=0.0)
    ran = f"{n:.4g} MMA instructions executed (counters)" if n > 0 else None
    if s.counters_measured and a and not ran:
        return None
    mix = (s.resources.sass_mix if s.resources else None) or {}
    if mix:
        static = mix.get("tensor_core", 0)
        return (ran or f"{static} tensor-core instructions in its SASS") if static else None
    return ran if ran and any(k in name.lower() for name in kernel_names(s) for k in DOT_NAMES) else None


def tensor_as_ran(s: StageResult, result: ProfileResult | None) -> tuple[StageResult, str | None]:
    """The stage as it ran when its model says FP32 SIMT (``tensor_cores`` not set, as a package or a
    command's model may leave it) but its kernels ran matrix instructions on the tensor cores: its
    FLOPs are a share of the tensor peak at its dtype (TF32 for fp32), not of the FMA pipes'. The model
    is what the author declared; the counters and the SASS say where the math ran, and they decide.
    → (the stage, why it changed) or (the stage unchanged, None)."""
    if s.tensor_cores or not s.has_model or not s.flops:
        return s, None
    why = _mma_evidence(s)
    spec = _spec(result.device.spec_key) if result is not None else None
    peak = spec.peak_flops_per_s(s.dtype, True) if spec is not None and why else None
    if not why or not peak:
        return s, None
    note = (
        f"stage {s.name}'s model says FP32 SIMT (tensor_cores not set) but its kernels ran on the tensor "
        f"cores ({why}): its FLOPs are read against the {spec.peak_key(s.dtype, True)} tensor peak; set "
        "tensor_cores in its model to say so"
    )
    return s.model_copy(update={"tensor_cores": True, "peak_flops_per_s": peak}), note


def as_ran(result: ProfileResult) -> ProfileResult:
    """The result with each stage's pipe as its kernels ran it (:func:`tensor_as_ran`), and a ``matching``
    warning for each stage changed; the result itself where none is. Idempotent."""
    stages, notes = [], []
    for s in result.stages:
        s2, note = tensor_as_ran(s, result)
        stages.append(s2)
        if note:
            notes.append(ResultWarning(kind="matching", message=note, stage=s.name))
    if not notes:
        return result
    return result.model_copy(update={"stages": stages, "warnings": [*result.warnings, *notes]})


def _looks_like_dot(s: StageResult) -> bool:
    """The stage's model or a kernel's name says its work is dot products (the counters' evidence is
    weighed by ``limiter.dot_work``)."""
    return s.tensor_cores or any(k in n.lower() for n in kernel_names(s) for k in DOT_NAMES)


def best_sol_ns(s: StageResult, spec: DeviceSpec | None, clock_ratio: float) -> float | None:
    """The speed of light of the stage's work on the best pipes that may legally do it: a dot on the
    tensor cores at its dtype (TF32 for fp32), fp64 elementwise math at the FP32 rate (when fp32
    accuracy is enough), anything else at its own pipe; the model's bytes at the DRAM peak; never
    under the launch floor. None without a FLOP/byte model or a device row."""
    if spec is None or not s.has_model or not s.peak_bytes_per_s:
        return None
    dot = _looks_like_dot(s)
    peaks = [spec.peak_flops_per_s(s.dtype, dot), s.peak_flops_per_s]
    if s.dtype == "float64":
        peaks.append(spec.peak_flops_per_s("float32", dot))
    peak = max((p for p in peaks if p), default=None)
    t_math = s.flops / (peak * clock_ratio) if peak else 0.0
    t_mem = s.bytes_model / s.peak_bytes_per_s
    launches = sum(k.launches_per_run for k in s.kernel_times) or 1.0
    return max(1e9 * max(t_math, t_mem), (s.min_kernel_ns or 0.0) * launches)


def model_inputs(
    s: StageResult, result: ProfileResult | None, machine: Machine | None, clock_ratio: float
) -> dict[str, Any]:
    """The machine model's fields of :class:`~kprof_mcp.analysis.diagnosis.Metrics` for one stage."""
    spec = _spec(result.device.spec_key) if result is not None else None
    eb = elem_bytes(s.dtype)
    launches = sum(k.launches_per_run for k in s.kernel_times) or 1.0
    return dict(
        machine=machine,
        tensor_work=s.tensor_cores,
        dtype=s.dtype,
        kernel_names=kernel_names(s),
        elements=s.bytes_model / eb if eb and s.bytes_model else None,
        bytes_model=s.bytes_model or None,
        sm_clock_hz=s.sm_clock_hz,
        clock_hz=sm_clock_hz(s, result, spec),
        theoretical_occupancy_pct=s.theoretical_occupancy_pct,
        floor_ns=(s.min_kernel_ns or 0.0) * launches or None,
        best_sol_ns=best_sol_ns(s, spec, clock_ratio),
        ir_ops=tuple(s.resources.ir_ops or ()) if s.resources else (),
        dram_sector_pct=_sector_pct(machine, s),
        dram_peak_bps=s.peak_bytes_per_s or None,
        listing=listing(s, result, machine, spec),
        copy_share=copy_share(s, result),
        wide_share=wide_share(s, result),
        library_gemm=library_gemm(s, result),
        command_no_counters=bool(result is not None and result.command) and not s.counters_measured,
        top_kernel=(top := top_kernel(s, result)),
        top_activity=top_activity(s, result, top),
    )


def top_kernel(s: StageResult, result: ProfileResult | None = None) -> tuple[str, float] | None:
    """The kernel that takes most of the stage's kernel time (:func:`_stage_kernel_times`), and its share
    of it. None without kernel times."""
    rows = _stage_kernel_times(s, result)
    total = sum(t for _, t in rows)
    if total <= 0:
        return None
    name, t = max(rows, key=lambda r: r[1])
    return name, t / total


def top_activity(
    s: StageResult, result: ProfileResult | None, top: tuple[str, float] | None = None
) -> dict[str, float] | None:
    """What the GPU's units did while the stage's longest kernel (``top``: :func:`top_kernel`'s, found here when
    not given) ran: its kernel summary row's GPU metrics samples (parsers/nsys_metrics.py: DRAM read and write,
    SM issue, warps in flight, % of peak); None without a timeline recorded with them."""
    top = top or top_kernel(s, result)
    summary = ((result.timeline or {}).get("kernel_summary") or []) if result is not None else []
    row = next((k for k in summary if top is not None and k.get("name") == top[0]), None)
    return dict(row["activity"]) if row is not None and row.get("activity") else None


# Names of GEMM kernels from the vendor libraries (cuBLAS's nvjet and xmma kernels, CUTLASS's, cuBLAS's
# older ``ampere_*gemm*``): kernels chosen per shape by a library tuned to run near the tensor roof.
LIBRARY_GEMM_WORDS = ("nvjet", "xmma", "cutlass", "cublas", "s16816gemm", "s1688gemm")


def library_gemm(s: StageResult, result: ProfileResult | None) -> tuple[float, float] | None:
    """(share of the stage's kernel time in vendor-library GEMM kernels, their mean time per launch in ns),
    from the run's kernel summary (nsys: total and instances per name); None without a summary or such a
    kernel."""
    summary = ((result.timeline or {}).get("kernel_summary") or []) if result is not None else []
    names = set(s.ncu_kernels)
    rows = [k for k in summary if k.get("name") in names and k.get("total_ns")]
    total = sum(float(k["total_ns"]) for k in rows)
    gemm = [k for k in rows if any(w in str(k["name"]).lower() for w in LIBRARY_GEMM_WORDS)]
    launches = sum(float(k.get("instances") or 0) for k in gemm)
    if not total or not gemm or not launches:
        return None
    t = sum(float(k["total_ns"]) for k in gemm)
    return t / total, t / launches


# Kernels that only move data (PyTorch's copy/transpose kernels: ``.contiguous()``, ``.to()``, ``copy_``; its
# cat/stack kernel): a layout or dtype round trip, or a concatenated copy, is work a fused kernel does not do.
COPY_WORDS = ("direct_copy_kernel", "copy_kernel", "transpose", "CatArrayBatchedCopy")


def _stage_kernel_times(s: StageResult, result: ProfileResult | None) -> list[tuple[str, float]]:
    """(name, time) of each of the stage's kernels: a timeline's kernel summary over the stage's kernels
    (nsys), else CUPTI's per-kernel times of the timed runs (event mode); empty when neither exists."""
    summary = ((result.timeline or {}).get("kernel_summary") or []) if result is not None else []
    names = set(s.ncu_kernels)
    rows = [
        (str(k["name"]), float(k["total_ns"]))
        for k in summary
        if k.get("name") in names and k.get("total_ns")
    ]
    return rows or [(k.name, k.total_median_ns) for k in s.kernel_times if k.total_median_ns]


def copy_share(s: StageResult, result: ProfileResult | None) -> float | None:
    """The share of a timeline stage's kernel time in kernels that only copy data (their names,
    :data:`COPY_WORDS`), from the run's kernel summary over the stage's kernels; None without a
    timeline, or when the stage has no copy kernel or only copies."""
    summary = ((result.timeline or {}).get("kernel_summary") or []) if result is not None else []
    names = set(s.ncu_kernels)
    rows = [k for k in summary if k.get("name") in names and k.get("total_ns")]
    total = sum(float(k["total_ns"]) for k in rows)
    copies = sum(float(k["total_ns"]) for k in rows if any(w in str(k["name"]) for w in COPY_WORDS))
    return copies / total if total and 0 < copies < total else None


# The element type a kernel's name carries first among its template arguments (PyTorch's elementwise,
# reduction and copy kernels, cuFFT's, CUTLASS's), as (real type, bytes of the real part).
_TYPE_RE = re.compile(
    r"c10::complex<double>|c10::complex<float>|\bdouble\b|\bfloat\b|c10::BFloat16|c10::Half|__nv_bfloat16|__half\b"
)
_REAL_BYTES = {
    "c10::complex<double>": 8,
    "c10::complex<float>": 4,
    "double": 8,
    "float": 4,
    "c10::BFloat16": 2,
    "c10::Half": 2,
    "__nv_bfloat16": 2,
    "__half": 2,
}


def kernel_real_bytes(name: str) -> int | None:
    """Bytes of the real element type a kernel's name says it works on (``c10::complex<double>`` → 8),
    from the first type among its template arguments; None when the name carries none (Triton, cuBLAS)."""
    m = _TYPE_RE.search(name)
    if m is None:
        return None
    return _REAL_BYTES.get(m.group(0))


def wide_share(s: StageResult, result: ProfileResult | None) -> tuple[float, int] | None:
    """Float64 work in a stage whose model is narrower (float32, bf16, fp16): the share of the stage's
    kernel time that computing those kernels in float32 removes, and how many kernels they are. Their names
    say ``double`` (or ``complex<double>``): type promotion by a float64 operand (a numpy array, a Python
    list turned into a float64 tensor). Float32 moves half the bytes, and every elementwise, FFT and copy
    kernel of an eager pipeline is memory-bound, so each such kernel's time halves (at least: its fp64
    math runs on the FP32 pipes instead, twice as fast or more); the others keep their time. None without
    per-kernel times, a model dtype narrower than float64, or such a kernel."""
    narrow = elem_bytes(s.dtype)
    if not narrow or narrow >= 8:
        return None
    rows = _stage_kernel_times(s, result)
    total = sum(t for _, t in rows)
    wide = [(n, t) for n, t in rows if kernel_real_bytes(n) == 8]
    if not total or not wide:
        return None
    return sum(t * (1.0 - 4.0 / 8.0) for _, t in wide) / total, len(wide)


def sm_clock_hz(s: StageResult, result: ProfileResult | None, spec: DeviceSpec | None) -> float | None:
    """The SM clock the stage ran at: measured (Nsight Compute), else the one kprof locked, else the
    device's maximum (event mode runs at whatever boost gives), else the clock its datasheet FP32 peak
    implies (peak / (SMs x 256 FLOP per clock per SM))."""
    if s.sm_clock_hz:
        return s.sm_clock_hz
    dev = result.device if result is not None else None
    if dev is not None and dev.sm_clock_lock_mhz:
        return dev.sm_clock_lock_mhz * 1e6
    try:
        return float(dev.clocks_before.get("clocks.max.sm")) * 1e6
    except (AttributeError, TypeError, ValueError):
        pass
    fp32 = spec.peak_tflops.get("float32") if spec is not None else None
    return fp32 * 1e12 / (spec.sm_count * 256.0) if fp32 and spec.sm_count else None


def listing(
    s: StageResult, result: ProfileResult | None, machine: Machine | None, spec: DeviceSpec | None
) -> Listing | None:
    """What the static model (``diagnosis.static_mix``) reads of the stage's compiled kernel: its SASS
    mix, the clock, the element size and the memory levels' bytes per clock per SM."""
    res = s.resources
    if res is None or not res.sass_mix or machine is None:
        return None
    clock = sm_clock_hz(s, result, spec)
    sms = s.sm_count or (spec.sm_count if spec is not None else None)
    per_sm_clock = clock * sms if clock and sms else None
    l2 = machine.rate("l2")
    return Listing(
        classes=dict(res.sass_mix),
        loops=dict(res.sass_loop_mix) if res.sass_loop_mix is not None else None,
        clock_hz=clock,
        elem_bytes=float(elem_bytes(s.dtype) or 4),
        dram_per_clock=s.peak_bytes_per_s / per_sm_clock if s.peak_bytes_per_s and per_sm_clock else None,
        l2_per_clock=l2 / sms if l2 and sms else None,
        shared_per_clock=machine.rate("shared") or 128.0,
        flops=s.flops or 0.0,
        warps=res.num_warps or None,
    )


def _sector_pct(machine: Machine | None, s: StageResult) -> float | None:
    """The measured scattered-sector DRAM bandwidth (``kprof device --calibrate``), % of the peak."""
    r = machine.levels.get("dram_sector") if machine is not None else None
    if r is None or not r.rate or not s.peak_bytes_per_s:
        return None
    return min(100.0, 100.0 * r.rate / s.peak_bytes_per_s)


def _replay(result) -> dict:
    """A command's recorded step replayed (``timeline.idle.replay``: kprof_mcp.analysis.replay.gains), or {}."""
    return ((result.timeline or {}).get("idle") or {}).get("replay") or {}


def host_floor_share(result) -> float | None:
    """The most of a one-stage command's step that faster kernels can save (the bound of generic advice):
    its recorded trace replayed with every GPU operation at its floor (``idle["replay"]["gpu_free_ns"]``,
    :func:`kprof_mcp.analysis.replay.transforms.free_gpu`) is the host's own step, which no kernel-side
    change can beat: 1 − that / the recorded step. None where there is no such replay (kernels profiled
    alone, several stages sharing the window)."""
    if result is None or not result.command or len(result.stages) != 1:
        return None
    rep = _replay(result)
    free, recorded = rep.get("gpu_free_ns"), rep.get("base_ns") or rep.get("recorded_ns")
    if not free or not recorded:
        return None
    return max(0.0, 1.0 - float(free) / float(recorded))


def host_method_share(result) -> float | None:
    """:func:`host_floor_share` for a costlier method's what-if (a command stage's kernels far over its model):
    the method's ops go, and with them their host time above the lean eager op's cost in this process
    (``op_floor_ns`` against ``host_per_launch_ns``, :mod:`kprof_mcp.analysis.replay.floors`); the host's step
    kept at that floor per launch, 1 − (1 − host_floor_share) · floor / per launch. The forty-first held-back set's
    candidate scores (a GEMM over the whole catalogue): host 150 µs a step at 34.6 µs a launch where a lean op
    costs 22.0 µs, the fix's whole step 88.5 µs. None where either is unknown."""
    if (cap := host_floor_share(result)) is None:
        return None
    rep = _replay(result)
    floor, per = rep.get("op_floor_ns"), rep.get("host_per_launch_ns")
    if not floor or not per:
        return None
    return 1.0 - (1.0 - cap) * min(1.0, float(floor) / float(per))


def kernel_busy(result) -> dict[str, float]:
    """Per stage, the share of its run its kernels are busy: of its timeline span, or in event
    mode of its launch-inclusive time when it launches several kernels per run (a single launch's
    latency is hidden by the next launch in an application). 1 otherwise. Kernel-level gains are
    scaled by it, so they rank against the launch overhead on the same base: the run as the
    host sees it (a 33x faster kernel in a run that is 92 % launch gaps saves 8 %, not 3200 %)."""
    out = {}
    rows = (result.timeline or {}).get("stages", [])
    # One range timed without a profiler too (nsys mode's plain pass): its wall time is the plain step's.
    plain = _replay(result).get("base_ns")
    for row in rows:
        # A plan's stage: its GPU span per iteration. A command's range: its wall time per occurrence
        # (a range that only launches its kernels is shorter than they are, and counts as busy).
        t, span = (
            row.get("gpu_time_ns_median"),
            row.get("gpu_span_ns_median") or row.get("cpu_range_ns_median"),
        )
        if plain and len(rows) == 1 and not row.get("gpu_span_ns_median") and span:
            span = min(span, plain)
        if t and span:
            out[row["stage"]] = min(1.0, t / span)
    if not result.timeline:
        for s in result.stages:
            launches = sum(k.launches_per_run for k in s.kernel_times)
            if s.launch_timing is not None and launches > 1 and s.launch_timing.median_ns > 0:
                out[s.name] = min(1.0, s.timing.median_ns / s.launch_timing.median_ns)
    return out

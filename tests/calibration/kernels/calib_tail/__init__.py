"""Calibration pair — tail effect (wave quantization): a compute-bound kernel, x ← 0.999·x +
0.001 iterated `iters` times per element, whose grid is about 1.1 waves.

v0 (planted problem): `SMs + SMs/10` programs of 32 warps (1024 threads) and 32 values per
thread: 1024 threads with more than 32 registers each leave room for one program per SM
(65536 registers per SM), and 32 warps with 32 independent chains each keep the SM's FMA pipes
busy. The first wave runs on every SM,
the second on one SM in ten: two waves of time for 1.1 waves of work. Nsight Compute:
launch__waves_per_multiprocessor ≈ 1.1.

v1 (the fix): the same elements in programs 8× smaller (4 warps, 4096 elements): 8·(SMs +
SMs/10) programs fit in one wave (several per SM), so no SM idles at the end.

Expected on an H100: v0 ≈ 2 waves; v1 ≈ 1.1 waves of the same work (the 8 small programs on an
SM share it) → about 1.8× faster (tail share 1 − 1.1/2 ≈ 45 %).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

BIG = 32768  # elements per v0 program: 1024 threads x 32


def _sms(device) -> int:
    import torch

    return torch.cuda.get_device_properties(0).multi_processor_count if str(device).startswith("cuda") else 132


def _inputs(p, device):
    import torch

    sms = _sms(device)
    n = (sms + sms // 10) * BIG // p["shrink"]
    g = torch.Generator(device=device).manual_seed(0)
    x = torch.rand(n, generator=g, device=device, dtype=torch.float32)
    return {"x": x, "out": torch.full((n,), float("nan"), device=device)}


def _reference(inputs, p):
    x = inputs["x"].double()
    return (1.0 + (x - 1.0) * (0.999 ** p["iters"])).float()


def _v0(inputs, p):
    from .impl import build_v0

    return build_v0(inputs, p)


def _v1(inputs, p):
    from .impl import build_v1

    return build_v1(inputs, p)


def _elements(p) -> float:
    return (132 + 13) * BIG / p["shrink"]  # the model uses the H100's 132 SMs


_STAGE = StageModel("iterate", flops=lambda p: 2.0 * _elements(p) * p["iters"], bytes=lambda p: 8.0 * _elements(p))

KERNEL = KernelPackage(
    name="calib_tail",
    description="Calibration: a compute-bound grid of 1.1 waves (v0) vs finer programs in one wave (v1)",
    params=(Param("iters", 4096, min=1, max=1 << 20, doc="FMA iterations per element"),
            Param("shrink", 1, min=1, max=1024, doc="divide the problem (CPU tests); 1 on a GPU"),
            DTYPE_PARAM("float32", choices=("float32",))),
    make_inputs=_inputs, reference=_reference,
    versions=(Version("v0", "SMs + SMs/10 programs of 1024 threads: about 1.1 waves", (_STAGE,), _v0),
              Version("v1", "programs 8x smaller (4 warps): one wave, several programs per SM", (_STAGE,), _v1)),
    memory_bytes=lambda p: 8.0 * _elements(p),
    # 4096 fp32 FMA steps: rounding differs from the reference's float64 closed form by ~1e-6
    tolerance=lambda dtype: 1e-4,
)

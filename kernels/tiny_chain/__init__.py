"""tiny_chain: out = x + k, computed as k launches of a tiny "add one" kernel (v0), one
launch that adds k (v1), or v0's k launches replayed from a CUDA graph (v2).

At the default (4096 elements, k = 200) each v0 kernel runs for about as long as the GPU needs
to start it, far shorter than the host needs to launch it from Python: the GPU idles between
kernels. This is the launch-bound case the timeline mode must show as such; v1 is one fix
(fuse the work into one launch: it also removes k − 1 kernels' work), v2 the other (the same k
kernels as one CUDA graph: only the host's launch overhead goes, which is what the timeline's
launch estimate predicts; the calibration pair uses v0 → v2).

Model: n·k FLOPs; the minimum traffic is one read of x and one write of out, 2·n·itemsize
bytes (v0 moves 2·n·itemsize·k).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _make_inputs(params, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    dtype = getattr(torch, params["dtype"])
    n = params["n"]
    x = torch.randn(n, generator=g, device=device, dtype=torch.float32).to(dtype)
    out = torch.full((n,), float("nan"), device=device, dtype=dtype)
    return {"x": x, "out": out}


def _reference(inputs, params):
    return (inputs["x"].double() + params["k"]).to(inputs["x"].dtype)


def _build(fused, graph=False):
    def build(inputs, params):
        from .impl import build

        return build(inputs, params, fused, graph)
    return build


_STAGE = StageModel("chain", flops=lambda p: float(p["n"] * p["k"]), bytes=lambda p: 2.0 * p["n"] * p.itemsize)

KERNEL = KernelPackage(
    name="tiny_chain",
    description="k tiny kernel launches (v0: launch-bound) vs one fused launch (v1). The case for the timeline "
                "mode's launch-overhead analysis.",
    params=(
        Param("n", 4096, min=1, max=1 << 28, doc="elements"),
        Param("k", 200, min=1, max=100000, doc="additions (v0: one kernel launch each)", cpu_default=50),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_make_inputs,
    reference=_reference,
    versions=(
        Version("v0", "k launches of an add-one kernel", (_STAGE,), _build(False)),
        Version("v1", "one launch that adds k", (_STAGE,), _build(True)),
        Version("v2", "v0's k launches captured once in a CUDA graph and replayed: the same kernels, no "
                "per-launch host overhead (the fix the launch estimate models)", (_STAGE,), _build(False, graph=True)),
    ),
    memory_bytes=lambda p: 2.0 * p["n"] * p.itemsize,
)

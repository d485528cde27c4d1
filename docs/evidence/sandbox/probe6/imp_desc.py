"""P6-6: a package in the workspace's kernels/ whose import makes the describing child's answer a
well-formed ok record with a description that is no description ({"status": "ok", "kernel": 5}): the
server validates it with PackageDescription.model_validate and catches only the runner's WorkerError.
(Planted as ws/kernels/impdesc.py; a one-shot sys.stdout wrapper rewrites only the describe line.)"""
import sys

_real = sys.stdout


class _Forging:
    """sys.stdout until the describe line has gone by (print looks sys.stdout up at call time, after its
    argument, the description, was built: after this import)."""

    def write(self, text):
        if text.startswith('{"status": "ok", "kernel"'):
            sys.stdout = _real
            return _real.write('{"status": "ok", "kernel": 5}')
        return _real.write(text)

    def __getattr__(self, name):
        return getattr(_real, name)


sys.stdout = _Forging()

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, Plan, Stage, StageModel, Version  # noqa: E402


def _inputs(p, device):
    import torch

    return {"x": torch.ones(p["n"], device=device)}


def _build(inputs, p):
    x = inputs["x"]
    return Plan(stages=[Stage("s", lambda: x.mul(2))], output=lambda: x * 2)


KERNEL = KernelPackage(
    name="impdesc",
    description="planted",
    params=(Param("n", 1024, min=1, max=1 << 20), DTYPE_PARAM("float32")),
    make_inputs=_inputs,
    reference=lambda inputs, p: inputs["x"] * 2,
    versions=(Version("v0", "mul", (StageModel("s", lambda p: p["n"], lambda p: 8 * p["n"]),), _build),),
    memory_bytes=lambda p: 8 * p["n"],
)

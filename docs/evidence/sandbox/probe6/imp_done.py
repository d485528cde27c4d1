"""P6-5b: a package in the workspace's kernels/ that prints a malformed end line (@@KPROF-DONE [1]) at IMPORT (the describing
worker, list_kernels alone) and then sleeps: the describing worker's reader dies, device_info fails
meanwhile, list_kernels waits for the describe time limit. (Planted as ws/kernels/impready.py.)"""
import time

print("\n@@KPROF-DONE [1]", flush=True)
time.sleep(3)

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, Plan, Stage, StageModel, Version  # noqa: E402


def _inputs(p, device):
    import torch

    return {"x": torch.ones(p["n"], device=device)}


def _build(inputs, p):
    x = inputs["x"]
    return Plan(stages=[Stage("s", lambda: x.mul(2))], output=lambda: x * 2)


KERNEL = KernelPackage(
    name="impdone",
    description="planted",
    params=(Param("n", 1024, min=1, max=1 << 20), DTYPE_PARAM("float32")),
    make_inputs=_inputs,
    reference=lambda inputs, p: inputs["x"] * 2,
    versions=(Version("v0", "mul", (StageModel("s", lambda p: p["n"], lambda p: 8 * p["n"]),), _build),),
    memory_bytes=lambda p: 8 * p["n"],
)

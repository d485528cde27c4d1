"""The machine model's resources (:mod:`kprof_mcp.analysis.diagnosis.limiter`; kprof_mcp/machines.json),
as a kernel engineer names them."""

from __future__ import annotations

RESOURCE_NAMES = {
    "fma": "FMA (FP32) pipe",
    "fp64": "FP64 pipe",
    "alu": "ALU (integer/logic) pipe",
    "xu": "XU pipe (MUFU: transcendentals, conversions)",
    "lsu": "LSU (load/store) pipe",
    "tensor": "tensor pipe",
    "issue": "instruction issue slots",
    "blocks": "block scheduler",
    "dram": "DRAM bandwidth",
    "l2": "L2 bandwidth",
    "l2_slice": "busiest L2 slice (traffic to a few addresses)",
    "l1": "L1/shared bandwidth",
    "host": "host link (PCIe/C2C) bandwidth",
    "tensor_fp64": "FP64 tensor cores (DMMA)",
    "tensor_tf32": "tensor cores at TF32",
    "tensor_fp16": "tensor cores at fp16",
    "tensor_bf16": "tensor cores at bf16",
    "tensor_fp8": "tensor cores at fp8",
    "tensor_int8": "tensor cores at int8",
}


def resource_name(key: str | None) -> str:
    return RESOURCE_NAMES.get(key or "", key or "")


def _short(kernel: str) -> str:
    """A kernel's name without its return type, template arguments and parameters
    (``void at::native::<unnamed>::multi_tensor_apply_kernel<...>(...)`` → ``at::native::multi_tensor_apply_kernel``)."""
    name, depth = [], 0
    for ch in kernel.removeprefix("void ").replace("<unnamed>::", "").replace("(anonymous namespace)::", ""):
        if ch == "(" and depth == 0:
            break
        depth += (ch == "<") - (ch == ">")
        if depth == 0 and ch != ">":
            name.append(ch)
    return "".join(name).strip()[:80] or kernel[:80]

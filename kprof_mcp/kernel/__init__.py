"""The kernel-package contract: the only part of kprof-mcp a kernel package imports.

A kernel package defines ``KERNEL = KernelPackage(...)`` (parameters with bounds, an input
generator, a reference, versions whose ``build`` returns a :class:`Plan` of named stages, and
per-stage FLOP/byte models). Nothing here imports torch, triton or the rest of kprof-mcp,
so a package is loadable in a light process. See :mod:`kprof_mcp.kernel.api` for the
contract and :mod:`kprof_mcp.kernel.runtime` for helpers used inside kernel code.
"""

from .api import (
    DTYPE_PARAM,
    DTYPE_SIZES,
    NAME_RE,
    KernelPackage,
    Param,
    ParamError,
    Params,
    Plan,
    Stage,
    StageModel,
    Version,
    default_tolerance,
)
from .runtime import autotune_bench

__all__ = [
    "DTYPE_PARAM",
    "DTYPE_SIZES",
    "NAME_RE",
    "KernelPackage",
    "Param",
    "ParamError",
    "Params",
    "Plan",
    "Stage",
    "StageModel",
    "Version",
    "autotune_bench",
    "default_tolerance",
]

"""Former home of the kernel contract, kept so packages written against it still load.
New code imports :mod:`kprof_mcp.kernel`."""

from .kernel.api import (
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
    "default_tolerance",
]

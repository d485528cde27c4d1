"""Former home of the kernel contract, kept so packages written against it still load (issue 41): new
code imports :mod:`kprof_mcp.kernel`. Importing it warns once (DeprecationWarning)."""

import warnings

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

warnings.warn(  # by keyword: a Python warning, not one of the result's warning kinds
    message="kprof_mcp.kernel_api is deprecated: import the same names from kprof_mcp.kernel",
    category=DeprecationWarning,
    stacklevel=2,
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

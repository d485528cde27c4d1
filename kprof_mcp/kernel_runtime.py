"""Former home of the kernel runtime helpers, kept so packages written against it still load (issue 41):
new code imports :mod:`kprof_mcp.kernel`. Importing it warns once (DeprecationWarning)."""

import warnings

from .kernel.runtime import autotune_bench

warnings.warn(  # by keyword: a Python warning, not one of the result's warning kinds
    message="kprof_mcp.kernel_runtime is deprecated: import autotune_bench from kprof_mcp.kernel",
    category=DeprecationWarning,
    stacklevel=2,
)

__all__ = ["autotune_bench"]

"""Former home of the kernel runtime helpers; new code imports :mod:`kprof_mcp.kernel`."""

from .kernel.runtime import autotune_bench

__all__ = ["autotune_bench"]

"""Built-in kernel packages. Each sub-package defines ``KERNEL`` (see kprof_mcp.kernel)."""

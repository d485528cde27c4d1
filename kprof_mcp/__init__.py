"""kprof-mcp: profile GPU kernels and return the Profiler Output Contract.

The package is split so that the MCP server starts without importing torch or triton:
pure modules (devices, analysis, render, models, registry, engine) are imported by the
server; everything that touches a GPU runs in a child process (``kprof_mcp.worker``).
"""

__version__ = "0.1.0"

"""kprof-mcp: profile GPU kernels and return the Profiler Output Contract.

The package is split so that the MCP server starts without importing torch or triton:
pure layers (kernel contract, models, parsers, analysis, render, modes, engine) are imported by the
server; everything that touches a GPU runs in a child process (``python -m kprof_mcp.child``).
"""

__version__ = "0.1.0"

"""What runs in the profiling child process (``python -m kprof_mcp.child``): the harness that
loads a kernel package, builds inputs, checks correctness and calls the mode's capture
(:mod:`.harness`), the context a capture receives (:mod:`.context`), the correctness gate
(:mod:`.correctness`) and the common artifacts (:mod:`.artifacts`). Only here are torch,
triton and user kernels imported."""

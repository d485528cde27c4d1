"""External programs kprof drives or queries (Nsight Compute, Nsight Systems, nvidia-smi):
finding them and running them. What they print is read by :mod:`kprof_mcp.parsers`."""

"""``kprof-mcp`` / ``python -m kprof_mcp``: start the warm workers first, then the MCP server.

The server's own imports (the MCP SDK, pydantic, uvicorn) take about a second; the workers'
(torch, the CUDA context, CUPTI) take several. Starting the workers before importing the
server overlaps the two, so the first profile waits for less. Only light modules are imported
here: no MCP, no torch.
"""

from __future__ import annotations

import os
import sys


def _gpus(argv: list[str]) -> list[str] | None:
    for i, a in enumerate(argv):
        if a == "--gpus" and i + 1 < len(argv):
            return [g.strip() for g in argv[i + 1].split(",") if g.strip()]
        if a.startswith("--gpus="):
            return [g.strip() for g in a.split("=", 1)[1].split(",") if g.strip()]
    return None


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    pool = None
    cluster = any(a == "--cluster" or a.startswith("--cluster=") for a in argv)
    if os.environ.get("KPROF_WARM", "1") != "0" and not ({"-h", "--help"} & set(argv)) and not cluster:
        from .jobs import detect_slots
        from .runner import child_env
        from .warm import WorkerPool

        force_cpu = os.environ.get("KPROF_FORCE_CPU") == "1"
        slots = [None] if force_cpu else (_gpus(argv) or detect_slots())
        pool = WorkerPool(child_env, force_cpu=force_cpu, eager=True)
        pool.start(describe=True)
        for g in slots:
            pool.start(g)
    from .server import main as server_main

    server_main(argv, pool=pool)


if __name__ == "__main__":
    main()

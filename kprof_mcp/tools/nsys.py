"""Nsight Systems as an installed program: where it is. (The ``nsys`` mode records its
timeline with torch.profiler/CUPTI; driving Nsight Systems itself is issue 13.)"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

NSYS_ENV = "KPROF_NSYS"
_GLOBS = ("opt/nvidia/nsight-systems/*/bin/nsys", "opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys",
          "usr/local/cuda/bin/nsys")


def find_nsys() -> Path | None:
    """``$KPROF_NSYS``, then ``nsys`` on PATH, then the usual install folders."""
    env = os.environ.get(NSYS_ENV)
    if env:
        p = Path(env)
        return p if p.is_file() and os.access(p, os.X_OK) else None
    hit = shutil.which("nsys")
    if hit:
        return Path(hit)
    for pattern in _GLOBS:
        found = sorted(Path("/").glob(pattern))
        if found:
            return found[-1]
    return None

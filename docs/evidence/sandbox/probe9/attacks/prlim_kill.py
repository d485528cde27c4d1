# ruff: noqa: F821 — exec()d with `log` and `ws` given
"""P9 denial of service: the job lowers the SERVER's RLIMIT_CPU to 1 s (it has used more): the kernel
sends it SIGXCPU, then SIGKILL; every other client's connection and job die with it."""

import os
import resource

srv = min(int(x) for x in open(os.path.join(ws, "SERVER_PID")).read().split())
try:
    print(
        "CHECK prlim_kill: INFO server",
        srv,
        "CPU was",
        resource.prlimit(srv, resource.RLIMIT_CPU, (1, 1)),
        file=log,
        flush=True,
    )
except OSError as e:
    print("CHECK prlim_kill: refused", e, file=log, flush=True)

# ruff: noqa: F821 — exec()d with `log` and `ws` given
"""P9 denial of service without a kill: the job lowers the SERVER's RLIMIT_NOFILE to 8 (soft and
hard): the server can open no file, pipe or socket; later jobs of every client fail."""

import os
import resource

srv = min(int(x) for x in open(os.path.join(ws, "SERVER_PID")).read().split())
try:
    print(
        "CHECK prlim_nofile: INFO server",
        srv,
        "NOFILE was",
        resource.prlimit(srv, resource.RLIMIT_NOFILE, (8, 8)),
        file=log,
        flush=True,
    )
except OSError as e:
    print("CHECK prlim_nofile: refused", e, file=log, flush=True)

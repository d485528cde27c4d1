# ruff: noqa: F821 — exec()d with `log` and `ws` given
"""Fork until the task limit refuses, every child in a session of its own sleeping; the job then returns.
The harness's ps after the job shows whether any survived."""

import os
import time

n = 0
t0 = time.time()
while n < 20000:
    try:
        pid = os.fork()
    except OSError as e:
        print(f"CHECK forkbomb: INFO stopped after {n} children: {e}", file=log)
        break
    if pid == 0:
        os.setsid()
        try:
            os.fork()  # and a grandchild whose parent exits
        except OSError:
            pass
        time.sleep(600)
        os._exit(0)
    n += 1
print(f"CHECK forkbomb: INFO {n} forks in {time.time() - t0:.1f} s", file=log, flush=True)

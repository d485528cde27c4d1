# ruff: noqa: F821 — exec()d with `log` and `ws` given
"""P9 escape: Landlock has no hook for prlimit(2), and a same-uid process may lower another's limits.
The job sets its supervisor's RLIMIT_NOFILE to 0 (the supervisor can then open nothing: its kill_tree
cannot list /proc), starts a detached setsid sleeper (named kprobe9-orphan), and exits at once: the
supervisor's end-of-job kill_tree fails, the supervisor dies, the sleeper is re-parented out of the
job's tree and the server's killpg does not reach its session."""

import os
import resource
import sys
import time

sup = os.getppid()
try:
    print(
        "CHECK prlim_escape: INFO supervisor",
        sup,
        "NOFILE was",
        resource.prlimit(sup, resource.RLIMIT_NOFILE, (0, 0)),
        file=log,
        flush=True,
    )
except OSError as e:
    print("CHECK prlim_escape: refused", e, file=log, flush=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(90)", "kprobe9-orphan"])
    os._exit(0)
time.sleep(0.5)
log.flush()
os._exit(3)  # the job's process ends now (a kernel job: the warm worker itself)

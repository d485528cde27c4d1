# ruff: noqa: F821 — exec()d with `log` and `ws` given
"""Signals by proxy: F_SETOWN of the job's own pipe (and of its stdout/stderr) to the victim (a same-user
process outside the job that logs SIGURG/SIGUSR1) and to its process group, F_SETSIG, O_ASYNC, then I/O:
the kernel sends the signal (send_sigio), no kill(2) made by the job. The victim's log shows whether it got any."""

import fcntl
import os
import signal

vic = int(open(os.path.join(ws, "VICTIM_PID")).read())
F_SETSIG = 10
r, w = os.pipe()
try:
    owners = (vic, -os.getpgid(vic))
except OSError:
    owners = (vic,)
for owner in owners:
    for fd, name in ((r, "own pipe read end"), (1, "stdout"), (2, "stderr")):
        try:
            fcntl.fcntl(fd, fcntl.F_SETOWN, owner)
            fcntl.fcntl(fd, F_SETSIG, signal.SIGUSR1)
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)
            print(
                f"CHECK sigio: INFO {name} owner {owner}: F_SETOWN/F_SETSIG/O_ASYNC accepted",
                file=log,
                flush=True,
            )
        except OSError as e:
            print(f"CHECK sigio {name} owner {owner}: refused {e}", file=log, flush=True)
    os.write(w, b"x")  # the read end becomes readable: SIGIO (here SIGUSR1) to its owner
    os.read(r, 1)
    for fd in (1, 2):
        try:
            os.write(fd, b"sigio\n")
        except OSError:
            pass
import time  # noqa: E402

time.sleep(1)
print("CHECK sigio: INFO done (see the victim's log)", file=log, flush=True)

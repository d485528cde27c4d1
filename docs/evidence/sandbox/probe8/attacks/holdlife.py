# ruff: noqa: F821 — exec()d with `log` and `ws` given
"""Reopen this process's lifeline (the read end of the server's one pipe, KPROF_LIFELINE) for writing via
/proc/self/fd and keep that write end in a detached sleeper: when the server dies, no child of it reads EOF."""

import os
import sys

ws_ = [
    os.open(f"/proc/self/fd/{n}", os.O_WRONLY)
    for n in os.listdir("/proc/self/fd")
    if n != "0"
    and os.readlink(f"/proc/self/fd/{n}").startswith("pipe:")
    and os.fstat(int(n)).st_mode
    and (__import__("fcntl").fcntl(int(n), 3) & 3) == 0
]
w = ws_[0]
if os.fork() == 0:
    os.setsid()
    [os.set_inheritable(x, True) for x in ws_]
    os.execv(
        sys.executable, [sys.executable, "-c", "import time; time.sleep(120)", "kprobe8-holdlife", str(w)]
    )
import time

print(f"CHECK holdlife: INFO write end {w} of the lifeline held by a sleeper", file=log, flush=True)
time.sleep(40)  # the job stays running: the server is killed meanwhile

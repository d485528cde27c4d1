# ruff: noqa: F821 — exec()d with `log` and `ws` given
"""A process that flees: double-forked into a session of its own, then hopping to a new pid every few ms
(each generation forks the next and exits, so its parent is always gone), and marking its existence in
the argv of each hop (readable by ps). After the job ends nothing named kprobe9-hopper may be alive."""

import os
import sys
import time

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        code = (
            "import os,time,sys\n"
            "end=time.time()+float(sys.argv[1])\n"
            "while time.time()<end:\n"
            "  if os.fork(): os._exit(0)\n"
            "  time.sleep(0.002)\n"
        )
        os.execv(sys.executable, [sys.executable, "-c", code, "600", "kprobe9-hopper"])
    os._exit(0)
time.sleep(1.0)
print("CHECK hopper: INFO started a pid-hopping process (kprobe9-hopper) for 600 s", file=log, flush=True)

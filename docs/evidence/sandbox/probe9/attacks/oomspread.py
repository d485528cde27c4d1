# ruff: noqa: F821 — exec()d with `log` and `ws` given
"""Memory spread over many processes, each smaller than the server: when memory runs out (the harness's
4 GiB cgroup around the server here; the machine's memory in production, where nothing limits a job's
memory) the OOM killer takes the largest process: the server. 120 processes of ~70 MiB each."""

import subprocess
import sys
import time

code = "import time; b = bytearray(60 << 20); time.sleep(120)"
ps = [subprocess.Popen([sys.executable, "-c", code, "kprobe9-oomspread"]) for _ in range(120)]
print("CHECK oomspread: INFO started", len(ps), file=log, flush=True)
time.sleep(20)
print("CHECK oomspread: INFO alive after 20 s:", sum(p.poll() is None for p in ps), file=log, flush=True)

# A deliberate P9-2: every process lowers its oom_score_adj back to 0 (allowed: not below what it had at
# start... it had 1000, 0 needs no capability? see the log) then 100 processes of ~60 MiB each (6 GiB in all).
import os
import time


def low():
    try:
        open("/proc/self/oom_score_adj", "w").write("0")
        return open("/proc/self/oom_score_adj").read().strip()
    except OSError as e:
        return f"refused {e}"


log.write(f"oom_score_adj now {low()}\n")  # noqa: F821
log.flush()  # noqa: F821
kids = []
for _ in range(100):
    pid = os.fork()
    if pid == 0:
        low()
        b = bytearray(60 << 20)
        for j in range(0, len(b), 4096):
            b[j] = 1
        time.sleep(60)
        os._exit(0)
    kids.append(pid)
time.sleep(20)
alive = sum(1 for k in kids if os.waitpid(k, os.WNOHANG) == (0, 0))
log.write(f"oomlow: {alive} of 100 children alive after 20 s\n")  # noqa: F821

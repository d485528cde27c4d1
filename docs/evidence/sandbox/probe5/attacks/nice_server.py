# The server's scheduling, from the job: nice 19, SCHED_IDLE, pinned to one CPU (same-uid checks only).
import os
def cg_pids():
    for line in open("/proc/self/cgroup"):
        _, ctl, path = line.strip().split(":", 2)
        if "memory" in ctl.split(","):
            f = f"/sys/fs/cgroup/memory{path}/cgroup.procs"
            if os.path.exists(f):
                return sorted(int(p) for p in open(f).read().split())
    return []
pids = cg_pids()
t = pids[0]
print("target", t, "cgroup pids", pids, file=log, flush=True)
for what, fn in [("setpriority 19", lambda: os.setpriority(os.PRIO_PROCESS, t, 19)),
                 ("SCHED_IDLE", lambda: os.sched_setscheduler(t, os.SCHED_IDLE, os.sched_param(0))),
                 ("affinity {0}", lambda: os.sched_setaffinity(t, {0}))]:
    try:
        fn(); print(what, "OK", file=log, flush=True)
    except OSError as e:
        print(what, "refused", e, file=log, flush=True)

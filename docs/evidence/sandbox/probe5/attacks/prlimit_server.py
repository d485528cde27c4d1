# Find the server by its cgroup (the job's own /proc/self/cgroup names it; /sys is readable), then lower
# the server's RLIMIT_CPU below what it has used: the kernel SIGKILLs it. Landlock has no prlimit hook;
# the kernel checks only that the uids match (check_prlimit_permission).
import os, resource, sys
def cg_pids():
    for line in open("/proc/self/cgroup"):
        _, ctl, path = line.strip().split(":", 2)
        if "memory" in ctl.split(","):
            for d in (path, os.path.dirname(path)):
                f = f"/sys/fs/cgroup/memory{d}/cgroup.procs"
                if os.path.exists(f):
                    return sorted(int(p) for p in open(f).read().split())
    return []
pids = cg_pids()
print("me", os.getpid(), "ppid", os.getppid(), "uid", os.getuid(), "cgroup pids", pids, file=log, flush=True)
target = pids[0] if pids else None
if "KPROBE5_TARGET" in os.environ:
    target = int(os.environ["KPROBE5_TARGET"])
print("target", target, file=log, flush=True)
try:
    print("server RLIMIT_CPU before", resource.prlimit(target, resource.RLIMIT_CPU), file=log, flush=True)
    print("server RLIMIT_NOFILE before", resource.prlimit(target, resource.RLIMIT_NOFILE), file=log, flush=True)
    resource.prlimit(target, resource.RLIMIT_CPU, (1, 1))
    print("set the server's RLIMIT_CPU to (1, 1): OK", file=log, flush=True)
except OSError as e:
    print("prlimit refused:", e, file=log, flush=True)

"""Run confined (python -m kprof_mcp.sandbox POLICY -- python procw.py STANDIN_PID [oom]) as a user other than
root, with a policy that has proc_write (what a command or kernel child gets behind Nsight Compute): write
the /proc files of same-user processes outside the job (the stand-in for the server, and the job's own
supervisor). With `oom`: set the supervisor's oom_score_adj to 1000, start a setsid sleeper
(kprobe9-oomorphan), then allocate memory until the memory cgroup's OOM killer acts."""

import os
import sys
import time

standin, sup = int(sys.argv[1]), os.getppid()


def w(path, data):
    try:
        with open(path, "w") as f:
            f.write(data)
        try:
            back = open(path).read().strip()[:60]
        except OSError as e:
            back = f"(unreadable: {e.strerror})"
        print(f"CHECK write {path} {data!r}: ALLOWED, now {back!r}", flush=True)
    except OSError as e:
        print(f"CHECK write {path} {data!r}: refused {e.errno} {e.strerror}", flush=True)


print(f"CHECK ids: INFO me {os.getpid()} uid {os.getuid()} supervisor {sup} stand-in {standin}", flush=True)
if sys.argv[2:] == ["oom"]:
    w(f"/proc/{sup}/oom_score_adj", "1000")
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            nul = os.open("/dev/null", os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(nul, fd)
            os.execv(
                sys.executable, [sys.executable, "-c", "import time; time.sleep(60)", "kprobe9-oomorphan"]
            )
        os._exit(0)
    time.sleep(1.0)
    os.system("ps -eo pid,ppid,sid,args | grep [k]probe9-oomorphan")
    hog = []
    while True:
        hog.append(bytearray(64 << 20))  # touched: bytearray zero-fills
for t in (standin, sup):
    for name, data in (
        ("oom_score_adj", "1000"),
        ("autogroup", "19"),
        ("coredump_filter", "0x7f"),
        ("clear_refs", "5"),
        ("sched", "0"),
        ("timerslack_ns", "1"),
        ("comm", "kprobe9-renamed"),
        ("attr/current", "x"),
    ):
        w(f"/proc/{t}/{name}", data)
    try:
        open(f"/proc/{t}/environ").read()
        print(f"CHECK read /proc/{t}/environ: ALLOWED", flush=True)
    except OSError as e:
        print(f"CHECK read /proc/{t}/environ: refused {e.errno}", flush=True)

# A process that keeps moving: a session leader forks a child and exits, over and over (each generation a
# new pid, parent gone), for 40 s; plus a double-forked sleeper that closes every fd and ignores SIGTERM/HUP.
import os
import signal
import sys
import time

MARK = "kprobe11-forkrun"


def runner():
    os.setsid()
    end = time.time() + 40
    while time.time() < end:
        pid = os.fork()
        if pid:
            os._exit(0)
        time.sleep(0.01)
    os._exit(0)


for kind in ("runner", "sleeper"):
    pid = os.fork()
    if pid == 0:
        try:
            sys.argv[0] = MARK
            if kind == "runner":
                runner()
            else:
                if os.fork():
                    os._exit(0)
                os.setsid()
                for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                    signal.signal(s, signal.SIG_IGN)
                os.closerange(0, 1024)
                os.execv("/bin/sleep", ["/bin/sleep", "45"])
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
print("started runner and sleeper", file=log)

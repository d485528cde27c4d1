"""A 'ghost': a process whose main thread exits (raw SYS_exit, only that thread) while a second thread
keeps running. /proc/PID/stat then says state Z for the whole process (the leader's state), and a
walker that skips zombies never sees it nor anything below it. Named kprobe4ghost; it writes a line
with its pid and the time to LOG every 2 s for SECONDS, then ends."""
import ctypes
import os
import sys
import threading
import time


def _beat(log: str, seconds: float) -> None:
    end = time.time() + seconds
    while time.time() < end:
        try:
            with open(log, "a") as f:
                f.write(f"{os.getpid()} alive {time.time():.0f}\n")
        except OSError:
            pass
        time.sleep(2)
    os._exit(0)


def ghost(log: str, seconds: float = 120.0, detach: bool = True) -> int:
    """Fork the ghost (in a session of its own) and return its pid in the parent."""
    pid = os.fork()
    if pid:
        return pid
    try:
        if detach:
            os.setsid()
        ctypes.CDLL(None).prctl(15, b"kprobe4ghost", 0, 0, 0)
        threading.Thread(target=_beat, args=(log, seconds)).start()
        time.sleep(0.2)
        ctypes.CDLL(None).syscall(60, 0)  # SYS_exit: this thread only
    finally:
        os._exit(0)


if __name__ == "__main__":
    print(ghost(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 120.0))

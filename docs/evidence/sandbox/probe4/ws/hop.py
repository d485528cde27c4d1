"""A 'hopper': a process that forks and exits at once, again and again (setsid first), so that its pid
keeps changing; named kprobe4hop (the name survives fork). Stops by itself after SECONDS."""
import ctypes
import os
import sys
import time


def hoppers(n: int = 4, seconds: float = 90.0) -> None:
    for _ in range(n):
        if os.fork() == 0:
            try:
                os.setsid()
                ctypes.CDLL(None).prctl(15, b"kprobe4hop", 0, 0, 0)  # PR_SET_NAME
                end = time.time() + seconds
                while time.time() < end:
                    if os.fork():
                        os._exit(0)
            finally:
                os._exit(0)


if __name__ == "__main__":
    hoppers(int(sys.argv[1]) if len(sys.argv) > 1 else 4, float(sys.argv[2]) if len(sys.argv) > 2 else 90.0)

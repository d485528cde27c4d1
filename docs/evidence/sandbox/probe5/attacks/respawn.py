# P5-5's thread brings P5-4 back without CLONE_PARENT: between jobs (after one job's clean-up, before the
# next job's list of "processes that were there before") it starts a process; the next job's clean-up keeps
# it as one of the worker's own. A plain fork: no flag for the seccomp filter to refuse.
import os, subprocess, threading, time
L = os.path.join(ws, "out", "profiles", "kprobe5", "respawn.log")
def loop():
    child = None
    for i in range(600):
        if child is None or child.poll() is not None:
            child = subprocess.Popen(["/bin/sleep", "902"])
            with open(L, "a") as f:
                print(time.strftime("%H:%M:%S"), "started sleep 902 pid", child.pid, file=f)
        time.sleep(0.2)
threading.Thread(target=loop, daemon=True).start()
print("respawn thread started", file=log, flush=True)

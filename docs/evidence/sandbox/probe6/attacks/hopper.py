# P6-4: a process that outlives its job by never being where kill_tree looked. lifeline.kill_tree lists
# the descendants from /proc, then SIGSTOPs what it listed, round after round (50 at most), then SIGKILLs
# what it saw; the worker's own clean-up (child/serve.py) does the same, then the server's
# WarmWorker.kill() (kill_tree of the supervisor, then killpg of its group). A chain that forks and lets
# the parent exit every ~1 ms, each link in a session (and group) of its own, is never at a listed pid
# when the SIGSTOP comes, and killpg misses it. It hops fast only from the moment its job writes
# result.json (polled) until its kprof ancestors are gone; then it sits and writes a heartbeat.
import os, subprocess, sys
HOP = r'''
import ctypes, os, select, struct, sys, time
log, watch = sys.argv[1], sys.argv[2]
def say(*a):
    with open(log, "a") as f:
        print(time.strftime("%H:%M:%S"), os.getpid(), *a, file=f)
def kprof_ancestor():
    p = os.getppid()
    try:
        return b"kprof" in open(f"/proc/{p}/cmdline", "rb").read()
    except OSError:
        return False
say("hopper waiting for the job's run directory (a .partial) under", watch)
t_end, found = time.time() + 60, False
while time.time() < t_end and not found:
    for dp, ds, fs in os.walk(watch):
        if any(d.endswith(".partial") for d in ds):
            found = True
            break
    time.sleep(0.002)
say("job end seen: hopping")
gens, t0, quiet = 0, time.time(), None
while time.time() - t0 < 30:
    try:
        if os.fork():
            os._exit(0)
    except OSError:
        time.sleep(0.001)
        continue
    os.setsid()
    gens += 1
    if gens % 50:
        continue  # as fast as fork goes (HOP_SLEEP between checks only)
    if not kprof_ancestor():
        quiet = quiet or time.time()
        if time.time() - quiet > 1.0:
            break
    else:
        quiet = None
    time.sleep(0.001)
say(f"stopped hopping after {gens} generations; parent now {os.getppid()}; living on")
for i in range(120):
    say("alive", i, "ppid", os.getppid())
    time.sleep(2)
'''
newest = os.path.join(ws, "out", "profiles", "event", "evil")
hl = os.path.join(ws, "out", "profiles", "kprobe6", "hopper.log")
subprocess.Popen([sys.executable, "-S", "-c", HOP, hl, newest], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("hopper started for", newest, file=log, flush=True)

# A thread started by the job: the worker kills the job's processes after it, not its threads. The
# thread writes a heartbeat every 2 s for 10 minutes, past the job's end and its time limit.
import threading, time, os
def beat():
    for i in range(300):
        with open(os.path.join(ws, "out", "profiles", "kprobe5", "linger_beat.txt"), "a") as f:
            f.write(f"{time.strftime('%H:%M:%S')} beat {i} pid {os.getpid()}\n")
        time.sleep(2)
threading.Thread(target=beat, daemon=True, name="kprobe5-linger").start()
print("thread started", file=log, flush=True)

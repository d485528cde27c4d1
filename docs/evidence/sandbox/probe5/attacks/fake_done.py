# The job prints the warm worker's own end marker for its job number (read from serve()'s frame): the
# server takes the job as ended (rc 0) while this code goes on running, past the job's time limit.
import inspect, json, sys, time, os
job = None
for fr in inspect.stack():
    if fr.function == "serve" and "msg" in fr.frame.f_locals:
        job = fr.frame.f_locals["msg"]["job"]
print("job", job, file=log, flush=True)
sys.stdout.write("\n@@KPROF-DONE " + json.dumps({"job": job, "rc": 0}) + "\n"); sys.stdout.flush()
for i in range(90):
    with open(os.path.join(ws, "out", "profiles", "kprobe5", "fake_done_beat.txt"), "a") as f:
        f.write(f"{time.strftime('%H:%M:%S')} still running {i}\n")
    time.sleep(2)

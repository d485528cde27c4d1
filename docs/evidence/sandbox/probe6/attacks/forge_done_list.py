# P6-5: a forged end line whose JSON is no object: WarmWorker.run takes ("done", [1]) from its queue and
# calls msg.get("job") on the list -> AttributeError out of WorkerPool.run, past the code that retires the
# worker (one job per confined worker). The worker, with this job's thread in it, stays in the pool for
# the next job. The thread writes a heartbeat with the jobs it sees in the worker (serve()'s frame).
import os, sys, threading, time
L = os.path.join(ws, "out", "profiles", "kprobe6", "forge_done_list.beat")


def beat():
    for i in range(150):
        jobs = []
        for f in sys._current_frames().values():
            while f is not None:
                if f.f_code.co_name == "serve" and "msg" in f.f_locals:
                    argv = f.f_locals["msg"].get("argv", [""])
                    try:
                        import json as _j
                        req = _j.load(open(argv[argv.index("--request") + 1]))
                        jobs.append(f"job {f.f_locals['msg'].get('job')}: {req.get('kernel')} params {req.get('params')}")
                    except Exception as e:  # noqa: BLE001
                        jobs.append(f"job {f.f_locals['msg'].get('job')}: {argv[:1]} ({type(e).__name__})")
                f = f.f_back
        with open(L, "a") as g:
            print(time.strftime("%H:%M:%S"), "beat", i, "pid", os.getpid(), "job in serve():", jobs, file=g, flush=True)
        time.sleep(1)


threading.Thread(target=beat, daemon=True, name="kprobe6-beat").start()
print("\n@@KPROF-DONE [1]", flush=True)
print(time.strftime("%H:%M:%S"), "forged DONE [1] printed, thread started in pid", os.getpid(), file=log, flush=True)
time.sleep(2)

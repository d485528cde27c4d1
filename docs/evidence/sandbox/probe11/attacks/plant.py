# Plant special files where the server reads after the job: every *.partial run directory (and the
# profiles' root) gets FIFOs and a socket named as the files the server reads, a sparse 8 GiB file,
# a 1000-deep JSON and links to HOME's secret and to /etc/shadow; printed what was made.
import json
import os
import socket

import threading
import time

made = []
root = os.path.join(ws, "out", "profiles")
seen = set()


def plant(d):
    for name in (
        "result.json",
        "report.md",
        "contract.md",
        "params.json",
        "samples.json",
        "sweep.json",
        "stages.json",
    ):
        p = os.path.join(d, name)
        try:
            if os.path.exists(p):
                os.replace(p, p + ".orig")
            if name == "params.json":
                os.symlink("/etc/shadow", p)
            elif name == "samples.json":
                with open(p, "w") as f:
                    f.truncate(8 << 30)
            elif name == "stages.json":
                with open(p, "w") as f:
                    f.write("[" * 100000 + "]" * 100000)
            elif name == "contract.md":
                s = socket.socket(socket.AF_UNIX)
                s.bind(p)
            else:
                os.mkfifo(p)
            made.append(p)
        except OSError as e:
            made.append(f"{p}: {e}")


def watch():
    end = time.time() + 25
    while time.time() < end:
        for dp, dns, fns in os.walk(root):
            if (dp.endswith(".partial") or dp.endswith("command")) and dp not in seen:
                seen.add(dp)
                plant(dp)
        time.sleep(0.02)


threading.Thread(target=watch, daemon=True).start()
time.sleep(6)
print(json.dumps(made, indent=0), file=log)
log.flush()

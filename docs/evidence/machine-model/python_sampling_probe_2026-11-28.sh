#!/usr/bin/env bash
# What Nsight Systems' Python sampling records (for naming the Python code behind a host-bound step): a
# 60-launch model step run under a sys.settrace line tracer, profiled with --python-sampling, exported to
# SQLite; the tables, their row counts and sample rows of every table whose name says PYTHON or CALLCHAIN or
# SAMPL. Run from the repository root on the GPU machine with out/rec14carry carried:
#   bash docs/evidence/machine-model/python_sampling_probe_2026-11-28.sh > $OUT/probe.log 2>&1
set -x
tar xJf out/rec14carry/nsyslibs.tar.xz
export LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH
NSYS=$(ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys | head -1)
$NSYS --version
cat > /tmp/traced.py <<'PY'
import sys, torch
m = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.LayerNorm(512), torch.nn.Linear(512, 512), torch.nn.GELU())
                          for _ in range(12)]).cuda().eval()
x = torch.randn(64, 512, device="cuda")
lines = 0
def tracer(frame, event, arg):
    global lines
    lines += 1
    return tracer
with torch.no_grad():
    for _ in range(5):
        m(x)
    torch.cuda.synchronize()
    sys.settrace(tracer)
    for _ in range(200):
        m(x)
    sys.settrace(None)
    torch.cuda.synchronize()
print("lines", lines)
PY
cd /tmp && timeout 200 $NSYS profile --trace=cuda,nvtx --sample=process-tree --python-sampling=true \
    --python-sampling-frequency=2000 --cudabacktrace=all:1 --python-backtrace=cuda -o /tmp/probe -f true \
    python3 /tmp/traced.py
ls -la /tmp/probe*
timeout 200 $NSYS export --type sqlite --force-overwrite true -o /tmp/probe.sqlite /tmp/probe.nsys-rep
python3 - <<'PY'
import sqlite3
c = sqlite3.connect("/tmp/probe.sqlite")
tabs = [r[0] for r in c.execute("select name from sqlite_master where type='table' order by name")]
for t in tabs:
    n = c.execute(f"select count(*) from {t}").fetchone()[0]
    print(f"TABLE {t} rows={n}")
for t in tabs:
    u = t.upper()
    if any(k in u for k in ("PYTHON", "CALLCHAIN", "SAMPL", "STRING", "COMPOSITE", "NVTX")):
        cols = [r[1] for r in c.execute(f"pragma table_info({t})")]
        print(f"== {t} {cols}")
        for r in c.execute(f"select * from {t} limit 8"):
            print("  ", r)
# NVTX_EVENTS by event type and text: what the 23,633 rows of the first run were
for r in c.execute("select eventType, count(*) from NVTX_EVENTS group by eventType"):
    print("NVTX eventType", r)
q = ("select e.eventType, coalesce(e.text, s.value), count(*) n from NVTX_EVENTS e left join StringIds s "
     "on e.textId = s.id group by 1, 2 order by n desc limit 25")
for r in c.execute(q):
    print("NVTX", r)
PY

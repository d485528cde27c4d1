#!/usr/bin/env bash
# Host work spread between launches vs launch overhead (issue 36, 2026-11-29): the bad variants of the held-back
# host-class command pairs (a line tracer, a tensor subclass, a formatted log line, a deep copy, anomaly mode, a
# GIL-holding thread) and of the launch-class ones (per-item matmuls, a launch loop, statistics hooks, an unrolled
# LSTM cell, a per-parameter optimizer) through `kprof run --mode nsys` (Python sampled, plain pass with the
# eager op's floor); each run's result.json and its timeline.sqlite (xz) come back in one tar.
# From the repository root on the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/host_vs_launch_2026-11-29.sh
tar xJf out/rec14carry/nsyslibs.tar.xz; mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1
mkdir -p /tmp/hl
end=$((SECONDS + ${END_S:-480}))
for s in line_tracer subclass_meta log_format deepcopy_snapshot anomaly_mode per_item_matmul launch_loop stat_hooks lstm_cell_loop gil_thread optimizer_loop; do
  left=$((end - SECONDS)); [ $left -lt 30 ] && { echo "== $s skipped (time)"; continue; }
  t0=$SECONDS
  timeout $left python3 -m kprof_mcp.cli run --mode nsys --cwd tests/calibration/commands --json -- python $s.py --variant bad --steps 12 > /tmp/hl/$s.json 2> /tmp/hl/$s.err
  rc=$?
  d=$(grep -o 'profile_dir: .*' /tmp/hl/$s.err | tail -1 | cut -c14-)
  echo "== $s rc=$rc $((SECONDS - t0)) s dir=$d"
  tail -2 /tmp/hl/$s.err
  if [ -n "$d" ] && [ -f "$d/result.json" ]; then
    mkdir -p /tmp/hl/out/$s && cp "$d/result.json" /tmp/hl/out/$s/ && [ -f "$d/timeline.sqlite" ] && xz -6 -T4 -c "$d/timeline.sqlite" > /tmp/hl/out/$s/timeline.sqlite.xz
    python3 - "$d" <<'PY'
import json, sys
from pathlib import Path
res = json.loads((Path(sys.argv[1]) / "result.json").read_text())
rp = ((res.get("timeline") or {}).get("idle") or {}).get("replay") or {}
b = rp.get("base_ns", rp.get("recorded_ns"))
keys = ("plain_ns", "host_scale", "read_floor_ns", "op_floor_ns", "op_excess_share", "host_per_launch_ns")
print({k: rp.get(k) for k in keys}, {k: f"{(b / v - 1) * 100:.1f}%" for k, v in (rp.get("step_ns") or {}).items()})
PY
  fi
done
cd /tmp/hl/out && tar cf $OUT/host_vs_launch.tar . && ls -la $OUT

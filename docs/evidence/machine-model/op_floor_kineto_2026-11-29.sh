#!/usr/bin/env bash
# The lean eager op's floor under torch.profiler (timeline_engine='kineto', 2026-11-29): the floor's range is also a
# record_function annotation, issued inside the profiler after the command (capture/recording.record_kineto).
# Host- and launch-class commands' bad variants, each through kprof's nsys mode with the Kineto engine; prints the
# floor, the share above it and the ranked causes; keeps each result.json and trace.json (xz) for the CPU tests.
# From the repository root on the GPU machine, out/rec14carry carried:
#   END_S=200 bash docs/evidence/machine-model/op_floor_kineto_2026-11-29.sh
mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
mkdir -p /tmp/kf/out
end=$((SECONDS + ${END_S:-200}))
for s in ${CMDS:-line_tracer launch_loop anomaly_mode log_format stat_hooks}; do
  left=$((end - SECONDS)); [ $left -lt 25 ] && { echo "== $s skipped (time)"; continue; }
  t0=$SECONDS
  timeout $left python3 -m kprof_mcp.cli run --mode nsys --timeline-engine kineto --cwd tests/calibration/commands \
    --json -- python $s.py --variant bad --steps 12 > /tmp/kf/$s.json 2> /tmp/kf/$s.err
  rc=$?
  d=$(grep -o 'profile_dir: .*' /tmp/kf/$s.err | tail -1 | cut -c14-)
  echo "== $s rc=$rc $((SECONDS - t0)) s"
  [ $rc -ne 0 ] && tail -5 /tmp/kf/$s.err
  if [ -n "$d" ] && [ -f "$d/result.json" ]; then
    cp "$d/result.json" /tmp/kf/out/$s.result.json
    [ -f "$d/trace.json" ] && xz -9 -c "$d/trace.json" > /tmp/kf/out/$s.trace.json.xz
    python3 - "$d" <<'PY'
import json, sys
from pathlib import Path
res = json.loads((Path(sys.argv[1]) / "result.json").read_text())
rp = ((res.get("timeline") or {}).get("idle") or {}).get("replay") or {}
b = rp.get("base_ns", rp.get("recorded_ns"))
keys = ("plain_ns", "op_floor_ns", "op_excess_share", "host_per_launch_ns")
print({k: rp.get(k) for k in keys}, {k: f"{(b / v - 1) * 100:.1f}%" for k, v in (rp.get("step_ns") or {}).items() if v})
print("engine:", (res.get("timeline") or {}).get("engine"), "stages:", [s.get("name") for s in res.get("stages", [])])
PY
    grep -E "^[123]\. " "$d/contract.md" | cut -c1-260
  fi
done
ls -la /tmp/kf/out; cd /tmp/kf/out && tar cf $OUT/kineto_floor.tar .

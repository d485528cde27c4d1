#!/usr/bin/env bash
# kprof's nsys mode with the lean eager op's floor recorded in the command's own trace (capture/op_floor.py,
# 2026-11-29): the bad variants of three host-class command pairs (a line tracer, a tensor subclass, a deep copy)
# and of two launch-class ones (per-item matmuls, a launch loop); each run's replay figures and ranked causes,
# and its export cut to 6 steps + the floor's range (tests/fixtures/nsys-opfloor/trim.py) with its result.json.
# From the repository root on the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/op_floor_e2e_2026-11-29.sh
tar xJf out/rec14carry/nsyslibs.tar.xz; mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1
mkdir -p /tmp/hl/out
end=$((SECONDS + ${END_S:-240}))
for s in ${CMDS:-line_tracer per_item_matmul subclass_meta deepcopy_snapshot launch_loop}; do
  left=$((end - SECONDS)); [ $left -lt 30 ] && { echo "== $s skipped (time)"; continue; }
  t0=$SECONDS
  timeout $left python3 -m kprof_mcp.cli run --mode nsys --cwd tests/calibration/commands --json -- python $s.py --variant bad --steps 12 > /tmp/hl/$s.json 2> /tmp/hl/$s.err
  rc=$?
  d=$(grep -o 'profile_dir: .*' /tmp/hl/$s.err | tail -1 | cut -c14-)
  echo "== $s rc=$rc $((SECONDS - t0)) s"
  [ $rc -ne 0 ] && tail -5 /tmp/hl/$s.err
  if [ -n "$d" ] && [ -f "$d/result.json" ]; then
    cp "$d/result.json" /tmp/hl/out/$s.result.json
    rng=$(grep -o 'kprof.range("[a-z_]*")' tests/calibration/commands/$s.py | head -1 | cut -d'"' -f2)
    python3 tests/fixtures/nsys-opfloor/trim.py "$d/timeline.sqlite" /tmp/hl/$s.sqlite 4 6 ${rng:-step} && xz -9 -c /tmp/hl/$s.sqlite > /tmp/hl/out/$s.sqlite.xz
    python3 - "$d" <<'PY'
import json, sys
from pathlib import Path
res = json.loads((Path(sys.argv[1]) / "result.json").read_text())
rp = ((res.get("timeline") or {}).get("idle") or {}).get("replay") or {}
b = rp.get("base_ns", rp.get("recorded_ns"))
keys = ("plain_ns", "host_scale", "read_floor_ns", "op_floor_ns", "op_excess_share", "host_per_launch_ns")
print({k: rp.get(k) for k in keys}, {k: f"{(b / v - 1) * 100:.1f}%" for k, v in (rp.get("step_ns") or {}).items()})
print("stages:", [s.get("name") for s in res.get("stages", [])])
PY
    grep -m3 -E "^\| 1 |^1\. |Opportunit" "$d/contract.md" | cut -c1-300
  fi
done
cd /tmp/hl/out && ls -la && tar cf $OUT/opfloor.tar .

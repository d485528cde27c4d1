#!/usr/bin/env bash
# The second call of host_vs_launch_2026-11-29 (the first's tar of whole exports, 33 MB, was over the 16 MiB a
# returned file may have): three of its commands again, each export cut to 6 step ranges by
# tests/fixtures/nsys-pysamples/trim.py for tests/fixtures/nsys-opfloor/, with its result.json.
tar xJf out/rec14carry/nsyslibs.tar.xz; mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1
mkdir -p /tmp/hl/out
for s in line_tracer per_item_matmul subclass_meta; do
  t0=$SECONDS
  timeout 120 python3 -m kprof_mcp.cli run --mode nsys --cwd tests/calibration/commands --json -- python $s.py --variant bad --steps 12 > /tmp/hl/$s.json 2> /tmp/hl/$s.err
  rc=$?
  d=$(grep -o 'profile_dir: .*' /tmp/hl/$s.err | tail -1 | cut -c14-)
  echo "== $s rc=$rc $((SECONDS - t0)) s"
  if [ -n "$d" ] && [ -f "$d/result.json" ]; then
    cp "$d/result.json" /tmp/hl/out/$s.result.json
    python3 tests/fixtures/nsys-pysamples/trim.py "$d/timeline.sqlite" /tmp/hl/$s.sqlite 4 6 && xz -9 -c /tmp/hl/$s.sqlite > /tmp/hl/out/$s.sqlite.xz
    python3 - "$d" <<'PY'
import json, sys
from pathlib import Path
res = json.loads((Path(sys.argv[1]) / "result.json").read_text())
rp = ((res.get("timeline") or {}).get("idle") or {}).get("replay") or {}
b = rp.get("base_ns", rp.get("recorded_ns"))
keys = ("plain_ns", "host_scale", "read_floor_ns", "op_floor_ns", "op_excess_share", "host_per_launch_ns")
print({k: rp.get(k) for k in keys}, {k: f"{(b / v - 1) * 100:.1f}%" for k, v in (rp.get("step_ns") or {}).items()})
for o in (res.get("diagnosis") or {}).get("opportunities", [])[:3]:
    print("  ", str(o.get("cause")), o.get("est_gain_pct"), str(o.get("action") or o.get("title"))[:120])
PY
  fi
done
cd /tmp/hl/out && ls -la && tar cf $OUT/opfloor.tar .

#!/usr/bin/env bash
# kprof's nsys mode end to end with the host's Python sampled by default (2026-11-29): the 20th held-back set's
# validating loop and the 26th's synchronise-per-module forward through `kprof run --mode nsys` (no
# --python-backtrace); the contract and what the result says of the samples. From the repository root on the GPU
# machine, out/rec14carry carried:  bash docs/evidence/machine-model/default_sampling_e2e_2026-11-29.sh
tar xJf out/rec14carry/nsyslibs.tar.xz; mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1
for s in dist_validate layer_timing_sync; do
  timeout 200 python3 -m kprof_mcp.cli run --mode nsys --cwd tests/calibration/commands --json -- python $s.py --variant bad --steps 20 > /tmp/$s.json 2> /tmp/$s.err
  echo "== $s rc=$? $(wc -c < /tmp/$s.json) bytes"; tail -3 /tmp/$s.err
  d=$(grep -o 'profile_dir: .*' /tmp/$s.err | tail -1 | cut -c14-)
  python3 - "$d" <<'PY'
import json, sys
from pathlib import Path
d = Path(sys.argv[1])
res = json.loads((d / "result.json").read_text())
tl = res.get("timeline") or {}
prof = res.get("profiler") or {}
print("nsys flags:", [a for a in json.dumps(prof).split('"') if "sampl" in a or "backtrace" in a][:6])
idle = tl.get("idle") or {}
print("sources:", json.dumps(idle.get("sources"))[:700])
rp = idle.get("replay") or {}
b = rp.get("base_ns", rp.get("recorded_ns"))
print("plain", rp.get("plain_ns"), "read floor", rp.get("read_floor_ns"), "steps:", {k: f"{(b / v - 1) * 100:.1f}%" for k, v in (rp.get("step_ns") or {}).items()})
c = d / "contract.md"
print(c.read_text()[:2500] if c.exists() else "(no contract.md)")
PY
  cp /tmp/$s.err $OUT/$s.err
done

#!/usr/bin/env bash
# Two command changes through the tool end to end on the GPU (2026-11-29, evening session):
# 1. modules loaded and unloaded at every step are CUDA calls in the loop (idle.modules_cycled, f121e92): the 35th
#    held-back set's cuFFT plan cache switched off (tests/calibration/commands/fft_plan_cache_off.py), recorded
#    before the change (first_call first, +130 % re-assessed on the CPU);
# 2. frozen modules' frames known to inspect before the command runs (capture.command_target, edf9b07): the 32nd
#    set's inspect.stack() caller lookup (caller_lookup_per_layer.py), whose recording's plain and traced steps were
#    16x the script's own.
# Each bad variant through `kprof run --mode nsys` (its opportunities, plain step), then both variants' own step
# times (`--time`, no profiler) for the measured gain.
# From the repository root on the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/plans_and_frames_2026-11-29.sh
tar xJf out/rec14carry/nsyslibs.tar.xz; mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
date -u
mkdir -p /tmp/pf
for s in fft_plan_cache_off caller_lookup_per_layer; do
  t0=$SECONDS
  timeout 80 python3 -m kprof_mcp.cli run --mode nsys --cwd tests/calibration/commands --json -- python $s.py --variant bad --steps 12 > /tmp/pf/$s.json 2> /tmp/pf/$s.err
  echo "== $s bad through kprof run --mode nsys: rc=$? $((SECONDS - t0)) s"
  tail -2 /tmp/pf/$s.err | cut -c1-300
  python3 - /tmp/pf/$s.json <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read() or "{}")
for i, o in enumerate(((d.get("summary") or {}).get("opportunities") or [])[:3], 1):
    print(f"  {i}. [{o.get('cause')}] {str(o.get('name'))[:230]} est {o.get('est_gain_pct'):.1f}%")
r = d.get("result") or {}
rp = ((r.get("timeline") or {}).get("idle") or {}).get("replay") or {}
print("  plain_ns", rp.get("plain_ns"), "recorded_ns", rp.get("recorded_ns"), "base_ns", rp.get("base_ns"))
PY
  for v in bad good; do
    (cd tests/calibration/commands && timeout 25 python3 $s.py --variant $v --steps 20 --time) | tail -1 | python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print('  $v own step (us):', round(d['step_ns_median']/1e3, 1))"
  done
done
date -u

#!/usr/bin/env bash
# Three changes of the 2026-11-29 evening session through the tool end to end on the GPU:
# 1. a command stage's model may state int_ops (6680d05): int_ops_command.py's rank counting (N^2 integer compares a
#    row) through `kprof run --mode annotation`, its model with and without int_ops, then both variants' own steps;
# 2. the over-model what-if no longer hidden by the TF32 move (7c24fae): the 37th held-back set's reverse-mode
#    Jacobians (tests/calibration/commands/jacrev_tall.py) through `kprof run --mode nsys` with its model;
# 3. the runner's __main__ frames known to inspect (5cbfc95, not run live before): the 32nd set's inspect.stack()
#    caller lookup (caller_lookup_per_layer.py) through `kprof run --mode nsys`, then its own steps.
# From the repository root on the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/int_ops_and_frames_2026-11-29.sh
tar xJf out/rec14carry/nsyslibs.tar.xz; mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
date -u
mkdir -p /tmp/io
show() {
  python3 - "$1" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read() or "{}")
for i, o in enumerate(((d.get("summary") or {}).get("opportunities") or [])[:3], 1):
    print(f"  {i}. [{o.get('cause')}] {str(o.get('name'))[:260]} est {o.get('est_gain_pct'):.1f}% :: {str(o.get('trigger'))[:260]}")
r = d.get("result") or {}
for s in r.get("stages") or []:
    print("  stage", s.get("name"), "median_ns", (s.get("timing") or {}).get("median_ns"), "int_ops", s.get("int_ops"))
rp = ((r.get("timeline") or {}).get("idle") or {}).get("replay") or {}
if rp:
    print("  plain_ns", rp.get("plain_ns"), "recorded_ns", rp.get("recorded_ns"), "base_ns", rp.get("base_ns"))
PY
}
E=docs/evidence/machine-model/int_ops_command.py
M=$(python3 $E --model)
B=$(python3 -c "import json; print(int(json.loads('$M')['bytes']))"); I=$(python3 -c "import json; print(int(json.loads('$M')['int_ops']))")
for spec in "ranks:flops=0,bytes=$B,dtype=int32" "ranks:flops=0,bytes=$B,dtype=int32,int_ops=$I"; do
  t0=$SECONDS
  timeout 110 python3 -m kprof_mcp.cli run --mode annotation --max-kernels 8 --model "$spec" --json -- python $E --variant bad --steps 6 > /tmp/io/ranks.json 2> /tmp/io/ranks.err
  echo "== int_ops_command bad, --model $spec, annotation: rc=$? $((SECONDS - t0)) s"; tail -2 /tmp/io/ranks.err | cut -c1-300
  show /tmp/io/ranks.json
done
for v in bad good; do timeout 40 python3 $E --variant $v --steps 20 --time | tail -1; done
t0=$SECONDS
timeout 100 python3 -m kprof_mcp.cli run --mode nsys --cwd tests/calibration/commands --model "step:flops=1.8e10,bytes=3e8,dtype=float32" --json -- python jacrev_tall.py --variant bad --steps 12 > /tmp/io/jac.json 2> /tmp/io/jac.err
echo "== jacrev_tall bad, nsys: rc=$? $((SECONDS - t0)) s"; tail -2 /tmp/io/jac.err | cut -c1-300
show /tmp/io/jac.json
for v in bad good; do (cd tests/calibration/commands && timeout 30 python3 jacrev_tall.py --variant $v --steps 20 --time | tail -1); done
t0=$SECONDS
timeout 90 python3 -m kprof_mcp.cli run --mode nsys --cwd tests/calibration/commands --json -- python caller_lookup_per_layer.py --variant bad --steps 12 > /tmp/io/cl.json 2> /tmp/io/cl.err
echo "== caller_lookup_per_layer bad, nsys: rc=$? $((SECONDS - t0)) s"; tail -2 /tmp/io/cl.err | cut -c1-300
show /tmp/io/cl.json
for v in bad good; do (cd tests/calibration/commands && timeout 25 python3 caller_lookup_per_layer.py --variant $v --steps 20 --time | tail -1); done
date -u

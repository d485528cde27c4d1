#!/usr/bin/env bash
# The integer command stage live (issue 36's int_ops, 6680d05): `kprof run --mode annotation --include ranks` of
# int_ops_command.py after the fix that lets it finish (181c1bd), its stage model without and with int_ops,
# then both variants' own steps (the measured gain).
# From the repository root on the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/int_ops_live_2026-11-29.sh
tar xJf out/rec14carry/nsyslibs.tar.xz; mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
python3 -c "from kprof_mcp import sandbox; print('landlock', sandbox.available())"
date -u
mkdir -p /tmp/io
show() {
  python3 - "$1" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read() or "{}")
if "error" in d:
    print("  error:", str(d["error"])[:600])
for i, o in enumerate(((d.get("summary") or {}).get("opportunities") or [])[:3], 1):
    print(f"  {i}. [{o.get('cause')}] {str(o.get('name'))[:260]} est {o.get('est_gain_pct'):.1f}% :: {str(o.get('trigger'))[:300]}")
r = d.get("result") or {}
for s in r.get("stages") or []:
    print("  stage", s.get("name"), "median_ns", (s.get("timing") or {}).get("median_ns"), "int_ops", s.get("int_ops"))
PY
}
E=docs/evidence/machine-model/int_ops_command.py
M=$(python3 $E --model)
B=$(python3 -c "import json; print(int(json.loads('$M')['bytes']))"); I=$(python3 -c "import json; print(int(json.loads('$M')['int_ops']))")
for spec in "ranks:flops=0,bytes=$B,dtype=int32" "ranks:flops=0,bytes=$B,dtype=int32,int_ops=$I"; do
  t0=$SECONDS
  timeout 200 python3 -m kprof_mcp.cli run --mode annotation --include ranks --max-kernels 12 --timeout-s 180 --model "$spec" --json -- python $E --variant bad --steps 6 > /tmp/io/ranks.json 2> /tmp/io/ranks.err
  echo "== int_ops_command bad, --model $spec, annotation: rc=$? $((SECONDS - t0)) s"; tail -2 /tmp/io/ranks.err | cut -c1-300
  show /tmp/io/ranks.json
done
for v in bad good; do timeout 40 python3 $E --variant $v --steps 20 --time | tail -1; done
echo "left running:"; ps -eo pid,ppid,etimes,args | grep -E "[n]cu |[n]sys |kprof_mcp.(child|sandbox)" | cut -c1-200
date -u

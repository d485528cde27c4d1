# A round trip through the host (issue 36, analysis/replay/transforms.round_trip_host_ns): the seventeenth held-back
# set's CPU head (tests/calibration/commands/cpu_head.py; bad: the head left on the CPU, features down, logits up
# every step; good: the head on the GPU), through `kprof run --mode nsys` as the set recorded them. From the
# repository root on the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/round_trip_2026-11-27.sh
tar xJf out/rec14carry/nsyslibs.tar.xz
mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; date -u
  python3 -c "import torch,triton;print(torch.__version__,triton.__version__)"; } > $OUT/env.txt
mkdir -p $OUT/cmd
for v in good bad; do
  timeout 250 python3 -c "import sys; from kprof_mcp.cli import main; sys.exit(main())" --workspace $PWD/tests/calibration \
    run --mode nsys --cwd commands --model step:flops=5.7e11,bytes=5.5e8,dtype=bfloat16,tc=1 --json \
    -- python cpu_head.py --variant $v --steps 20 > $OUT/cmd/cpu_head_$v.json 2> $OUT/cmd/cpu_head_$v.err
  python3 - $OUT/cmd/cpu_head_$v.json <<'PY' 2>&1 | tee -a $OUT/summary.txt
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("==", sys.argv[1], "no json", e); sys.exit()
s, r = d.get("summary", {}), d["result"]
print("==", sys.argv[1].rsplit("/", 1)[-1], "total_us", s.get("total_duration_us"),
      "replay", (r.get("timeline") or {}).get("idle", {}).get("replay", {}).get("round_trip_host_ns"))
for o in s.get("opportunities", [])[:3]:
    print(f"  {o['est_gain_pct']:8.1f}%  {o.get('cause','')}  [{o.get('stage')}] {o['name'][:110]}")
    print(f"            trigger: {o['trigger'][:200]}")
PY
done
for v in bad good; do  # each variant's step without a profiler (the script's own timing)
  (cd tests/calibration/commands && timeout 120 python3 cpu_head.py --variant $v --time --rounds 3 2>&1 | tail -1 | sed "s/^/unprofiled $v: /") | tee -a $OUT/summary.txt
done
cd $OUT && tar czf cmd.tgz cmd && rm -rf cmd

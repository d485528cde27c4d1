# Leading occurrences over ten times the median are warm-up too (issue 36, analysis/command.py): the sixteenth
# held-back set's autotuning loop (tests/calibration/commands/autotune_every_step.py; good: the autotuner keyed on
# D alone, tuned once, in its second step) and its bad variant (tuned every step), through `kprof run --mode nsys`
# as the set recorded them. From the repository root on the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/warmup_outliers_2026-11-27.sh
tar xJf out/rec14carry/nsyslibs.tar.xz
mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; date -u
  python3 -c "import torch,triton;print(torch.__version__,triton.__version__)"; } > $OUT/env.txt
mkdir -p $OUT/cmd
for v in good bad; do
  timeout 250 python3 -c "import sys; from kprof_mcp.cli import main; sys.exit(main())" --workspace $PWD/tests/calibration \
    run --mode nsys --cwd commands --model step:flops=1.3e12,bytes=6.0e8,dtype=bfloat16,tc=1 --json \
    -- python autotune_every_step.py --variant $v --steps 20 > $OUT/cmd/autotune_$v.json 2> $OUT/cmd/autotune_$v.err
  python3 - $OUT/cmd/autotune_$v.json <<'PY' 2>&1 | tee -a $OUT/summary.txt
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("==", sys.argv[1], "no json", e); sys.exit()
s, r = d.get("summary", {}), d["result"]
print("==", sys.argv[1].rsplit("/", 1)[-1], "total_us", s.get("total_duration_us"),
      "notes", [w.get("message", "")[:160] for w in r.get("warnings", []) if "warm-up" in w.get("message", "")])
for o in s.get("opportunities", [])[:3]:
    print(f"  {o['est_gain_pct']:8.1f}%  {o.get('cause','')}  [{o.get('stage')}] {o['name'][:110]}")
    print(f"            trigger: {o['trigger'][:200]}")
PY
done
cd $OUT && tar czf cmd.tgz cmd && rm -rf cmd

# The nineteenth held-back set's misses, profiled live after the changes they led to (issue 36): the crop
# gathered through a materialised index (calib_index_crop v0; v1 the strided slice) in annotation mode (an input
# the reference never reads: analysis/diagnosis/passes.py), both versions' event-mode times for the measured
# gain, and the convolutions with cuDNN off (tests/calibration/commands/cudnn_disabled.py, bad and good) through
# `kprof run --mode nsys` (the library fallback's what-if: analysis/diagnosis/catalogue.library_gemm_excess; the
# GPU metrics flag as this nsys's `profile --help` lists it: tools/nsys.gpu_metrics_flag). From the repository
# root on the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/heldout19_fixes_2026-11-28.sh
set -x
tar xJf out/rec14carry/nsyslibs.tar.xz
export LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH
PAIRS='calib_index_crop:v0:annotation calib_index_crop:v1:annotation
calib_index_crop:v0:event calib_index_crop:v1:event calib_index_crop:v0:event calib_index_crop:v1:event' \
  BUDGET_S=200 bash docs/evidence/machine-model/passes_2026-11-27.sh
mv $OUT/r.tgz $OUT/kernels.tgz
export PYTHONPATH=/tmp/site:$PWD
python3 -c "from pathlib import Path; from kprof_mcp.tools import nsys as N; print([(str(p), N.version(p), N.gpu_metrics_flag(p)) for p in N.candidates()])" | tee -a $OUT/summary.txt
mkdir -p $OUT/cmd
for v in bad good; do
  timeout 200 python3 -c "import sys; from kprof_mcp.cli import main; sys.exit(main())" --workspace $PWD/tests/calibration \
    run --mode nsys --cwd commands --model step:flops=1.2e11,bytes=1.6e8,dtype=bfloat16,tensor_cores=1 --json \
    -- python cudnn_disabled.py --variant $v --steps 20 > $OUT/cmd/cudnn_$v.json 2> $OUT/cmd/cudnn_$v.err
  python3 - $OUT/cmd/cudnn_$v.json <<'PY' 2>&1 | tee -a $OUT/summary.txt
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("==", sys.argv[1], "no json", e); sys.exit()
s = d.get("summary", {})
r = d.get("result", {})
print("==", sys.argv[1].rsplit("/", 1)[-1], "total_us", s.get("total_duration_us"),
      "gpu_metrics", bool((r.get("timeline") or {}).get("kernel_summary") and any("activity" in k for k in r["timeline"]["kernel_summary"])))
for o in s.get("opportunities", [])[:3]:
    print(f"  {o['est_gain_pct']:8.1f}%  {o.get('cause','')}  [{o.get('stage')}] {o['name'][:110]}")
    print(f"            trigger: {o['trigger'][:200]}")
PY
done
cd $OUT && tar czf cmd.tgz cmd && rm -rf cmd

# The L2's busiest slice as a resource (issue 36, analysis.diagnosis.slices): kernels whose L2 traffic goes to a
# few lines or addresses, and their fixes, profiled in annotation mode through the kprof CLI with the per-slice
# counters (lts__throughput.max, lts__d_atomic_input_cycles_active.avg/.max):
#   bash docs/evidence/machine-model/l2_slices_2026-11-27.sh   (out/rec12carry carried: wheels + nsys libraries)
set -x
mkdir -p .whl && cp out/rec12carry/*.whl .whl/
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD KPROF_KERNEL_PATH=$PWD/tests/calibration/kernels
K() { python3 -c "import sys; from kprof_mcp.cli import main; sys.exit(main())" "$@"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; date -u
  python3 -c "import torch,triton;print(torch.__version__,triton.__version__)"; } > $OUT/env.txt
mkdir -p $OUT/r
start=$(date +%s)
for kv in calib_histogram:v0 calib_lut_bypass:v0 calib_atomic_order:v0 calib_histogram:v1 calib_lut_bypass:v1 \
          calib_atomic_order:v1 calib_atomic:v0 calib_chained_scan:v0 calib_atomic_epilogue:v0 calib_chained_scan:v1; do
  k=${kv%:*}; v=${kv#*:}
  [ $(( $(date +%s) - start )) -gt ${BUDGET_S:-480} ] && { echo "skip $kv (time)"; continue; }
  timeout 110 bash -c "$(declare -f K); K profile $k --version $v --mode annotation --json" > $OUT/r/${k}_$v.json 2> $OUT/r/${k}_$v.err
  python3 - $OUT/r/${k}_$v.json <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("==", sys.argv[1], "no json", e); sys.exit()
s = d.get("summary", {}); st = d["result"]["stages"][0]
acc = st.get("accounting") or {}
print("==", sys.argv[1].rsplit("/", 1)[-1], st.get("name"), s.get("total_duration_us"), {k: acc.get(k) for k in
      ("l2_pct", "l2_slice_pct", "l2_atomic_pct", "l2_atomic_slice_pct", "l1_pct")})
for o in s.get("opportunities", [])[:3]:
    print(f"  {o['est_gain_pct']:8.1f}%  {o.get('cause','')}  {o['name'][:120]}")
    print(f"            trigger: {o['trigger'][:160]}")
PY
done 2>&1 | tee $OUT/summary.txt
cd $OUT && tar czf r.tgz r && rm -rf r

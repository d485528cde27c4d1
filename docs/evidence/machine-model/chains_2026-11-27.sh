# Chains of dependent memory round trips (issue 36, parsers/ttir_chase, parallelism.chain_share) on the GPU:
# the calibration kernels whose loops chase pointers, probe or poll, and their fixes, profiled in annotation
# mode through the kprof CLI (the TTIR read at capture: ir_ops lists the chains):
#   bash docs/evidence/machine-model/chains_2026-11-27.sh   (out/rec14carry carried: the wheels as one site.tar.xz, the nsys libraries)
set -x
mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD KPROF_KERNEL_PATH=$PWD/tests/calibration/kernels
K() { python3 -c "import sys; from kprof_mcp.cli import main; sys.exit(main())" "$@"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; date -u
  python3 -c "import torch,triton;print(torch.__version__,triton.__version__)"; } > $OUT/env.txt
mkdir -p $OUT/r
start=$(date +%s)
for kv in calib_page_chain:v0 calib_page_chain:v1 calib_hash_probe:v0 calib_chained_scan:v0 \
          calib_bucketize:v1; do
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
      ("l2_pct", "l2_slice_pct", "l1_pct")}, [o for o in (st.get("resources") or {}).get("ir_ops") or [] if o["kind"] == "chase"])
for o in s.get("opportunities", [])[:3]:
    print(f"  {o['est_gain_pct']:8.1f}%  {o.get('cause','')}  {o['name'][:120]}")
    print(f"            trigger: {o['trigger'][:160]}")
PY
done 2>&1 | tee $OUT/summary.txt
cd $OUT && tar czf r.tgz r && rm -rf r

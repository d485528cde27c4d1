# A plan's stages re-reading its data (issue 36, analysis/diagnosis/passes.py) on the GPU: the fourteenth
# held-back set's two-pass variance (v0: a mean pass then a squared-deviation pass over the same 1 GB; v1 one
# Welford pass) and mla_decode (two stages: the combine reads the attend stage's partials once: no re-read),
# profiled in annotation mode through the kprof CLI, then each version's event-mode time for the measured gain:
#   [PAIRS='kernel:version:mode ...'] bash docs/evidence/machine-model/passes_2026-11-27.sh   (out/rec14carry carried: the wheels as one site.tar.xz)
set -x
mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD KPROF_KERNEL_PATH=$PWD/tests/calibration/kernels
K() { python3 -c "import sys; from kprof_mcp.cli import main; sys.exit(main())" "$@"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; date -u
  python3 -c "import torch,triton;print(torch.__version__,triton.__version__)"; } > $OUT/env.txt
mkdir -p $OUT/r
start=$(date +%s)
for kv in ${PAIRS:-calib_two_pass_var:v0:annotation calib_two_pass_var:v1:annotation mla_decode:v3:annotation \
          calib_two_pass_var:v0:event calib_two_pass_var:v1:event calib_two_pass_var:v0:event calib_two_pass_var:v1:event}; do
  IFS=: read k v mode <<< "$kv"
  [ $(( $(date +%s) - start )) -gt ${BUDGET_S:-400} ] && { echo "skip $kv (time)"; continue; }
  f=$OUT/r/${k}_${v}_${mode}$( [ -e $OUT/r/${k}_${v}_${mode}.json ] && echo _2 ).json
  timeout 150 bash -c "$(declare -f K); K profile $k --version $v --mode $mode --json" > $f 2> ${f%.json}.err
  python3 - $f <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("==", sys.argv[1], "no json", e); sys.exit()
r = d["result"]; s = d.get("summary", {})
print("==", sys.argv[1].rsplit("/", 1)[-1], "total_us", s.get("total_duration_us"), "data_bytes", r.get("data_bytes"),
      [(st["name"], st.get("dram_read_bytes"), st.get("dram_bytes"), st["timing"]["median_ns"]) for st in r["stages"]])
for o in s.get("opportunities", [])[:3]:
    print(f"  {o['est_gain_pct']:8.1f}%  {o.get('cause','')}  [{o.get('stage')}] {o['name'][:110]}")
    print(f"            trigger: {o['trigger'][:200]}")
PY
done 2>&1 | tee $OUT/summary.txt
cd $OUT && tar czf r.tgz r && rm -rf r

# This session's diagnosis changes run live on the GPU machine, end to end through the kprof CLI (issue 36):
#   bash docs/evidence/machine-model/live_check_2026-11-27.sh   (out/rec12carry carried: wheels + nsys libraries)
# The CSR product and the host-drawn noise (command pairs of the eleventh held-back set) in nsys mode, and the
# acquire-release scatter-add (the twelfth set) in annotation mode: their contracts' opportunities.
set -x
mkdir -p .whl && cp out/rec12carry/*.whl .whl/ && tar xJf out/rec12carry/nsyslibs.tar.xz
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH KPROF_KERNEL_PATH=$PWD/tests/calibration/kernels
K() { python3 -c "import sys; from kprof_mcp.cli import main; sys.exit(main())" "$@"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; date -u
  python3 -c "import torch,triton;print(torch.__version__,triton.__version__)"; } > $OUT/env.txt
C=tests/calibration/commands
for v in bad good; do
  timeout 170 bash -c "$(declare -f K); K run --mode nsys --model step:flops=3.4e10,bytes=1.1e8,dtype=float32 --json -- python3 $C/sparse_half_dense.py --variant $v --steps 20" > $OUT/sparse_$v.json 2> $OUT/sparse_$v.err
done
timeout 170 bash -c "$(declare -f K); K run --mode nsys --model step:flops=9.8e11,bytes=1.0e9,dtype=bfloat16,tc=1 --json -- python3 $C/host_randn.py --variant bad --steps 20" > $OUT/randn_bad.json 2> $OUT/randn_bad.err
timeout 150 bash -c "$(declare -f K); K profile calib_atomic_order --version v0 --mode annotation --json" > $OUT/atomic_v0.json 2> $OUT/atomic_v0.err
for f in $OUT/*.json; do
  python3 - "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d.get("summary", {})
print("==", sys.argv[1].rsplit("/", 1)[-1], s.get("status"), d.get("error", ""), s.get("total_duration_us"))
for o in s.get("opportunities", [])[:4]:
    print(f"  {o['est_gain_pct']:8.1f}%  {o.get('cause','')}  {o['name'][:150]}")
    print(f"            trigger: {o['trigger'][:160]}")
PY
done 2>&1 | tee $OUT/summary.txt
cd $OUT && tar czf errs.tgz *.err && rm -f *.err

# The fifteenth held-back set's misses, profiled live after the changes they led to (issue 36): an output
# zero-filled before a kernel that writes all of it (calib_zeroed_out v0; v1 the kernel alone) in annotation
# mode (the stages' DRAM writes against the data: analysis/diagnosis/passes.py), both versions' event-mode
# times for the measured gain, the needless split-K (v0) as it reads now, and the one-stream ensemble
# (tests/calibration/commands/ensemble_one_stream.py, bad and good) through `kprof run --mode nsys` (the
# batch replay as the streams cause; analysis/diagnosis/timeline.py). From the repository root on the GPU
# machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/heldout15_fixes_2026-11-27.sh
set -x
tar xJf out/rec14carry/nsyslibs.tar.xz
export LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH
PAIRS='calib_zeroed_out:v0:annotation calib_zeroed_out:v1:annotation calib_needless_splitk:v0:annotation
calib_zeroed_out:v0:event calib_zeroed_out:v1:event calib_zeroed_out:v0:event calib_zeroed_out:v1:event' \
  BUDGET_S=330 bash docs/evidence/machine-model/passes_2026-11-27.sh
mv $OUT/r.tgz $OUT/kernels.tgz
export PYTHONPATH=/tmp/site:$PWD
mkdir -p $OUT/cmd
for v in bad good; do
  timeout 200 python3 -c "import sys; from kprof_mcp.cli import main; sys.exit(main())" --workspace $PWD/tests/calibration \
    run --mode nsys --cwd commands --model step:flops=3.4e7,bytes=1.34e8,dtype=float32 --json \
    -- python ensemble_one_stream.py --variant $v --steps 20 > $OUT/cmd/ensemble_$v.json 2> $OUT/cmd/ensemble_$v.err
  python3 - $OUT/cmd/ensemble_$v.json <<'PY' 2>&1 | tee -a $OUT/summary.txt
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("==", sys.argv[1], "no json", e); sys.exit()
s = d.get("summary", {})
print("==", sys.argv[1].rsplit("/", 1)[-1], "total_us", s.get("total_duration_us"))
for o in s.get("opportunities", [])[:3]:
    print(f"  {o['est_gain_pct']:8.1f}%  {o.get('cause','')}  [{o.get('stage')}] {o['name'][:110]}")
    print(f"            trigger: {o['trigger'][:200]}")
PY
done
cd $OUT && tar czf cmd.tgz cmd && rm -rf cmd

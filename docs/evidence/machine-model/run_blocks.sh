# Issue 36 on the GPU machine: the block scheduler and the SMs' active share through the product.
# From the repository root, `.whl` carried:  bash docs/evidence/machine-model/run_blocks.sh
# Writes $OUT/env.txt, $OUT/calibration.json (kprof device --calibrate: every pipe, level and the block
# scheduler), $OUT/log.txt and $OUT/contracts.tgz (calib_row_programs v0/v1 in event and annotation mode,
# calib_segment_imbalance v0 in annotation mode). About 4 minutes.
set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
(date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; python3 -c "import torch,triton;print(torch.__version__,triton.__version__)") > $OUT/env.txt 2>&1
LOG=$OUT/log.txt
kprof() { timeout 200 python3 -m kprof_mcp.cli "$@"; }
[ -z "$SKIP_CALIBRATE" ] && { kprof device --calibrate >> $LOG 2>&1; echo "calibrate rc=$?" >> $LOG; }
cp out/device/calibration-*.json $OUT/calibration.json 2>> $LOG
mkdir -p /tmp/c
K=tests/calibration/kernels
for v in v0 v1; do
  for mode in event annotation; do
    kprof profile $K/calib_row_programs --version $v --mode $mode --quiet > /tmp/c/rows_${v}_$mode.contract.md 2> /tmp/err
    echo "rows $v $mode rc=$?" >> $LOG; cat /tmp/err >> $LOG
    d=$(sed -n 's/^profile_dir: //p' /tmp/err); [ -n "$d" ] && cp $d/result.json /tmp/c/rows_${v}_$mode.result.json
  done
done
kprof profile $K/calib_segment_imbalance --version v0 --mode annotation --quiet > /tmp/c/segments_v0_annotation.contract.md 2>> $LOG
echo "segments v0 annotation rc=$?" >> $LOG
tar czf $OUT/contracts.tgz -C /tmp c
grep -h -A3 "Root cause\|Key Issue\|^| 1 " /tmp/c/*.md | head -60

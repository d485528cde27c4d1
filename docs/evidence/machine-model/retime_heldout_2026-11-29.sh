#!/usr/bin/env bash
# Held-back host-, launch- and sync-class commands: five more bad variants re-recorded with the floor
# (op_floor_heldout_2026-11-29.py), then bad and good timed without a profiler on the same machine
# (retime_heldout_2026-11-29.py). From the repository root on the GPU machine, out/rec14carry carried:
#   END_S=540 REC="subclass_meta ..." TIME="per_item_matmul ..." bash docs/evidence/machine-model/retime_heldout_2026-11-29.sh
tar xJf out/rec14carry/nsyslibs.tar.xz; mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch; print(torch.__version__)"
t0=$(date +%s); mkdir -p /tmp/fl
if [ -n "$REC" ]; then
  python3 docs/evidence/machine-model/op_floor_heldout_2026-11-29.py /tmp/fl ${REC_S:-280} $REC 2>&1 | tee /tmp/fl/run.log
fi
left=$(( ${END_S:-540} - ($(date +%s) - t0) ))
python3 docs/evidence/machine-model/retime_heldout_2026-11-29.py /tmp/fl $left ${ROUNDS:-2} ${STEPS:-20} $TIME 2>&1 \
  | tee /tmp/fl/retime.log
cd /tmp/fl && tar cf $OUT/retime.tar .

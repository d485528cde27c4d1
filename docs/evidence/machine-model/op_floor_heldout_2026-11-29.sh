#!/usr/bin/env bash
# The held-back host-, launch- and sync-class commands' bad variants re-recorded with the floor in their own trace
# (op_floor_heldout_2026-11-29.py says what is kept). From the repository root on the GPU machine, out/rec14carry
# carried:   END_S=480 bash docs/evidence/machine-model/op_floor_heldout_2026-11-29.sh
tar xJf out/rec14carry/nsyslibs.tar.xz; mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch; print(torch.__version__)"
mkdir -p /tmp/fl
python3 docs/evidence/machine-model/op_floor_heldout_2026-11-29.py /tmp/fl ${END_S:-480} ${CMDS:-per_item_matmul \
  stat_hooks lstm_cell_loop optimizer_loop anomaly_mode log_format gc_every_step memory_history csan_left_on \
  tensor_from_lists dist_validate cpu_head host_randn gil_thread dataloader_workers} 2>&1 | tee /tmp/fl/run.log
cd /tmp/fl && tar cf $OUT/floor_heldout.tar .

#!/usr/bin/env bash
# A command's host step under kprof against the script's own, after capture.command_target.frozen_frames_known
# (2026-11-29): the thirty-second held-back set's tracing helper (inspect.stack() in every module's forward) had
# its plain-pass step at 117.0 ms and its traced step at 191 ms in kprof's child against 7.3 ms in the script's own
# timing (recorded-heldout32: kprof's frozen runpy frames made inspect.getmodule scan every loaded module at every
# call). From the repository root on the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/frozen_frames_2026-11-29.sh
tar xJf out/rec14carry/nsyslibs.tar.xz; mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
(cd tests/calibration/commands && python3 caller_lookup_per_layer.py --variant bad --time --steps 20 --rounds 3 2>&1 | tail -2)
timeout ${KPROF_S:-150} python3 -m kprof_mcp.cli --workspace tests/calibration/commands run --mode nsys \
  -- python caller_lookup_per_layer.py --variant bad --steps 12 2>&1 | grep -iE "without a profiler|plain|^\| step|^1\. |^2\. " | cut -c1-400
date -u

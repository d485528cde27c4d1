#!/usr/bin/env bash
# The contended atomics' memory-wait reading without the fences' waits (catalogue.accounting_causes, 56ae33a,
# 2026-11-29 13:25 UTC) through the tool end to end on the GPU: the scatter-add at acq_rel (held-back set 12's
# calib_atomic_order) and the CAS-loop float max (set 13's calib_cas_max), each bad version profiled in annotation
# mode (its contract's opportunities), then bad vs fixed in compare (event mode, interleaved) for the measured gain.
# From the repository root on the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/atomics_fences_2026-11-29.sh
tar xJf out/rec14carry/nsyslibs.tar.xz; mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
git log --oneline -1 2>/dev/null; date -u
k="python3 -m kprof_mcp.cli --workspace tests/calibration --kernels-dir tests/calibration/kernels"
for kern in ${KERNELS:-calib_atomic_order calib_cas_max}; do
  t0=$SECONDS
  $k profile $kern --version v0 --mode annotation > /tmp/$kern.contract.md 2> /tmp/$kern.err
  echo "== $kern v0 annotation rc=$? $((SECONDS - t0)) s"
  grep -E "^(1|2|3)\. |^\| [a-z_]+ \| [0-9]|Bottleneck|Root cause" /tmp/$kern.contract.md | cut -c1-420 | head -10
  tail -3 /tmp/$kern.err | cut -c1-300
  t0=$SECONDS
  $k compare $kern v0 v1 --rounds ${ROUNDS:-3} 2>&1 | grep -E "faster|slower|^\| v[01] " | head -6
  echo "== $kern compare $((SECONDS - t0)) s"
done
date -u

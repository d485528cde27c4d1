#!/usr/bin/env bash
# The machine-model changes of 2026-11-29 (FMUL and FADD pairs -> FFMA, a move within the FMA pipe; the issue slots
# shared by the work's op class) through the tool end to end on the GPU: each kernel's bad version profiled in
# annotation mode (opportunity 1 of its contract), then bad vs fixed in compare (event mode, interleaved) for the
# measured gain. From the repository root on the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/contraction_2026-11-29.sh
# Run 2026-11-29 08:49-08:52 UTC on an H200 (contraction_2026-11-29.log; the compare's verdict was cut by the first
# run's `tail -8` and taken again in a second call, as the script now prints it).
tar xJf out/rec14carry/nsyslibs.tar.xz; mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
git log --oneline -1 2>/dev/null; date -u
k="python3 -m kprof_mcp.cli --workspace tests/calibration --kernels-dir tests/calibration/kernels"
for kern in ${KERNELS:-calib_poly_powers calib_bucketize}; do
  t0=$SECONDS
  $k profile $kern --version v0 --mode annotation > /tmp/$kern.contract.md 2> /tmp/$kern.err
  echo "== $kern v0 annotation rc=$? $((SECONDS - t0)) s"
  grep -E "^(1|2|3)\. |bound|limiter" /tmp/$kern.contract.md | cut -c1-400 | head -8
  t0=$SECONDS
  $k compare $kern v0 v1 --rounds ${ROUNDS:-3} 2>&1 | grep -v "^\s*$" | head -14
  echo "== $kern compare $((SECONDS - t0)) s"
done

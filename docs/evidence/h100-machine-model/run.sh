# Issue 36 end to end on the GPU machine: the kprof CLI profiles two kernels of the machine-model set
# in annotation mode (Nsight Compute, clocks locked) with the code of this commit, and the contracts
# show the limiter, the what-if and the source line. Run from the repository root through the device
# tool with .whl carried:  bash docs/evidence/h100-machine-model/run.sh
set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
(date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; python3 -c "import torch,triton;print(torch.__version__,triton.__version__)"; git log -1 --format=%H 2>/dev/null) > $OUT/env.txt 2>&1
for k in calib_fdiv calib_fp64; do
  timeout 110 python3 -m kprof_mcp.cli profile tests/calibration/kernels/$k --version v0 --mode annotation > $OUT/$k.contract.md 2> $OUT/$k.log
  echo "$k rc=$?"
done
d=$(ls -d out/profiles/*/*/* 2>/dev/null | head -5); echo "$d"
tar czf $OUT/profiles.tgz out/profiles 2>/dev/null; ls -la $OUT

# Record calibration pairs on the GPU machine (see tests/calibration/record.py), e.g. through the
# device tool, with .whl (wheels of this package's dependencies for the GPU machine) and .nsyslibs
# (the libraries Nsight Systems' importer needs) carried:
#   bash scripts/record_calibration_gpu.sh "strided access" "random gather" ...
# Writes $OUT/env.txt, $OUT/record.log and $OUT/rec.tgz (the recorded/ tree, to unpack into
# tests/calibration/ and merge measured.json). Pairs must fit one 10-minute call (~70 s each).
set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.current.sm,clocks.max.sm --format=csv > $OUT/env.txt; date -u >> $OUT/env.txt
python3 -c "import torch,triton;print(torch.__version__,triton.__version__)" >> $OUT/env.txt
timeout 560 python3 tests/calibration/record.py --out $OUT/rec --pairs "$@" 2>&1 | tee $OUT/record.log | grep -v "^\s*$" | tail -40
cd $OUT && tar czf rec.tgz rec && rm -rf rec

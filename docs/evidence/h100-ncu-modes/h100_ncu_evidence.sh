# How docs/evidence/h100-ncu-modes/README.md and tests/fixtures/h100_ncu/ were recorded on the lent H100
# (run from the repository root with the device wheels in .whl/; see the device README).
set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD
WS=/tmp/ws7; rm -rf $WS; mkdir -p $WS/docs; cp -r docs/kernels $WS/docs/
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
python3 -c "import torch, triton, sys; print(torch.__version__, triton.__version__, sys.version.split()[0])"
for m in annotation ncu; do
  timeout 220 python3 scripts/profile_all_via_mcp.py $WS $OUT/$m.md --mode $m $([ $m = ncu ] && echo --no-devlog) > $OUT/$m.log 2>&1; echo "rc=$?"; grep -v "^ " $OUT/$m.log | tail -6
done
python3 scripts/collect_ncu_fixtures.py $WS/out/profiles /tmp/fx > /dev/null
R=$(ls -d $WS/out/profiles/ncu/matmul/*/*-v1* | head -1)
/opt/nvidia/nsight-compute/2025.3.1/ncu --import $R/profile.ncu-rep --csv --page details --print-units base --print-details all > /tmp/fx/ncu_matmul_v1_details.csv 2>&1
timeout 280 python3 benchmarks/bench_annotation_vs_ncu.py --rounds 2 --workspace /tmp/wsb > $OUT/bench.txt 2>&1; echo "bench rc=$?"; tail -14 $OUT/bench.txt
cd /tmp && tar czf $OUT/fx.tgz fx && cd $WS && tar czf $OUT/ws7.tgz --exclude='*.cubin' --exclude='*.ncu-rep' out docs

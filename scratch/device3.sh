set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD
python3 scratch/probe.py "/tmp/ws/out/profiles/ncu/*/*/*/profile.ncu-rep" 2>&1 | head -30
WS=/tmp/ws3; rm -rf $WS; mkdir -p $WS/docs; cp -r docs/kernels $WS/docs/
timeout 200 python3 scripts/profile_all_via_mcp.py $WS $OUT/ncu.md --mode ncu --no-devlog > $OUT/ncu.log 2>&1; echo "rc=$?"; grep -v "^ " $OUT/ncu.log | tail -8
R=$(ls -d $WS/out/profiles/ncu/matmul/*/*-v1* | head -1)
/opt/nvidia/nsight-compute/2025.3.1/ncu --import $R/profile.ncu-rep --csv --page details --print-units base --print-details all > $OUT/matmul_v1_details.csv 2>&1; wc -l $OUT/matmul_v1_details.csv
timeout 330 python3 tests/benchmark/bench_annotation_vs_ncu.py --rounds 2 --workspace /tmp/wsb > $OUT/bench.txt 2>&1; echo "bench rc=$?"; tail -15 $OUT/bench.txt
cd $WS && tar czf $OUT/ws3.tgz out

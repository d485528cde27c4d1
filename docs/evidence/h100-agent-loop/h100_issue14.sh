# Issue 14 on the GPU machine (device tool), with .whl carried:
#   bash docs/evidence/h100-agent-loop/h100_issue14.sh loop|annotation|faults [args]
#   loop:       benchmarks/bench_agent_loop.py (fresh script vs first/same/edited profile via MCP)
#   annotation: benchmarks/bench_annotation_vs_ncu.py (warm vs fresh vs bare ncu)
#   faults:     docs/evidence/h100-agent-loop/warm_faults.py (illegal access, segfault, hang, OOM, edits in warm workers)
#   exp:        docs/evidence/h100-agent-loop/exp_first_profile.py (worker start-up and CUPTI batch costs, step by step)
#   compare:    kprof compare matmul v1 v3 --mode annotation (counters side by side), and matmul v3 at
#               K=4096 vs K=4095 (one version at two parameter sets), softmax v1 vs v2 in ncu mode
# Everything lands in $OUT (env.txt, <what>.log, <what>.tgz).
set -x
what=${1:-loop}; shift || true
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/env.txt; date -u >> $OUT/env.txt
python3 -c "import torch,triton;print('torch',torch.__version__,'triton',triton.__version__)" >> $OUT/env.txt
mkdir -p $OUT/$what
R=$PWD
case $what in
loop)
  timeout 560 python3 benchmarks/bench_agent_loop.py --workspace /tmp/kprof-loop "$@" 2>&1 | tee $OUT/$what/loop.log | tail -40 ;;
annotation)
  timeout 560 python3 benchmarks/bench_annotation_vs_ncu.py --workspace /tmp/kprof-ann "$@" 2>&1 | tee $OUT/$what/annotation.log | tail -40 ;;
faults)
  timeout 560 python3 docs/evidence/h100-agent-loop/warm_faults.py /tmp/kprof-faults 2>&1 | tee $OUT/$what/faults.log | tail -60 ;;
exp)
  timeout 300 python3 docs/evidence/h100-agent-loop/exp_first_profile.py 2>&1 | tee $OUT/$what/exp.log | tail -20 ;;
compare)
  K="python3 -m kprof_mcp.cli --workspace /tmp/kprof-cmp"
  ( set -x; time $K compare matmul v1 v3 --mode annotation ) > $OUT/$what/matmul_v1_v3_annotation.md 2>$OUT/$what/matmul_v1_v3_annotation.err
  ( set -x; time $K compare matmul v3 --set K=4096 --set K=4095 ) > $OUT/$what/matmul_v3_K4096_K4095.md 2>$OUT/$what/matmul_v3_K.err
  ( set -x; time $K compare softmax v1 v2 --mode ncu ) > $OUT/$what/softmax_v1_v2_ncu.md 2>$OUT/$what/softmax_v1_v2_ncu.err
  cp -r /tmp/kprof-cmp/out/profiles/compare $OUT/$what/compare_dirs
  tail -n 5 $OUT/$what/*.err; head -60 $OUT/$what/matmul_v1_v3_annotation.md ;;
esac
cd $OUT && tar czf $what.tgz $what && rm -rf $what

#!/usr/bin/env bash
# Issue 16 on the GPU machine: a Dask scheduler and `kprof worker` (one Dask worker per GPU) as
# separate processes on this host.
#   bench:  benchmarks/bench_cluster.py — N matmul jobs at once through the MCP server with
#           --cluster, on all GPUs, on one GPU (2+ GPUs), and on a local server; throughput and
#           every job's result against the local server's.
#   nsight: the CLI with --cluster in annotation mode (the .ncu-rep comes back) and a comparison,
#           each beside the same command run locally.
# Run through the device tool with carry [".whl"] (the wheels include distributed); everything
# lands in $OUT.
set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
mkdir -p $OUT/logs $OUT/r
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/env.txt; date -u >> $OUT/env.txt
python3 -c "import torch,triton,distributed;print('torch',torch.__version__,'triton',triton.__version__,'distributed',distributed.__version__)" >> $OUT/env.txt 2>&1
G=${GPUS:-$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)}
what=${1:-all}
if [ $what = all ] || [ $what = bench ]; then
  ( time python3 benchmarks/bench_cluster.py --gpus $G --jobs ${JOBS:-6} --json $OUT/bench.json --logs $OUT/logs ${BENCH_ARGS:-} ) > $OUT/bench.txt 2>&1
  cat $OUT/bench.txt
fi
if [ $what = all ] || [ $what = nsight ]; then
  port=8799; A=tcp://127.0.0.1:$port
  python3 -m distributed.cli.dask_scheduler --host 127.0.0.1 --port $port --dashboard-address :0 2> $OUT/logs/nsight-scheduler.log &
  S=$!; sleep 3
  python3 -m kprof_mcp.cli worker --scheduler $A --gpus $G 2> $OUT/logs/nsight-workers.log &
  WK=$!
  python3 -c "
import time, distributed
c = distributed.Client('$A', timeout=30); c.wait_for_workers($(echo $G | tr ',' '\n' | wc -l), timeout=120); print(c.scheduler_info()['workers'].keys())"
  K="python3 -m kprof_mcp.cli --workspace /tmp/k16"
  run() { name=$1; shift; ( time "$@" ) > $OUT/r/$name.md 2> $OUT/r/$name.err; echo "$name rc=$?" >> $OUT/r/rc.txt; }
  run cluster_annotation $K --cluster $A profile matmul --version v3 --mode annotation --json --quiet
  run local_annotation $K profile matmul --version v3 --mode annotation --json --quiet
  run cluster_compare $K --cluster $A compare matmul v1 v3 --json
  run local_compare $K compare matmul v1 v3 --json
  kill $WK; wait $WK; kill $S
  cat $OUT/r/rc.txt; grep real $OUT/r/*.err
  for f in $OUT/r/*annotation.md; do echo "=== $f"; sed -n 1,30p $f; done
  for f in $OUT/r/*compare.md; do echo "=== $f"; sed -n 1,20p $f; done
  find /tmp/k16/out -name "*.ncu-rep" | xargs ls -la
  cd /tmp/k16/out && find . \( -name "*.md" -o -name "*.json" -o -name "*.csv" \) -print | tar czf $OUT/k16.tgz -T -
fi
cd $OUT && tar czf rl.tgz r logs && rm -rf r logs

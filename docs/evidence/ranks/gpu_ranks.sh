# Issue 39 on two GPUs (device tool, kind nvidia-h100-x2; carry .whl and .nsyslibs):
#   bash docs/evidence/ranks/gpu_ranks.sh
# A 2-rank NCCL job started with torch.multiprocessing.spawn (a bf16 GEMM chain per step, then an
# all_reduce of the result; rank 1 sleeps 40 ms in its step: the planted straggler), profiled with
# `kprof run --mode event` (every rank recorded: ranks, communication, skew, the straggler) and
# `--mode nsys` (Nsight Systems follows the process tree). Writes $OUT/ranks.tgz (the runs' result.json,
# contract.md, report.md) and $OUT/log.txt.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH NCCL_NVLS_ENABLE=0
WS=/tmp/ws39 && rm -rf $WS && mkdir -p $WS
cp tests/fixtures/gpu_ranks_nccl/ddp_job.py $WS/  # the job (one copy, the fixture's)
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log -1 --format='kprof %h %s'
  python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version(), 'gpus', torch.cuda.device_count())"
  echo "== plain run (no profiler): step time"
  (cd $WS && /usr/bin/time -f "wall %e s" python3 ddp_job.py) 2>&1 | tail -2
  for mode in event nsys; do
    echo "== kprof run --mode $mode"
    (cd $WS && timeout 280 python3 -m kprof_mcp.cli run --mode $mode --json -- python ddp_job.py > $WS/run_$mode.json 2> $WS/run_$mode.err; echo "rc=$?")
    tail -5 $WS/run_$mode.err
    python3 - $WS/run_$mode.json <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("no json:", e); sys.exit(0)
print("keys", sorted(d)[:20])
print(json.dumps({k: d.get(k) for k in ("run_dir", "root_cause", "top")}, default=str)[:1500])
PY
  done
} > $OUT/log.txt 2>&1
find $WS/out -name "result.json" -o -name "contract.md" -o -name "report.md" | head -20 >> $OUT/log.txt
(cd $WS && tar czf $OUT/ranks.tgz --exclude='*.sqlite' --exclude='*.nsys-rep' out run_*.json run_*.err ddp_job.py 2>/dev/null)
cat $OUT/log.txt | tail -60

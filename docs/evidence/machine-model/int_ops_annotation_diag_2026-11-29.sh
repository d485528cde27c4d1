#!/usr/bin/env bash
# From the repository root on the GPU machine (out/rec14carry carried). Why int_ops_command.py never finished under `kprof run --mode annotation` (2026-11-29): the script alone, ncu
# alone on it, then kprof with its own child time limit (so it reports what ncu printed).
tar xJf out/rec14carry/nsyslibs.tar.xz; mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
E=docs/evidence/machine-model/int_ops_command.py
t0=$SECONDS; timeout 60 python3 $E --variant bad --steps 3 --time; echo "== plain rc=$? $((SECONDS - t0)) s"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1); echo "ncu: $NCU"
t0=$SECONDS
timeout 90 $NCU --target-processes application-only --nvtx --launch-count 3 --section SpeedOfLight --export /tmp/p1 --force-overwrite python3 $E --variant bad --steps 1 > $OUT/ncu_direct.log 2>&1
echo "== ncu direct rc=$? $((SECONDS - t0)) s"; grep -v "^$" $OUT/ncu_direct.log | tail -15 | cut -c1-250
t0=$SECONDS
timeout 60 python3 -X importtime -c "import kprof_mcp.cli" 2>/dev/null; 
timeout 150 python3 -m kprof_mcp.cli run --mode annotation --max-kernels 4 --timeout-s 100 --model "ranks:flops=0,bytes=8388608,dtype=int32" --json -- python $E --variant bad --steps 2 > $OUT/kprof.json 2> $OUT/kprof.err
echo "== kprof annotation rc=$? $((SECONDS - t0)) s"; tail -5 $OUT/kprof.err | cut -c1-300; head -c 3000 $OUT/kprof.json
ps aux | grep -c "[n]cu" ; ls /tmp/kprof* 2>/dev/null | head
date -u

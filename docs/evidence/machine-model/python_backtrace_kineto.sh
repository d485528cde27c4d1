#!/usr/bin/env bash
# Run on an H200 2026-11-29 08:24-08:26 UTC with CMDS="sync_loop launch_loop" END_S=165 (python_backtrace_kineto_2026-11-29.log):
# python_backtrace on the Kineto engine
# (parsers/kineto_stacks.py: torch.profiler's with_stack names each CUDA call's enclosing user function). Runs the
# bad variants of a sync, an allocation and a launch-loop command through nsys mode with --timeline-engine kineto
# --python-backtrace, and prints each idle cause's Python line (timeline.idle.sources) beside the same command's
# line from Nsight Systems' backtraces; keeps the results. From the repository root on the GPU machine,
# out/rec14carry carried:   END_S=300 bash docs/evidence/machine-model/python_backtrace_kineto.sh
tar xJf out/rec14carry/nsyslibs.tar.xz; mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1
mkdir -p /tmp/pb/out
end=$((SECONDS + ${END_S:-300}))
for s in ${CMDS:-sync_loop alloc_loop launch_loop}; do
  for engine in kineto nsys; do
    left=$((end - SECONDS)); [ $left -lt 25 ] && { echo "== $s $engine skipped (time)"; continue; }
    t0=$SECONDS
    timeout $left python3 -m kprof_mcp.cli run --mode nsys --timeline-engine $engine --python-backtrace \
      --cwd tests/calibration/commands --json -- python $s.py --variant bad --steps 12 > /tmp/pb/$s.$engine.json \
      2> /tmp/pb/$s.$engine.err
    rc=$?
    d=$(grep -o 'profile_dir: .*' /tmp/pb/$s.$engine.err | tail -1 | cut -c14-)
    echo "== $s $engine rc=$rc $((SECONDS - t0)) s"
    [ $rc -ne 0 ] && tail -5 /tmp/pb/$s.$engine.err
    if [ -n "$d" ] && [ -f "$d/result.json" ]; then
      cp "$d/result.json" /tmp/pb/out/$s.$engine.result.json
      python3 - "$d" <<'PY'
import json, sys
from pathlib import Path
res = json.loads((Path(sys.argv[1]) / "result.json").read_text())
idle = (res.get("timeline") or {}).get("idle") or {}
for part, src in (idle.get("sources") or {}).items():
    print(f"  {part}: {src.get('line')} op={src.get('op')} share={src.get('share')}")
PY
      grep -E "^[123]\. " "$d/contract.md" | cut -c1-220
    fi
  done
done
cd /tmp/pb/out && tar cf $OUT/python_backtrace_kineto.tar .

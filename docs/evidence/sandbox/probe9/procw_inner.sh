#!/bin/sh
# Run by repro_proc_write.sh as uid 65534 (HOME, the venv's interpreter visible): PROC_WRITE=1|0, MODE=files|oom.
set -u
base=$1; here=$2; mode=$3; pw=$4
cd /work/main
.venv/bin/python -c "import time; open('$base/standin.pid','w').write(str(__import__('os').getpid())); time.sleep(90)" kprobe9-standin &
sleep 1
S=$(cat $base/standin.pid)
.venv/bin/python - "$base" "$pw" <<'PY'
import sys
from pathlib import Path
from kprof_mcp.sandbox.policy import command_policy
b = Path(sys.argv[1])
for d in ("ws/cmd", "ws/out/ncu/command", "priv"):
    (b / d).mkdir(parents=True, exist_ok=True)
prefix = ["/usr/local/cuda/bin/ncu", "--target-processes", "all"] if sys.argv[2] == "1" else None
p = command_policy(b / "ws", b / "ws" / "cmd", b / "ws/out/ncu/command", b / "priv", prefix)
(b / "policy.json").write_text(p.to_json())
print("policy: proc_write", p.proc_write, "isolate", p.isolate)
PY
arg=""; [ "$mode" = oom ] && arg=oom
.venv/bin/python -m kprof_mcp.sandbox $base/policy.json -- .venv/bin/python $here/attacks/procw.py $S $arg
echo "supervisor exit: $?"
echo "stand-in after: oom_score_adj=$(cat /proc/$S/oom_score_adj) autogroup=$(cat /proc/$S/autogroup 2>&1) comm=$(cat /proc/$S/comm)"
kill $S

# Issue 38 items 1 and 4 on the GPU machine: profile_command in event and nsys mode, confined by
# (Moved beside its evidence, docs/evidence/sandbox/h200-2026-11-26*.log, from scripts/: issue 42.)
# Landlock (kprof_mcp.sandbox), through an Engine that confines commands (as the server's does).
# Run through the device tool with carry [".whl", ".nsyslibs"]; writes $OUT/log.txt.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH
W=/tmp/kprof-sbx; rm -rf $W; mkdir -p $W /tmp/elsewhere; cp -r examples $W/; echo precious > /tmp/elsewhere/victim
cat > $W/probe.py <<'PY'
import os, torch, kprof
with kprof.range("probe"):
    x = torch.ones(1 << 20, device="cuda"); y = (x * 2).sum(); torch.cuda.synchronize()
for name, f in [("write", lambda: open("/tmp/elsewhere/victim", "w")), ("read_home", lambda: os.listdir(os.path.expanduser("~")))]:
    try:
        f(); print("SANDBOX", name, "ALLOWED")
    except OSError as e:
        print("SANDBOX", name, type(e).__name__)
PY
(uname -r; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "from kprof_mcp import sandbox; print('landlock abi', sandbox.abi())") 2>&1 | tee $OUT/log.txt
python3 - $W <<'PY' 2>&1 | tee -a $OUT/log.txt
import sys, time
from kprof_mcp.engine import Config, Engine, render_profile
w = sys.argv[1]
cfg = Config.from_options(w); cfg.warm = False
e = Engine(cfg)
TINY = ["--steps", "3", "--tokens", "256", "--dim", "128", "--vocab", "512"]
for mode, argv in [("event", ["python", "probe.py"]), ("nsys", ["python", "probe.py"]), ("nsys", ["python", "examples/train_step/train.py", *TINY])]:
    t0 = time.time()
    try:
        out = e.profile_command(argv, mode=mode, timeout_s=90)
        r = out.result
        print(f"== {mode} {argv[1]}: OK {time.time()-t0:.1f}s stages={[s.name for s in r.stages]} nsys={str(r.timeline.get('nsys') if r.timeline else None)[:200]}")
        print("\n".join(l for l in (r.command or {}).get("output_tail", "").splitlines() if "SANDBOX" in l))
    except Exception as ex:
        print(f"== {mode} {argv[1]}: FAILED {time.time()-t0:.1f}s {type(ex).__name__}: {str(ex)[:3000]}")
PY
echo "victim: $(cat /tmp/elsewhere/victim)" | tee -a $OUT/log.txt

set -x
NCU=$(ls /opt/nvidia/nsight-compute/*/ncu | head -1)
cd scratch_exp
for v in "a:" "b:--nvtx-include backward/ --nvtx-include backward" "c:--nvtx-include backward" "d:--nvtx-include regex:back.*" "e:--nvtx-include backward/"; do
  n=${v%%:*}; args=${v#*:}
  timeout 120 $NCU --nvtx --target-processes application-only --metrics gpu__time_duration.sum $args -f -o $OUT/$n python3 exp_nvtx.py > $OUT/$n.log 2>&1
  tail -2 $OUT/$n.log
done
python3 read_rep.py $OUT/a.ncu-rep $OUT/b.ncu-rep $OUT/c.ncu-rep $OUT/d.ncu-rep $OUT/e.ncu-rep 2>&1 | tee $OUT/reps.txt
cd ..
cat > /tmp/eng.py <<'PY'
import sys, json, shutil, tempfile
from pathlib import Path
sys.path.insert(0, ".")
from kprof_mcp.engine import Config, Engine
ws = Path(tempfile.mkdtemp())
shutil.copytree("examples/train_step", ws / "train_step")
shutil.copytree("kernels", ws / "kernels")
eng = Engine(Config(workspace=ws, kernel_dirs=[ws / "kernels"], timeout_s=300))
for inc in ([], ["backward", "forward"]):
    o = eng.profile_command(["python", "train.py", "--steps", "3"], cwd="train_step", mode="annotation", include=inc, timeout_s=300)
    print("=== include", inc)
    print(o.contract[:1800])
    for w in o.result.warnings:
        print("WARN", w.kind, w.message[:300])
    for s in o.result.stages:
        print("STAGE", s.name, s.timing.median_ns, s.ncu_kernels[:8])
PY
PYTHONPATH=$PWD/kernels:$PYTHONPATH timeout 400 python3 /tmp/eng.py 2>&1 | tee $OUT/eng.txt | tail -80

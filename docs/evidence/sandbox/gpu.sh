# Issue 38 on the GPU machine, through the device tool with .whl and .nsyslibs carried:
#   KPROF_NSYS_INSIDE=1 bash docs/evidence/sandbox/gpu.sh
# KPROF_NSYS_INSIDE=1 (the default): gpu_check.py also runs nsys confined with its target (a /tmp of the
# job's own) beside nsys outside. Writes $OUT/env.txt, $OUT/nsys_probe.log (nsys_probe.py) and $OUT/log.txt
# (gpu_check.py: one line per step, the self-checks and figures, then its stderr's tail).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH
(date -u; uname -r; id; git log -1 --format='kprof %h %s' 2>/dev/null
 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
 grep -i RmProfilingAdminOnly /proc/driver/nvidia/params; which ncu nsys; ncu --version | tail -1
 python3 -c "from kprof_mcp.tools import nsys; import subprocess; p = nsys.check_nsys().path; print(p); print(subprocess.run([str(p), '--version'], capture_output=True, text=True).stdout.strip())"
 python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
 python3 -c "from kprof_mcp import sandbox; print('landlock abi', sandbox.abi())") > $OUT/env.txt 2>&1
timeout 150 python3 docs/evidence/sandbox/nsys_probe.py > $OUT/nsys_probe.log 2>&1
echo "rc=$?" >> $OUT/nsys_probe.log
timeout 330 python3 docs/evidence/sandbox/gpu_check.py > $OUT/log.txt 2> /tmp/err.txt
echo "rc=$?" >> $OUT/log.txt; tail -40 /tmp/err.txt >> $OUT/log.txt
cat $OUT/env.txt $OUT/nsys_probe.log $OUT/log.txt

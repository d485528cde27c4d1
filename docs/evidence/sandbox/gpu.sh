# Issue 38 on the GPU machine: `bash docs/evidence/sandbox/gpu.sh` through the device tool with .whl carried.
# KPROF_NSYS_INSIDE=1: nsys confined with its target (its /tmp/nvidia bound) before CONFINED_PROFILERS says so.
# Writes $OUT/env.txt and $OUT/log.txt (one line per check of gpu_check.py, then its stderr's tail).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
(date -u; uname -r; id; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
 grep -i RmProfilingAdminOnly /proc/driver/nvidia/params; which ncu nsys
 python3 -c "from kprof_mcp import sandbox; print('landlock abi', sandbox.abi())") > $OUT/env.txt 2>&1
timeout 300 python3 docs/evidence/sandbox/gpu_check.py > $OUT/log.txt 2> /tmp/err.txt
echo "rc=$?" >> $OUT/log.txt; tail -40 /tmp/err.txt >> $OUT/log.txt
cat $OUT/env.txt $OUT/log.txt

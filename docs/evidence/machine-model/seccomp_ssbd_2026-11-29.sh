#!/usr/bin/env bash
# The plain pass of host-bound commands against SSBD forced by the sandbox's seccomp filter (2026-11-29).
# From the repository root on the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/seccomp_ssbd_2026-11-29.sh   (logs in $OUT)
tar xJf out/rec14carry/nsyslibs.tar.xz
mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1
{ date -u; uname -r; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  grep -m1 "model name" /proc/cpuinfo; git rev-parse --short HEAD
  python3 -c "import torch, triton; from kprof_mcp import sandbox; print(torch.__version__, triton.__version__, 'landlock', sandbox.available())"
} > $OUT/env.log 2>&1
timeout 200 python3 docs/evidence/machine-model/seccomp_ssbd_2026-11-29.py > $OUT/ssbd.log 2>&1
P="line_tracer.py:good layer_timing_sync.py:good activation_offload.py:good"
# the plain pass with the filter as installed now (SPEC_ALLOW), then as before (the flag cleared: no SPEC_ALLOW)
timeout 150 python3 docs/evidence/machine-model/plain_pass_events_2026-11-28.py $P > $OUT/plain_spec_allow.log 2>&1
sed -i 's/^_SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_SPEC_ALLOW = 1, 4$/_SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_SPEC_ALLOW = 1, 0/' kprof_mcp/sandbox/seccomp.py
grep -n "^_SECCOMP_SET_MODE_FILTER" kprof_mcp/sandbox/seccomp.py >> $OUT/plain_no_flag.log
timeout 150 python3 docs/evidence/machine-model/plain_pass_events_2026-11-28.py $P >> $OUT/plain_no_flag.log 2>&1
git checkout kprof_mcp/sandbox/seccomp.py 2>/dev/null || true

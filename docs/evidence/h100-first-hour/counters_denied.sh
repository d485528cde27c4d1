# Issue 29, "counters optional": annotation mode as a user whose GPU counters are denied
# (ERR_NVGPUCTRPERM, as on many cloud GPUs), which must fall back to event mode's CUPTI timing
# with the static evidence and say so. ncu runs as the non-root user kprofu, so the driver's
# RmProfilingAdminOnly=1 (the default) denies it the counters; nvidia-smi -lgc is refused too.
# Run as root from the repository root with the device wheels in .whl/ carried.
set -x
L=/tmp/logs; rm -rf $L; mkdir -p $L  # tarred into $OUT at the end
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  grep -i profiling /proc/driver/nvidia/params; ncu --version | tail -1; git log --oneline -1; } > $L/env.txt 2>&1
id kprofu >/dev/null 2>&1 || useradd -m kprofu
H=/home/kprofu
rm -rf $H/repo $H/site $H/ws; mkdir -p $H/ws
cp -r "$PWD" $H/repo
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target $H/site .whl/*.whl >/dev/null 2>&1
chown -R kprofu:kprofu $H/repo $H/site $H/ws
NCU=$(command -v ncu); PY=$(command -v python3); echo "ncu: $NCU; python3: $PY" >> $L/env.txt
# root's python3 (the machine's torch environment) and ncu, first on the user's PATH
ENV="export PYTHONPATH=$H/site:$H/repo PATH=$(dirname "$PY"):$(dirname "$NCU"):\$PATH; cd $H/ws"
su kprofu -c "$ENV; id; nvidia-smi -lgc 1305,1305; echo lgc rc=\$?" > $L/user.txt 2>&1
su kprofu -c "$ENV; timeout 400 python3 -m kprof_mcp.cli profile matmul --mode annotation --json" \
  > $L/matmul_annotation.json 2> $L/matmul_annotation.err; echo "matmul rc=$?"
su kprofu -c "$ENV; timeout 300 python3 -m kprof_mcp.cli profile vector_add --mode annotation" \
  > $L/vector_add_annotation.txt 2>&1; echo "vector_add rc=$?"
# ncu mode keeps its error (counters are its whole point)
su kprofu -c "$ENV; timeout 300 python3 -m kprof_mcp.cli profile vector_add --mode ncu" \
  > $L/vector_add_ncu.txt 2>&1; echo "ncu rc=$?"
# the fallback profiles' report.md and result.json
find $H/ws -path '*profiles/event/*' \( -name report.md -o -name result.json \) | head -4 | while read f; do
  cp "$f" "$L/$(echo "${f#$H/ws/}" | tr / _)"; done
nvidia-smi -rgc >/dev/null 2>&1  # in case anything locked the clock (nothing should have)
tar czf $OUT/logs.tgz -C /tmp logs

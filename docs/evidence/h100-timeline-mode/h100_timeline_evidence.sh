# How docs/evidence/h100-timeline-mode/README.md and tests/fixtures/h100_timeline/ were recorded on the lent H100
# (run from the repository root with the device wheels in .whl/, matplotlib included).
set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD
WS=/tmp/wst; rm -rf $WS; mkdir -p $WS
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
python3 -c "import torch, triton, matplotlib, sys; print(torch.__version__, triton.__version__, matplotlib.__version__, sys.version.split()[0])"
timeout 250 python3 scripts/profile_all_via_mcp.py $WS $OUT/nsys.md --mode nsys --no-devlog --kernels two_streams,tiny_chain,vector_add,matmul > $OUT/nsys.log 2>&1; echo "rc=$?"; grep -v "^ " $OUT/nsys.log | tail -10
timeout 150 python3 scripts/profile_all_via_mcp.py $WS $OUT/event.md --mode event --no-devlog --kernels two_streams,tiny_chain > $OUT/event.log 2>&1; echo "rc=$?"; grep -v "^ " $OUT/event.log | tail -6
mkdir -p /tmp/fxt
for d in $WS/out/profiles/nsys/*/*/*; do n=$(python3 -c "import json,sys; d=json.load(open('$d/result.json')); print(d['kernel']+'_'+d['version'])"); mkdir -p /tmp/fxt/$n; cp $d/trace.json $d/result.json $d/contract.md /tmp/fxt/$n/; cp $d/timeline.png /tmp/fxt/$n/; done
cd /tmp && tar czf $OUT/fxt.tgz fxt && cd $WS && tar czf $OUT/wst.tgz --exclude='*.cubin' --exclude='trace.json' out

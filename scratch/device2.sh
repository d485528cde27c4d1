# Device run: annotation + ncu modes through the real MCP server, fixtures, benchmark.
set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD
WS=/tmp/ws; mkdir -p $WS/docs; cp -r docs/kernels $WS/docs/
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
for m in annotation ncu; do
  timeout 300 python3 scripts/profile_all_via_mcp.py $WS $OUT/$m.md --mode $m $([ $m = ncu ] && echo --no-devlog) > $OUT/$m.log 2>&1; echo "rc=$?"; tail -5 $OUT/$m.log
done
ls -R $WS/out/profiles | head -80

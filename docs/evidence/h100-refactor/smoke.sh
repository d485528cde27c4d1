# Issue 28's refactor on the lent H100: every mode and capability through the real faces, compared
# with the figures recorded before the refactor (docs/evidence/h100-accounting, h100-thermal).
# Run from the repository root with the device wheels in .whl/ and .nsyslibs/ carried.
set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH
R=$PWD; L=/tmp/logs; rm -rf $L; mkdir -p $L  # tarred into $OUT at the end (at most 8 files come back)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c "import torch, triton, sys; print(torch.__version__, triton.__version__, sys.version.split()[0])"
  ncu --version | tail -1; git log --oneline -1; } > $L/env.txt 2>&1
# 1. annotation mode's diagnosis on the eight planted problems, through the MCP server (before: 7 of 7 + spill_tile)
timeout 300 python3 benchmarks/bench_catalogue_via_mcp.py --json $L/catalogue.json > $L/catalogue.log 2>&1; echo "catalogue rc=$?"
# 2. profile_command in annotation and nsys (before: 6 of 6)
timeout 300 python3 benchmarks/bench_commands_catalogue.py --json $L/commands.json > $L/commands.log 2>&1; echo "commands rc=$?"
# 3. event, nsys and ncu modes of shipped kernels through the MCP server (v1 against v0 as baseline)
timeout 200 python3 scripts/profile_all_via_mcp.py /tmp/ws_e $L/event.md --mode event --no-devlog --kernels vector_add,matmul > $L/event.log 2>&1; echo "event rc=$?"
timeout 200 python3 scripts/profile_all_via_mcp.py /tmp/ws_n $L/nsys.md --mode nsys --no-devlog --kernels two_streams,tiny_chain > $L/nsys.log 2>&1; echo "nsys rc=$?"
timeout 200 python3 scripts/profile_all_via_mcp.py /tmp/ws_u $L/ncu.md --mode ncu --no-devlog --kernels vector_add > $L/ncu.log 2>&1; echo "ncu rc=$?"
# 4. the CLI: compare (event, then annotation counters side by side), sweep, noise
cd /tmp && mkdir -p ws_c && cd ws_c
timeout 120 python3 -m kprof_mcp.cli compare matmul v1 v3 > $L/compare.txt 2>&1; echo "compare rc=$?"
timeout 200 python3 -m kprof_mcp.cli compare vector_add v0 v1 --mode annotation > $L/compare_annotation.txt 2>&1; echo "compare annotation rc=$?"
timeout 120 python3 -m kprof_mcp.cli sweep vector_add --over n --values 1048576 16777216 > $L/sweep.txt 2>&1; echo "sweep rc=$?"
timeout 150 python3 -m kprof_mcp.cli noise --rounds 2 --json > $L/noise.json 2> $L/noise.err; echo "noise rc=$?"
cd $R
# 5. the GPU-only test: the server killed with SIGKILL mid-ncu leaves nothing behind
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/e2e/test_lifetimes.py -k kill_9_while_ncu > $L/lifetimes.log 2>&1; echo "lifetimes rc=$?"
tar czf $OUT/logs.tgz -C /tmp logs

# The typed child record (runner.Record) and the comparison worded in render, on the lent H100: the paths the CPU
# cannot reach (a profiler wrapping the child: ncu, nsys; compare on a GPU), against docs/evidence/h100-refactor.
# Run from the repository root with the device wheels in .whl/ and .nsyslibs/ carried.
set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH
R=$PWD; L=/tmp/logs; rm -rf $L; mkdir -p $L  # tarred into $OUT at the end (at most 8 files come back)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c "import torch, triton, sys; print(torch.__version__, triton.__version__, sys.version.split()[0])"
  ncu --version | tail -1; echo "working tree of ${KPROF_COMMIT:-?} (the device's .git is older)"; } > $L/env.txt 2>&1
keep() { tar czf $OUT/logs.tgz -C /tmp logs; }  # after every step: a time-out still brings back what ran
# 1. profile_command in annotation and nsys (before: 6 of 6)
timeout 300 python3 benchmarks/bench_commands_catalogue.py --json $L/commands.json > $L/commands.log 2>&1; echo "commands rc=$?"; keep
# 2. event, nsys and ncu modes of shipped kernels through the MCP server (v1 against v0 as baseline)
timeout 200 python3 scripts/profile_all_via_mcp.py /tmp/ws_e $L/event.md --mode event --no-devlog --kernels vector_add,matmul > $L/event.log 2>&1; echo "event rc=$?"; keep
timeout 200 python3 scripts/profile_all_via_mcp.py /tmp/ws_n $L/nsys.md --mode nsys --no-devlog --kernels two_streams,tiny_chain > $L/nsys.log 2>&1; echo "nsys rc=$?"; keep
timeout 200 python3 scripts/profile_all_via_mcp.py /tmp/ws_u $L/ncu.md --mode ncu --no-devlog --kernels vector_add > $L/ncu.log 2>&1; echo "ncu rc=$?"; keep
# 3. the CLI: compare (event, then annotation counters side by side)
cd /tmp && mkdir -p ws_c && cd ws_c
timeout 120 python3 -m kprof_mcp.cli compare matmul v1 v3 > $L/compare.txt 2>&1; echo "compare rc=$?"; keep
timeout 200 python3 -m kprof_mcp.cli compare vector_add v0 v1 --mode annotation > $L/compare_annotation.txt 2>&1; echo "compare annotation rc=$?"; keep
cd $R
# 4. the GPU-only test: the server killed with SIGKILL mid-ncu leaves nothing behind
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/e2e/test_lifetimes.py -k kill_9_while_ncu > $L/lifetimes.log 2>&1; echo "lifetimes rc=$?"
keep

# Issue 13 on the GPU machine (device tool), with .whl and .nsyslibs carried:
#   bash docs/evidence/h100-timing-truth/h100_issue13.sh smoke|nsys|truth [kernel ...]
#   smoke: event mode (CUPTI) on vector_add and matmul v3, nsys mode on two_streams v1 with
#          Nsight Systems and with Kineto; prints the contracts and the engines.
#   nsys:  nsys mode with both engines on two_streams v0/v1 and tiny_chain v0/v1 through the
#          CLI (profiles kept: their SQLite exports become test fixtures), then the engines
#          compared (benchmarks/bench_timeline_engines.py).
#   preflight: device_info and the nsys mode with the importer's libraries left off LD_LIBRARY_PATH.
#   placement: bench_timing_truth.py --placement-study on kernel:version pairs.
#   mcp: two_streams/tiny_chain in nsys mode, tiny_chain/vector_add in event mode, through the MCP server.
#   compare: kprof compare on real pairs and 10 times on two identical versions (twins.py).
#   sweep: mla_decode v2/v3 over t through the MCP server (table + PNG).
#   flush: the L2-flush study of bench_timing_truth.py (--flush-study) on the kernels given.
#   truth: benchmarks/bench_timing_truth.py (event mode vs Nsight Systems vs do_bench).
# Everything lands in $OUT (env.txt, <what>.log, <what>.tgz).
set -x
what=${1:-smoke}; shift || true
ORIG_LD=$LD_LIBRARY_PATH
KPROF_NSYS_BIN=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/env.txt; date -u >> $OUT/env.txt
python3 -c "import torch,triton;print('torch',torch.__version__,'triton',triton.__version__)" >> $OUT/env.txt
/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys --version >> $OUT/env.txt 2>&1
mkdir -p $OUT/$what
cd $OUT/$what
kp() { python3 -c 'import sys; from kprof_mcp.cli import main; sys.exit(main())' "$@"; }
export KPROF_REPO=$OLDPWD
case $what in
smoke)
  (cd $KPROF_REPO && kp device) > device.txt 2>&1; grep -A8 '"nsys"' device.txt
  for kv in "vector_add v1" "matmul v3"; do set -- $kv
    (cd $KPROF_REPO && time kp profile $1 --version $2 --mode event) > event_$1_$2.md 2> event_$1_$2.err; cat event_$1_$2.md; tail -4 event_$1_$2.err
  done
  for eng in auto kineto; do
    (cd $KPROF_REPO && time kp profile two_streams --version v1 --mode nsys --timeline-engine $eng) > nsys_$eng.md 2> nsys_$eng.err; cat nsys_$eng.md | head -40; tail -5 nsys_$eng.err
  done
  grep -h "cupti\|launch-inclusive\|Kernels of\|SM MHz" $KPROF_REPO/out/profiles/event/*/*/*/report.md
  cp -r $KPROF_REPO/out/profiles . 2>/dev/null ;;
nsys)
  timeout 540 python3 $KPROF_REPO/benchmarks/bench_timeline_engines.py --out . "$@" 2>&1 | tee ../nsys.log | tail -60 ;;
preflight)  # Nsight Systems without its importer's libraries: what device_info and the nsys mode say
  (cd $KPROF_REPO && LD_LIBRARY_PATH=$ORIG_LD kp device) > device_nolibs.txt 2>&1; grep -A12 '"nsys": {' device_nolibs.txt | head -14
  (cd $KPROF_REPO && LD_LIBRARY_PATH=$ORIG_LD kp profile two_streams --version v1 --mode nsys) > fallback.md 2> fallback.err
  tail -2 fallback.err; grep -h "Engine:\|Nsight Systems:" $KPROF_REPO/out/profiles/nsys/*/*/*/report.md
  (cd $KPROF_REPO && LD_LIBRARY_PATH=$ORIG_LD kp profile two_streams --version v1 --mode nsys --timeline-engine nsys) > insist.md 2> insist.err; tail -3 insist.err
  # event mode while another profiler holds CUPTI: the CUDA-event fallback and its warning
  (cd $KPROF_REPO && $KPROF_NSYS_BIN profile -t cuda -o /tmp/held --force-overwrite true python3 -c 'import sys; from kprof_mcp.cli import main; sys.exit(main())' profile vector_add --version v1 --mode event) > held.md 2> held.err
  grep -A3 "### Stages" held.md; grep -h "kernel time not measured\|cupti\|cuda_events" $KPROF_REPO/out/profiles/event/*/*/*/report.md | head -5
  cp -r $KPROF_REPO/out/profiles . ;;
placement)
  timeout 300 python3 $KPROF_REPO/benchmarks/bench_timing_truth.py --placement-study --out . --only "$@" 2>&1 | tee ../placement.log | tail -30 ;;
mcp)  # the final code through the real MCP server over stdio: nsys (Nsight Systems) and event mode
  python3 $KPROF_REPO/scripts/profile_all_via_mcp.py /tmp/kprof-ws mcp_nsys.md --mode nsys --kernels two_streams,tiny_chain --no-devlog 2>&1 | tail -3
  python3 $KPROF_REPO/scripts/profile_all_via_mcp.py /tmp/kprof-ws mcp_event.md --mode event --kernels tiny_chain,vector_add --no-devlog 2>&1 | tail -3
  grep -h "^## Profile\|^| chain\|^| add\|^| branch\|^\*\*Root\|^1\. \|Engine\|engine" mcp_nsys.md mcp_event.md | head -60 ;;
compare)  # issue 14's compare_versions: real pairs, then the noise floor (identical versions) 10 times
  for pair in "matmul v1 v3" "softmax v1 v2" "matmul v3 v4" "mla_decode v2 v3"; do
    (cd $KPROF_REPO && /usr/bin/time -f "wall %e s" python3 -c 'import sys; from kprof_mcp.cli import main; sys.exit(main())' compare $pair) > "cmp_${pair// /_}.md" 2> "cmp_${pair// /_}.err"
    grep -A2 "### Verdict" "cmp_${pair// /_}.md" | tail -1; tail -1 "cmp_${pair// /_}.err"
  done
  for i in 1 2 3 4 5 6 7 8 9 10; do
    (cd $KPROF_REPO && kp compare tests/fixtures/user_kernels/twins.py a b --budget-ms 1500) > twins_$i.md 2>/dev/null
    grep -A2 "### Verdict" twins_$i.md | tail -1
  done
  cp -r $KPROF_REPO/out/profiles/compare . ;;
sweep)  # issue 14's sweep through the MCP server: mla_decode v2, v3 over t
  python3 $KPROF_REPO/docs/evidence/h100-sweep/sweep_via_mcp.py /tmp/kprof-ws . mla_decode t 512 1024 2048 4096 8192 16384 32768 --versions v2 v3 2>&1 | tail -30 ;;
flush)
  timeout 300 python3 $KPROF_REPO/benchmarks/bench_timing_truth.py --flush-study --out . --kernels "$@" 2>&1 | tee ../flush.log | tail -20 ;;
truth)
  ARGS=""; [ $# -gt 0 ] && ARGS="--kernels $*"
  timeout 570 python3 $KPROF_REPO/benchmarks/bench_timing_truth.py --out . --rounds ${ROUNDS:-2} --budget-ms ${BUDGET_MS:-500} $ARGS 2>&1 | tee ../truth.log | tail -60 ;;
esac
cd $OUT && tar czf $what.tgz $what && rm -rf $what

# Issue 37, item 2 on the GPU machine: the integrity checks around timing, through the kprof CLI in event
# mode and in the default annotation mode (Nsight Compute), on the tampered scale-copy package
# (tests/fixtures/user_kernels/tampered: honest, cache, stale, l2persist). Run from the repository root
# through the device tool with .whl carried:
#   bash docs/evidence/integrity/run.sh
# Writes 6 files to $OUT: env.txt, event.contracts.md and annotation.contracts.md (the four versions'
# contracts, each under a "<!-- version -->" line), baseline.contract.md (stale against honest, event),
# compare.md (honest vs stale vs l2persist) and log.txt (stderr, each result's integrity record, stage
# times and methods and warnings, the refusals). About 4 minutes (event 2, annotation 4 x ~25 s).
set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
(date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; python3 -c "import torch,triton;print(torch.__version__,triton.__version__)"; git log -1 --format=%H 2>/dev/null) > $OUT/env.txt 2>&1
PKG=tests/fixtures/user_kernels/tampered
rm -f /tmp/dirs
N=8388608  # 32 MiB of fp32 in x: fits a persisting-L2 carve-out on an H100 (l2persist)
LOG=$OUT/log.txt
kprof() { timeout 120 python3 -m kprof_mcp.cli "$@"; }
integrity() {  # the integrity record and the warnings of the profile in $1
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1] + "/result.json"))
print(json.dumps(r["correctness"].get("after_timing"), indent=1))
for w in r["warnings"]:
    print(f"[{w['kind']}] {w['message']}")
print("stage times (us):", [round(s["timing"]["median_ns"] / 1e3, 2) for s in r["stages"]], [s["timing"]["method"] for s in r["stages"]],
      "ncu kernels:", [s.get("ncu_kernels") for s in r["stages"]])
PY
}
# Each version in event mode, then in annotation (the default: Nsight Compute in a child, the checks
# outside the profiled NVTX ranges). Under ncu, cache launches nothing in its range: no report, the stage
# keeps its CUDA-event time with a `timing` warning and is `suspect`.
for mode in event annotation; do
  for v in honest cache stale l2persist; do
    echo "<!-- $v -->" >> $OUT/$mode.contracts.md
    kprof profile $PKG --version $v --mode $mode --n $N --quiet >> $OUT/$mode.contracts.md 2> /tmp/$v.err
    echo "== $mode $v rc=$?" >> $LOG; cat /tmp/$v.err >> $LOG
    d=$(sed -n 's/^profile_dir: //p' /tmp/$v.err); echo "$mode.$v=$d" >> /tmp/dirs
    [ -n "$d" ] && integrity "$d" >> $LOG 2>&1
  done
done
HONEST=$(sed -n 's/^event.honest=//p' /tmp/dirs)
# A tampered profile against an honest baseline: no verdict.
kprof profile $PKG --version stale --mode event --n $N --quiet --baseline "$HONEST" > $OUT/baseline.contract.md 2>> $LOG
echo "== baseline rc=$?" >> $LOG
# A baseline of other parameters: refused before anything runs; with --allow-mismatch, compared under a heading.
echo "== mismatch (refused)" >> $LOG
kprof profile $PKG --version honest --mode event --n 4194304 --quiet --baseline "$HONEST" >> $LOG 2>&1; echo "rc=$?" >> $LOG
echo "== mismatch (--allow-mismatch): the vs-Baseline section" >> $LOG
kprof profile $PKG --version honest --mode event --n 4194304 --quiet --baseline "$HONEST" --allow-mismatch 2>/dev/null | sed -n '/### vs Baseline/,$p' >> $LOG
# compare_versions: stale and l2persist refused; cache launches nothing in its timed runs, so CUPTI refuses it.
kprof compare $PKG honest stale l2persist --n $N > $OUT/compare.md 2>> $LOG; echo "== compare rc=$?" >> $LOG
echo "== compare with cache" >> $LOG
kprof compare $PKG honest cache --n $N >> $LOG 2>&1; echo "rc=$?" >> $LOG
ls -la $OUT

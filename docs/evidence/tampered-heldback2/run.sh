# Issue 37, "a held-back set of tampered versions (measured by someone else) is flagged in the contract every
# time, and no contract on any held-back case prints a figure above a device peak": the second held-back
# package tests/fixtures/user_kernels/tampered_heldback2 through the kprof CLI on the GPU machine. Run from
# the repository root through the device tool with .whl carried:
#   bash docs/evidence/tampered-heldback2/run.sh
# Per version: `kprof profile --quiet` in the default mode (annotation: no --mode given) and with
# `--mode event`, then `kprof compare` of honest against the 7 tampered versions (8 arms, one call). A
# deadline keeps the whole run under 9 minutes: what would start too late is skipped and table.md says
# "not run"; run the rest in another call with, e.g., STEPS=annotation VERSIONS="sample_hash time_boxed".
# Knobs: STEPS (default "event compare annotation"), VERSIONS (default all 8), BUDGET_S (default 525), N.
# Writes to $OUT: table.md (the verdicts, criterion in README.md, fixed before the first run),
# contracts.tar.gz (every contract.md, stderr, result.json, rc, secs and the compare output), compare1.md,
# env.txt, log.txt.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/tampered-heldback2-out}
mkdir -p "$OUT"
(date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; python3 -c "import torch,triton;print(torch.__version__,triton.__version__)"; git log -1 --format=%H 2>/dev/null) > $OUT/env.txt 2>&1
HERE=docs/evidence/tampered-heldback2
PKG=tests/fixtures/user_kernels/tampered_heldback2
N=${N:-8388608}  # 8M fp32: 32 MiB in, 32 MiB out per honest call
ALL="honest queued interp dirty_tiles rfo_model memcpy_answer sample_hash time_boxed"
VERSIONS=${VERSIONS:-$ALL}
STEPS=${STEPS:-event compare annotation}
T0=$(date +%s)
END=$((T0 + ${BUDGET_S:-525}))  # 8 min 45 s
C=/tmp/tampered-heldback2-contracts
rm -rf $C
mkdir -p $C
LOG=$OUT/log.txt
: > $LOG

kprof() {  # kprof CAP ARGS...: the CLI, at most CAP seconds and never past the deadline; 125: not started
  local cap=$1 left=$((END - $(date +%s)))
  shift
  [ $left -lt 30 ] && return 125
  timeout $((left < cap ? left : cap)) python3 -m kprof_mcp.cli "$@"
}

profile() {  # profile VERSION MODE (annotation: the CLI's default, no --mode)
  local v=$1 m=$2 s=$(date +%s) rc mode=()
  [ $m = annotation ] || mode=(--mode $m)
  kprof 150 profile $PKG --version $v "${mode[@]}" --param n=$N --quiet > $C/$v.$m.contract.md 2> $C/$v.$m.err
  rc=$?
  if [ $rc = 125 ]; then
    rm -f $C/$v.$m.contract.md $C/$v.$m.err
    echo "== $v $m: not run (deadline)" >> $LOG
    return
  fi
  echo $rc > $C/$v.$m.rc
  echo $(($(date +%s) - s)) > $C/$v.$m.secs
  local d=$(sed -n 's/^profile_dir: //p' $C/$v.$m.err | tail -1)
  [ -n "$d" ] && [ -f "$d/result.json" ] && cp "$d/result.json" $C/$v.$m.result.json
  echo "== $v $m rc=$rc $(cat $C/$v.$m.secs)s" >> $LOG
  grep -v '^profile_dir' $C/$v.$m.err | tail -4 >> $LOG
}

compare() {  # compare OUTNAME VERSIONS...
  local name=$1 s=$(date +%s) rc
  shift
  kprof 120 compare $PKG "$@" --param n=$N --budget-ms 1500 > $C/$name.md 2> $C/$name.err
  rc=$?
  if [ $rc = 125 ]; then
    rm -f $C/$name.md $C/$name.err
    echo "== $name: not run (deadline)" >> $LOG
    return
  fi
  echo "== $name ($*) rc=$rc $(($(date +%s) - s))s" >> $LOG
  tail -4 $C/$name.err >> $LOG
  [ -s $C/$name.md ] || echo "(no output, rc $rc: $(tail -2 $C/$name.err | tr '\n' ' '))" >> $C/$name.md
  cp $C/$name.md $OUT/$name.md
}

for step in $STEPS; do
  case $step in
    event | annotation)
      for v in $VERSIONS; do profile $v $step; done ;;
    compare)
      tampered=$(echo $VERSIONS | tr ' ' '\n' | grep -vx honest | tr '\n' ' ')
      set -- $tampered
      [ $# -gt 0 ] && compare compare1 honest $(echo $tampered | cut -d' ' -f1-7)
      [ $# -gt 7 ] && compare compare2 honest $(echo $tampered | cut -d' ' -f8-) ;;
  esac
done

python3 $HERE/table.py $C "$VERSIONS" > $OUT/table.md 2>> $LOG
echo "total $(($(date +%s) - T0))s" >> $LOG
tar -czf $OUT/contracts.tar.gz -C $C .
cat $OUT/table.md

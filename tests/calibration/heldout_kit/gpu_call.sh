# One device call of a held-back set, N its number (HELDOUT<N>_PAIRS in tests/calibration/pairs.py), run from the
# repository root on the GPU machine, out/rec14carry carried (below); the sets before the eighteenth kept copies of
# their own in their folders:
#   bash tests/calibration/heldout_kit/gpu_call.sh N QUICK_ARGS -- END_S ROUNDS PAIR_OR_KEY ...
# QUICK_ARGS: "all" (every pair's quick check), "none", or kernel / script names (quick_check.py's arguments,
# one process each). Then the pairs recorded with scripts/record_calibration_gpu.sh (record_set.py N in place of
# record.py, --rounds ROUNDS, its timeout what is left of END_S seconds from this script's start); a pair given
# as KEY=NAME is recorded only if the quick check's ratio for KEY is > 1.5.
set -o pipefail
set_n=$1
shift
# out/rec14carry: the four wheels of out/rec12carry unpacked into one xz tarball (site.tar.xz: 2.0 MB for their
# 2.8 MB) and nsyslibs.tar.xz: with out/rec12carry the tree would pass the 64 MiB limit of a call.
rm -rf .whl && mkdir -p .whl /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site && tar xJf out/rec14carry/nsyslibs.tar.xz
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
# CPU_CHECK=1: the set's CPU check (Triton interpreter) alongside the quick check, on this machine's CPU cores
# (not the GPU); waited for before any recording.
if [ -n "$CPU_CHECK" ]; then
    TRITON_INTERPRET=1 OMP_NUM_THREADS=2 timeout 300 python3 tests/calibration/recorded-heldout$set_n/cpu_check.py > $OUT/cpu_check.log 2>&1 &
fi
q=()
while [ "$1" != "--" ]; do q+=("$1"); shift; done
shift
end=$1
rounds=$2
shift 2
if [ "${q[0]}" != "none" ]; then
    if [ "${q[0]}" = "all" ]; then
        # every pair's kernel package or command script
        q=($(cd tests/calibration && python3 -c "import pairs; print(' '.join(p.kernel for p in pairs.HELDOUT${set_n}_PAIRS))"))
    fi
    for a in "${q[@]}"; do  # one process each: a crash in one leaves the others' checks
        # each check's output cut to its last 100 kB: a compile error repeated for every size made set 26's log 19 MB,
        # over the 16 MiB a returned file may have, and every ratio was lost with it
        timeout 150 python3 tests/calibration/heldout_kit/quick_check.py "$a" 2>&1 | tail -c 100000 | tee -a $OUT/quick_check.log
    done
fi
ratios=$(grep '^RATIOS ' $OUT/quick_check.log 2>/dev/null | cut -c8- | python3 -c "import json,sys; r={}; [r.update(json.loads(l)) for l in sys.stdin if l.strip()]; print(json.dumps(r))")
pairs=()
for a in "$@"; do
    key=${a%%=*}
    # KEY=NAME: a key is a package or script name (no space); a pair's name may hold an "=" itself ("fused=True")
    if [[ "$a" == *=* && "$key" != *" "* ]]; then
        ok=$(python3 -c "import json,sys; r=json.loads(sys.argv[1] or '{}'); print(int(r.get(sys.argv[2], 0) > 1.5))" "$ratios" "$key")
        [ "$ok" = 1 ] && pairs+=("${a#*=}") || echo "NOT RECORDED (ratio <= 1.5 or missing): $a"
    else
        pairs+=("$a")
    fi
done
wait  # the CPU check, if any
[ ${#pairs[@]} -eq 0 ] && exit 0
tmo=$((end - SECONDS))
sed -e "s#tests/calibration/record.py#tests/calibration/heldout_kit/record_set.py $set_n --rounds $rounds#" -e "s#timeout 560#timeout $tmo#" \
    scripts/record_calibration_gpu.sh > /tmp/rec_set.sh
echo "recording (timeout $tmo s, $rounds rounds): ${pairs[*]}"
bash /tmp/rec_set.sh "${pairs[@]}"

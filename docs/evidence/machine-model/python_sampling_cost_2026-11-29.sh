#!/usr/bin/env bash
# What Nsight Systems' periodic Python sampling costs the host with and without per-call Python backtraces, and
# whether it records samples without them (2026-11-29): two command variants with a host read in every module,
# each under kprof's default nsys flags (A), those plus --python-sampling at 2 kHz (B), and kprof's
# python_backtrace flags with the sampling (C); each export's step (the median `step` range), its Python samples
# and those inside the reads; the script's own timing beside. From the repository root on the GPU machine,
# out/rec14carry carried:  bash docs/evidence/machine-model/python_sampling_cost_2026-11-29.sh  (logs in $OUT)
tar xJf out/rec14carry/nsyslibs.tar.xz; mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1
NSYS=$(ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys | head -1)
BASE="-t cuda,nvtx --cuda-graph-trace=node --cpuctxsw=none --force-overwrite true"
SAMP="--python-sampling=true --python-sampling-frequency=2000"
BT="--sample=process-tree --sampling-period=16000000 --cudabacktrace=all:1 --python-backtrace=cuda"
cd tests/calibration/commands
for s in layer_timing_sync dist_validate; do
  python3 $s.py --variant bad --time --steps 20 --rounds 5 2>&1 | tail -1 | sed "s/^/$s bad --time: /"
  for v in A B C; do
    case $v in A) F="--sample=none";; B) F="--sample=none $SAMP";; C) F="$BT $SAMP";; esac
    timeout 120 $NSYS profile $BASE $F -o /tmp/p_${s}_$v python3 $s.py --variant bad --steps 20 > /tmp/p_${s}_$v.log 2>&1
    timeout 120 $NSYS export --type sqlite --include-json true --force-overwrite true -o /tmp/p_${s}_$v.sqlite /tmp/p_${s}_$v.nsys-rep > /dev/null 2>&1
    python3 - /tmp/p_${s}_$v.sqlite "$s $v" <<'PY'
import sqlite3, statistics, sys, json
c = sqlite3.connect(sys.argv[1])
steps = c.execute("select e.start, e.end from NVTX_EVENTS e left join StringIds s on e.textId=s.id "
                  "where e.eventType=59 and coalesce(e.text, s.value)='step' order by e.start").fetchall()
med = statistics.median(e - s for s, e in steps[2:]) / 1e6 if len(steps) > 3 else None
dom = [r[0] for r in c.execute("select e.domainId from NVTX_EVENTS e left join StringIds s on e.textId=s.id "
                               "where e.eventType=75 and coalesce(e.text, s.value)='Python Periodic Sampling'")]
n = inside = 0
if dom:
    marks = c.execute(f"select start, jsonText from NVTX_EVENTS where eventType=34 and domainId in ({','.join(map(str, dom))})").fetchall()
    n = len(marks)
    reads = c.execute("select r.start, r.end from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on r.nameId=s.id "
                      "where s.value like '%Synchronize%' or s.value like 'cudaMemcpy%'").fetchall()
    import bisect
    reads.sort(); st = [r[0] for r in reads]
    for t, _ in marks:
        i = bisect.bisect_right(st, t) - 1
        if i >= 0 and reads[i][1] >= t:
            inside += 1
print(f"{sys.argv[2]}: traced step median {med} ms over {len(steps)} steps; python samples {n}, inside reads {inside}", flush=True)
PY
  done
done
cd /tmp && gzip -k p_layer_timing_sync_B.sqlite p_dist_validate_B.sqlite && cp p_layer_timing_sync_B.sqlite.gz p_dist_validate_B.sqlite.gz $OUT/ 2>/dev/null; ls -la $OUT

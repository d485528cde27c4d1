#!/bin/bash
# Per launch: duration, SM cycles and the SM clock while the kernel ran (ncu), SM clock locked at
# 1305 MHz by nvidia-smi and left alone by ncu (--clock-control none). Usage: ncu_cycles.sh OUTDIR
set -u
OUT=$1
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second,dram__bytes.sum,lts__t_sector_hit_rate.pct,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
nvidia-smi -lgc 1305,1305 >/dev/null
for cc in all none; do
  ncu --clock-control none --cache-control $cc --launch-skip 6 --launch-count 60 --metrics $M --csv --page raw \
    python3 docs/evidence/h100-thermal/gemm_launches.py 40 > $OUT/ncu_cache_$cc.csv 2> $OUT/ncu_cache_$cc.err
done
nvidia-smi -rgc >/dev/null
python3 - "$OUT" <<'PY'
import csv, statistics, sys
out = sys.argv[1]
for cc in ("all", "none"):
    rows = list(csv.DictReader(l for l in open(f"{out}/ncu_cache_{cc}.csv") if l.startswith('"')))
    rows = rows[1:]  # units row
    by = {}
    for r in rows:
        n = r["Kernel Name"]
        k = "cublas " + n[:30] if any(t in n.lower() for t in ("gemm", "xmma", "nvjet", "cutlass")) else n[:40]
        by.setdefault(k, []).append(r)
    for k, rs in by.items():
        print(f"cache-control {cc}: {k}: {len(rs)} launches")
        for m in ("gpu__time_duration.sum", "sm__cycles_elapsed.max", "sm__cycles_elapsed.avg.per_second",
                  "dram__bytes.sum", "lts__t_sector_hit_rate.pct",
                  "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"):
            v = [float(r[m].replace(",", "")) for r in rs]
            med = statistics.median(v)
            print(f"   {m:72s} median {med:14.4f}  range {100 * (max(v) - min(v)) / med:6.2f} %  ({min(v):.4g}-{max(v):.4g})")
PY

#!/bin/bash
# At each SM-clock lock (nvidia-smi -lgc), the clock that matmul v3 and a cuBLAS GEMM (4096^3 bf16)
# actually ran at (ncu's sm__cycles_elapsed.avg.per_second, ncu leaving the clock alone), per launch.
# Usage: ncu_lock_sweep.sh OUTDIR MHZ...
set -u
OUT=$1; shift
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second
for mhz in "$@"; do
  nvidia-smi -lgc $mhz,$mhz >/dev/null
  ncu --clock-control none --launch-skip 6 --launch-count 40 --metrics $M --csv --page raw \
    python3 docs/evidence/h100-thermal/gemm_launches.py 25 > $OUT/lock_$mhz.csv 2> $OUT/lock_$mhz.err
done
nvidia-smi -rgc >/dev/null
python3 - "$OUT" "$@" <<'PY'
import csv, statistics, sys
out = sys.argv[1]
print("| lock (MHz) | kernel | launches | ran at, median (MHz) | ran at, range | time median (µs) | time range | cycles range |")
print("|---|---|---|---|---|---|---|---|")
for mhz in sys.argv[2:]:
    rows = list(csv.DictReader(l for l in open(f"{out}/lock_{mhz}.csv") if l.startswith('"')))[1:]
    by = {}
    for r in rows:
        n = r["Kernel Name"]
        k = "cuBLAS" if any(t in n.lower() for t in ("gemm", "xmma", "nvjet", "cutlass")) else "matmul v3" if "matmul" in n else None
        if k is None:
            continue
        by.setdefault(k, []).append(r)
    for k, rs in sorted(by.items()):
        g = lambda m: [float(r[m].replace(",", "")) for r in rs]
        f, t, c = g("sm__cycles_elapsed.avg.per_second"), g("gpu__time_duration.sum"), g("sm__cycles_elapsed.max")
        rg = lambda v: 100 * (max(v) - min(v)) / statistics.median(v)
        print(f"| {mhz} | {k} | {len(rs)} | {statistics.median(f)/1e6:.0f} | {rg(f):.2f} % | {statistics.median(t)/1e3:.2f} | {rg(t):.2f} % | {rg(c):.2f} % |")
PY

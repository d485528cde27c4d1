#!/usr/bin/env bash
# Command pairs whose sync estimate missed (the 20th and 26th sets, the first set's snapshot) recorded again with the
# host's Python samples (2026-11-29); the exports cut to ten steps. From the repository root on the GPU machine, out/rec14carry carried.
tar xJf out/rec14carry/nsyslibs.tar.xz; mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1 KPROF_NSYS_GPU_METRICS=0
R=$PWD
timeout 300 python3 scripts/record_python_samples.py --out $OUT/py --end 230 --trim layer_timing_sync.py:bad layer_timing_sync.py:good dist_validate.py:bad host_snapshot.py:bad > $OUT/rec.log 2>&1
cd $OUT/py && ls -la >> $OUT/rec.log && for f in *.sqlite.gz; do b=${f%.sqlite.gz}; gunzip $f && python3 $R/tests/fixtures/nsys-pysamples/trim.py $b.sqlite $b.trim.sqlite 4 10 && xz -9 -T8 $b.trim.sqlite; rm -f $b.sqlite; done
ls -la >> $OUT/rec.log; cd $OUT && tar cf py.tar py && rm -rf py && ls -la $OUT

# Issue 36: can Nsight Systems' GPU metrics sampling (DRAM bandwidth, SM activity, issue, tensor activity per
# ~100 us) tell a timeline's slow library kernel apart from a bandwidth-bound chain of unfused kernels? Records
# command pairs' bad variants (and the pooling pair's fix) with --gpu-metrics-devices, exports SQLite (xz).
# From the repository root on the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/gpu_metrics_probe_2026-11-27.sh
set -x
mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site && tar xJf out/rec14carry/nsyslibs.tar.xz
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH
NSYS=$(python3 -c "from kprof_mcp.tools.nsys import check_nsys; print(check_nsys().path)")
$NSYS --version
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
python3 -c "import torch,triton;print(torch.__version__,triton.__version__)"
$NSYS profile --gpu-metrics-devices=help 2>&1 | head -20
$NSYS profile --gpu-metrics-set=help 2>&1 | head -30
mkdir -p $OUT/gm
cd tests/calibration/commands
for sv in deterministic_pool:bad deterministic_pool:good naive_attention:bad kv_cache_cat:bad fused_chain:bad \
          layout_roundtrip:bad autocast_recast:bad embedding_dense_grad:bad; do
    s=${sv%%:*}; v=${sv##*:}
    timeout 120 $NSYS profile -t cuda,nvtx --sample=none --cpuctxsw=none --gpu-metrics-devices=0 \
        --force-overwrite true -o /tmp/gm_${s}_$v python3 $s.py --variant $v --steps 20 > $OUT/gm/${s}_$v.log 2>&1
    timeout 120 $NSYS export --type sqlite --force-overwrite true -o /tmp/gm_${s}_$v.sqlite /tmp/gm_${s}_$v.nsys-rep >> $OUT/gm/${s}_$v.log 2>&1
    python3 - /tmp/gm_${s}_$v.sqlite <<'PY' >> $OUT/gm/${s}_$v.log 2>&1
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print([r[0] for r in c.execute("select name from sqlite_master where type='table'")])
for t in ("TARGET_INFO_GPU_METRICS", "GPU_METRICS"):
    try:
        print(t, c.execute(f"select count(*) from {t}").fetchone())
        print([d[0] for d in c.execute(f"select * from {t} limit 1").description])
        print(c.execute(f"select * from {t} limit 40").fetchall())
    except Exception as e:
        print(t, "missing", e)
PY
    xz -T8 -6 -c /tmp/gm_${s}_$v.sqlite > $OUT/gm/${s}_$v.sqlite.xz
    ls -la $OUT/gm/${s}_$v.sqlite.xz
done
cd $OUT && tar cf gm.tar gm && rm -rf gm && ls -la

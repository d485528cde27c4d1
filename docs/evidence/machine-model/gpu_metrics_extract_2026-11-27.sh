# The probe's second call (the machine still warm, or its runs made again): per-kernel GPU metric means and
# trimmed SQLite files, small enough to come back. From the repository root, out/rec14carry carried.
set -x
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH
[ -f /tmp/gm_fused_chain_bad.sqlite ] || bash docs/evidence/machine-model/gpu_metrics_probe_2026-11-27.sh > /dev/null 2>&1
mkdir -p $OUT/x
python3 docs/evidence/machine-model/gpu_metrics_extract_2026-11-27.py $OUT/x /tmp/gm_*.sqlite
cd $OUT/x && for f in *.trimmed.sqlite; do xz -T8 -9 $f; done; ls -la; cd $OUT && tar cf x.tar x && rm -rf x && ls -la

# Issue 36: the eighteenth held-back set's deterministic pooling recorded through kprof's nsys mode with the GPU
# metrics sampler on (tools/nsys.GPU_METRICS_FLAG), both variants, and their unprofiled steps. From the repository
# root on the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/gpu_metrics_pool_2026-11-27.sh
# The SQLite files (GPU metrics of the whole run: megabytes) are left out of what comes back.
bash tests/calibration/heldout_kit/gpu_call.sh 18 none -- 300 1 \
    "a graph batch's sum pooling run with deterministic algorithms forced on (a sort-based scatter-add)"
cd $OUT && rm -rf rec && tar xzf rec.tgz && rm rec.tgz && find rec -name "*.sqlite.gz" -delete && tar czf rec.tgz rec && rm -rf rec && ls -la

# Issue 36: three command pairs whose first cause is the fusion or copy what-if, recorded through kprof's nsys mode
# with the GPU metrics sampler on (after 293667c), to check that their kernels' samples keep their causes (their
# longest kernels work on intermediates: busy). From the repository root on the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/gpu_metrics_others_2026-11-27.sh
bash tests/calibration/heldout_kit/gpu_call.sh 18 none -- 540 1 "layout round trip per layer" \
    "attention matrix materialised" "weights re-cast by autocast at every step"
cd $OUT && rm -rf rec && tar xzf rec.tgz && rm rec.tgz && find rec -name "*.sqlite.gz" -delete && tar czf rec.tgz rec && rm -rf rec && ls -la

#!/usr/bin/env bash
# 2026-11-29 ~16:00 UTC, one H200 call from the repository root with out/rec14carry carried: the pair each of the
# thirty-sixth and thirty-seventh held-back sets lost to its call's timeout (recorded unread, as the sets' helpers
# would have), then plans_and_frames_2026-11-29.sh (the tool end to end on two command changes).
N36="many right-hand sides of one linear system solved with its matrix broadcast to the batch (torch.linalg.solve(A.expand(R, n, n), b): R LU factorisations of the same matrix) where one factorisation and a solve with R columns serves"
N37="per-point Jacobians of a tall coordinate network (R^3 -> R^32) computed in reverse mode (vmap(jacrev): a VJP a row) where forward mode (vmap(jacfwd): a JVP a column) serves"
bash tests/calibration/heldout_kit/gpu_call.sh 36 none -- 160 1 "$N36" > $OUT/call36.log 2>&1
mkdir -p $OUT/s36 && mv $OUT/rec.tgz $OUT/env.txt $OUT/record.log $OUT/s36/ 2>/dev/null
bash tests/calibration/heldout_kit/gpu_call.sh 37 none -- 190 1 "$N37" > $OUT/call37.log 2>&1
mkdir -p $OUT/s37 && mv $OUT/rec.tgz $OUT/env.txt $OUT/record.log $OUT/s37/ 2>/dev/null
timeout 215 bash docs/evidence/machine-model/plans_and_frames_2026-11-29.sh > $OUT/plans_and_frames.log 2>&1
cd $OUT && tar czf all.tgz s36 s37 call36.log call37.log plans_and_frames.log && rm -rf s36 s37 && ls -la

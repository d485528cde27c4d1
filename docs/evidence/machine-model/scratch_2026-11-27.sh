# The build's scratch written and read back (issue 36, analysis/diagnosis/passes.py: ProfileResult.scratch_bytes,
# the device memory the version's build allocated): the fifteenth held-back set's needless split-K (v0: 8192
# programs over K slices of 256 write fp32 partials to a 512 MB workspace, a reduction kernel reads them back;
# v1: no split) and mla_decode v3 (its split-KV partials, needed: 134 MB), profiled through the kprof CLI in
# annotation mode, then the split-K pair's event-mode times for the measured gain. From the repository root on
# the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/scratch_2026-11-27.sh
#   [PAIRS='kernel:version:mode ...'] (the second call, after the workspace made by make_inputs was told apart:
#   PAIRS='calib_needless_splitk:v0:annotation calib_needless_splitk:v1:annotation mla_decode:v3:annotation
#   calib_zeroed_out:v0:annotation')
PAIRS=${PAIRS:-'calib_needless_splitk:v0:annotation calib_needless_splitk:v1:annotation mla_decode:v3:annotation
calib_needless_splitk:v0:event calib_needless_splitk:v1:event calib_needless_splitk:v0:event calib_needless_splitk:v1:event'} \
  BUDGET_S=400 bash docs/evidence/machine-model/passes_2026-11-27.sh

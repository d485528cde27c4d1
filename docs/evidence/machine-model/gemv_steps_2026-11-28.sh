# The twenty-first held-back set's GEMV stepping 128 elements a row at a time (calib_gemv_narrow v0; v1 steps of
# 2048), profiled live after the changes it led to (issue 36: L1's re-reads as the global accesses' part of L1,
# catalogue.reread_share; narrow loads in a loop bound by L1 take s/16 of its steps, parallelism.wider_loads_share):
# both versions in annotation mode through the kprof CLI, then each version's event-mode time twice for the
# measured gain. From the repository root on the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/gemv_steps_2026-11-28.sh
PAIRS='calib_gemv_narrow:v0:annotation calib_gemv_narrow:v1:annotation
calib_gemv_narrow:v0:event calib_gemv_narrow:v1:event calib_gemv_narrow:v0:event calib_gemv_narrow:v1:event' \
  BUDGET_S=300 bash docs/evidence/machine-model/passes_2026-11-27.sh

"""Pure analysis: health thresholds, bottleneck classification, ranked opportunities.

Everything here is a function of numbers (percentages, bytes, waves); nothing reads a
device, a file or a clock, so every rule is unit-testable and fast (``classify`` runs in
microseconds).

Thresholds and the classification table are SPEC.md's (from the profiling guide):

=================  =========  ==================================================
metric             healthy    if unhealthy
=================  =========  ==================================================
TC util            > 60 %     memory- or latency-bound
DRAM throughput    > 70 %     compute- or latency-bound
occupancy          > 25 %     register / shared-memory pressure
L2 hit rate        > 80 %     poor data reuse (a *locality issue* flag)
local spilling     0 bytes    register overflow
waves / SM         > 1.0      under-filled GPU
DRAM bytes ÷ model ≤ 1.25     over-fetch (uncoalesced/strided access, L2 misses)
=================  =========  ==================================================

The last row is ours, not the guide's: with counters, measured DRAM bytes over the kernel's
byte model exposes traffic the algorithm does not need.

A kernel with no tensor-core work (elementwise, reductions, FP32 SIMT) has TC% = 0 by
construction, so its compute utilisation is taken from SM throughput (``compute_pct``).

Estimated gains come from one time model (:func:`opportunities`): each is the share of the
stage's measured time one change would remove, never more than the gap to the stage's
speed-of-light time. docs/diagnosis-calibration.md compares them with measured fixes.

The package: :mod:`.metrics` (thresholds, :class:`Metrics`, classification, the gain arithmetic),
:mod:`.catalogue` (causes the accounting proves), :mod:`.opportunities` (one stage's ranked
opportunities, root cause and diagnosis), :mod:`.ncu_rules` (Nsight Compute's rules as
opportunities), :mod:`.passes` (a plan's stages re-reading its data) and :mod:`.timeline` (what a timeline and its idle breakdown show). Callers import
the names below from ``kprof_mcp.analysis.diagnosis``. Everything here is facts (a cause key and its
measured values, a root cause's symptom): :mod:`kprof_mcp.render.diagnosis` words them.
"""

from __future__ import annotations

from .catalogue import (
    ATOMIC_MIN_SECTOR_SHARE,
    BANK_CONFLICT_MIN_PER_WAVEFRONT,
    DIVERGENCE_MIN,
    DIVERGENCE_MIN_ISSUE_PCT,
    MEMORY_LATENCY_STALLS,
    MEMORY_WAIT_MIN_SHARE,
    REUSE_TILE,
    SHARED_WAIT_MIN_SHARE,
    UNCOALESCED_SECTORS_PER_REQUEST,
    accounting_causes,
)
from .metrics import (
    _COMPUTE_ATTAINABLE_PCT,
    _DRAM_ATTAINABLE_PCT,
    _ROOFLINE_COMPUTE_ATTAINABLE_PCT,
    COMPUTE_BOUND,
    DRAM_HEALTHY_PCT,
    DRAM_SATURATED_PCT,
    L2_HIT_HEALTHY_PCT,
    LATENCY_BOUND,
    MEMORY_BOUND,
    METRICS_ONLY_MAX_SHARE,
    MIN_SHARE,
    OCCUPANCY_HEALTHY_PCT,
    OVER_FETCH_HEALTHY,
    SPILL_HEALTHY_BYTES,
    TAIL_MAX_WAVES,
    TC_HEALTHY_PCT,
    WAVES_HEALTHY,
    Diagnosis,
    Facts,
    Metrics,
    Opportunity,
    RootCauseFacts,
    classify,
    compute_utilisation,
    gain_pct,
    locality_issue,
    roofline_metrics,
    unhealthy_metrics,
)
from .ncu_rules import (
    rule_cause,
    rule_not_ranked,
    rule_opportunities,
)
from .opportunities import (
    diagnose,
    opportunities,
    root_cause,
)
from .passes import reread_across_stages
from .stage_batch import batch_across_stages
from .timeline import (
    idle_opportunities,
    timeline_opportunities,
)

__all__ = [
    "ATOMIC_MIN_SECTOR_SHARE",
    "BANK_CONFLICT_MIN_PER_WAVEFRONT",
    "COMPUTE_BOUND",
    "DIVERGENCE_MIN",
    "DIVERGENCE_MIN_ISSUE_PCT",
    "DRAM_HEALTHY_PCT",
    "DRAM_SATURATED_PCT",
    "Diagnosis",
    "L2_HIT_HEALTHY_PCT",
    "LATENCY_BOUND",
    "MEMORY_BOUND",
    "MEMORY_LATENCY_STALLS",
    "MEMORY_WAIT_MIN_SHARE",
    "METRICS_ONLY_MAX_SHARE",
    "MIN_SHARE",
    "Metrics",
    "OCCUPANCY_HEALTHY_PCT",
    "OVER_FETCH_HEALTHY",
    "Facts",
    "Opportunity",
    "REUSE_TILE",
    "RootCauseFacts",
    "SHARED_WAIT_MIN_SHARE",
    "SPILL_HEALTHY_BYTES",
    "TAIL_MAX_WAVES",
    "TC_HEALTHY_PCT",
    "UNCOALESCED_SECTORS_PER_REQUEST",
    "WAVES_HEALTHY",
    "_COMPUTE_ATTAINABLE_PCT",
    "_DRAM_ATTAINABLE_PCT",
    "_ROOFLINE_COMPUTE_ATTAINABLE_PCT",
    "accounting_causes",
    "batch_across_stages",
    "classify",
    "compute_utilisation",
    "diagnose",
    "gain_pct",
    "idle_opportunities",
    "locality_issue",
    "opportunities",
    "reread_across_stages",
    "roofline_metrics",
    "root_cause",
    "rule_cause",
    "rule_not_ranked",
    "rule_opportunities",
    "timeline_opportunities",
    "unhealthy_metrics",
]

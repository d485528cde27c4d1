"""A plan whose consecutive stages launch the same kernel on grids that each leave most of the GPU idle (issue 36;
the twenty-third held-back set's Q, K and V projections: three launches of one matmul kernel, 32 programs each on
132 SMs, one after another). Each stage's own few-blocks what-if splits its work; the plan's is the one the
timeline replay makes of a loop over items (:mod:`kprof_mcp.analysis.replay.batch`): the run launched once over
all its items (a batched or grouped launch, the weights concatenated, or the stages on streams of their own).

**A run**: two or more consecutive stages of a pipeline, each one kernel of the same name and launch shape
(grid and tiling), each grid under the SMs (fill f_s = blocks / SMs < 1), none persistent. The profile does not
say whether the stages are independent: the advice says so, as the replay's does.

**What-if**: the run's stages as one launch at full fill: its time is the run's work spread over the GPU,
Σ T_s · f_s, never under its longest stage (a program does not get faster) — the replay's rule for a batched
run. The plan's other stages keep their time; gain = T / T' − 1 over the plan, a whole-plan opportunity.

Pure: numbers in, numbers out.
"""

from __future__ import annotations

from .metrics import Facts, Opportunity, gain_pct

MIN_STAGES = 2  # a plan names its stages: two launches of one kernel in a row are already a run


def _key(s) -> tuple | None:
    """A stage's launch: (kernel, grid, tiling), or None where it is not one partial-fill launch."""
    # Nsight Compute's kernels (annotation, ncu), else CUPTI's (event mode: one launch a run)
    kernels = s.ncu_kernels or [k.name for k in s.kernel_times or () if k.launches_per_run == 1]
    if (
        len(set(kernels)) != 1
        or len(s.kernel_times or ()) > 1
        or s.persistent
        or not s.grid_blocks
        or not s.sm_count
    ):
        return None
    if s.grid_blocks >= s.sm_count:
        return None
    tiling = tuple(sorted((k, str(v)) for k, v in (s.tiling or {}).items() if k != "source"))
    return (kernels[0], s.grid_blocks, tiling)


def batch_across_stages(result, stages) -> Opportunity | None:
    """``result``: the ProfileResult; ``stages``: its StageAssessments. The longest run's what-if, or None."""
    if result.plan_kind != "pipeline" or len(stages) < MIN_STAGES:
        return None
    times = [sa.stage.timing.median_ns if sa.stage.timing else None for sa in stages]
    if any(not t or t <= 0 for t in times):
        return None
    keys = [_key(sa.stage) for sa in stages]
    runs: list[list[int]] = []
    for i, k in enumerate(keys):
        if k is not None and runs and runs[-1][-1] == i - 1 and keys[i - 1] == k:
            runs[-1].append(i)
        elif k is not None:
            runs.append([i])
    runs = [r for r in runs if len(r) >= MIN_STAGES]
    if not runs:
        return None
    total = sum(times)
    best = None
    for r in runs:
        run_t = sum(times[i] for i in r)
        work = sum(times[i] * stages[i].stage.grid_blocks / stages[i].stage.sm_count for i in r)
        batched = max(work, max(times[i] for i in r))
        saved = run_t - batched
        if saved > 0 and (best is None or saved > best[0]):
            best = (saved, r, batched)
    if best is None:
        return None
    saved, r, batched = best
    s0 = stages[r[0]].stage
    share = saved / total
    facts = Facts(
        move="batch_stages",
        focus=tuple(stages[i].stage.name for i in r),
        kernel=keys[r[0]][0],
        kernels=len(r),
        grid_blocks=s0.grid_blocks,
        sm_count=s0.sm_count,
        value=batched,
        source="stages",
    )
    return Opportunity("few_blocks", gain_pct(share), share, True, facts)

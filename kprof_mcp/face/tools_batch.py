"""The batch tools: ``compare_versions``, ``measure_noise`` and ``sweep``."""

from __future__ import annotations

from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from ..engine import KprofError
from ..render.compare import CompareSummary, compare_summary
from ..render.noise import NoiseCase, NoiseSummary, noise_markdown, noise_summary
from ..render.sweep import SweepSummary, sweep_summary
from .errors import _ann
from .toolctx import ToolContext

# The arguments compare_versions and sweep share (their schemas as each had them).
TimingClock = Annotated[
    str,
    Field(
        description="'base' (default: the SM clock locked at the device's sustained clock for the timing, "
        "reset after) or 'none' (clocks free)"
    ),
]
TimeLimit = Annotated[float | None, Field(ge=1, le=86400, description="time limit (default 900)")]


def wait_within(gives: str) -> Any:
    """``wait_s``: answer with ``gives`` within this many seconds, else a job id."""
    return Annotated[
        float | None,
        Field(
            ge=0,
            le=55,
            description=f"answer within this many seconds: {gives} if done, else a job_id for get_profile "
            "(default 45)",
        ),
    ]


def register_batch(mcp: MCPServer, tc: ToolContext) -> None:
    """compare_versions, measure_noise and sweep."""
    engine = tc.engine
    jobs = tc.jobs
    _pending = tc.answers.pending
    _wait = tc.answers.wait
    _sweep_content = tc.answers.sweep_content

    async def run_job(check, label, ctx: Context, wait_s: float | None, what: str, gives: str, pending, done):
        """The batch tools' one shape: check the request in a thread (a KprofError is the caller's
        ToolError), queue it as a job labelled ``label(spec)``, wait up to ``wait_s``; then
        ``done(job)`` or, while it is queued or running, how to fetch ``gives`` with the
        ``pending(spec, job)`` summary."""
        try:
            spec = await anyio.to_thread.run_sync(check)
        except KprofError as e:
            raise ToolError(str(e)) from None
        job = jobs.submit(spec, label(spec))
        await _wait(job, ctx, wait_s if wait_s is not None else engine.config.wait_s)
        text = _pending(job, what, gives)
        if text:
            return CallToolResult(
                content=[TextContent(type="text", text=text)],
                structured_content=pending(spec, job).model_dump(mode="json"),
            )
        return done(job)

    @mcp.tool(
        annotations=_ann(
            False, False, False, False, "Compare kernel versions (A/B with a confidence interval)"
        )
    )
    async def compare_versions(
        kernel: Annotated[str, Field(description="kernel package name (list_kernels) or path to a package")],
        versions: Annotated[
            list[str],
            Field(
                max_length=8,
                description="2 to 8 versions, the baseline first, e.g. "
                "['v1', 'v3']; or one version with "
                "param_sets",
            ),
        ],
        ctx: Context,
        params: Annotated[
            dict[str, Any] | None, Field(description="kernel parameters; omitted ones take their defaults")
        ] = None,
        param_sets: Annotated[
            list[dict[str, Any]] | None,
            Field(
                max_length=8,
                description="2 to 8 parameter sets, each applied on top of params, the baseline's first, e.g. "
                "[{'K': 4096}, {'K': 4095}]: every version runs at every set (8 combinations at most)",
            ),
        ] = None,
        mode: Annotated[
            str,
            Field(
                description="'event' (default): the interleaved timing alone; 'annotation' or "
                "'ncu': the timing, then each version profiled under Nsight Compute "
                "with its counters side by side (minutes, not seconds)"
            ),
        ] = "event",
        budget_ms: Annotated[
            float | None,
            Field(ge=100, le=60000, description="timed GPU time over all versions (default 4000)"),
        ] = None,
        rounds: Annotated[
            int,
            Field(
                ge=3, le=200, description="rounds at most; each times every version once, in rotating order"
            ),
        ] = 20,
        wait_s: wait_within("the verdict") = None,
        timeout_s: TimeLimit = None,
        clock_control: TimingClock = "base",
    ) -> Annotated[CallToolResult, CompareSummary]:
        """Is version B faster than version A? Times every version in ONE process on the SAME
        inputs, each checked against the reference first, interleaved round by round in rotating
        order (so clock and thermal drift hit all alike), L2 flushed before every run, kernel time
        from CUPTI on a GPU. Answers with the ratio of medians and a 95 % bootstrap confidence
        interval: "v3 is 1.111× faster than v1 (95 % CI 1.109–1.112)", or "no significant
        difference" when the interval contains 1. Use it instead of comparing two separate
        profiles: those differ by process, memory placement and drift (a few % on an H100).
        With param_sets, one version is compared with itself at other parameters (e.g. an aligned
        and an unaligned K); each set gets its own inputs. With mode='annotation'/'ncu' each version
        is then also profiled under Nsight Compute and the counters (tensor/SM/DRAM throughput,
        occupancy, registers, spills, bottleneck, top opportunity) come side by side with their
        changes: why one is faster, not only whether.
        The text is compare.md; the structured part has each version's median, spread and runs
        and each comparison's speed-up, CI and verdict; raw samples in compare_dir/samples.csv."""
        return await run_job(
            lambda: engine.check_compare(
                kernel, versions, params, budget_ms, rounds, timeout_s, param_sets, mode, clock_control
            ),
            lambda spec: f"compare {spec.req.kernel} {' vs '.join(a.label for a in spec.req.arms)}",
            ctx,
            wait_s,
            "comparison",
            "the verdict",
            lambda spec, job: CompareSummary(status=job.status, job_id=job.id, kernel=spec.req.kernel),
            lambda job: CallToolResult(
                content=[TextContent(type="text", text=job.outcome.markdown)],
                structured_content=compare_summary(job.outcome.result, job_id=job.id).model_dump(mode="json"),
            ),
        )

    @mcp.tool(annotations=_ann(False, False, False, False, "Measure this GPU's noise floor (A/A profiles)"))
    async def measure_noise(
        ctx: Context,
        cases: Annotated[
            list[NoiseCase] | None,
            Field(
                max_length=8,
                description="kernels to profile repeatedly "
                "(default: matmul v3, softmax v2, vector_add v1: a "
                "compute-bound and two memory-bound cases)",
            ),
        ] = None,
        rounds: Annotated[
            int, Field(ge=2, le=50, description="event profiles of each case, alternating (default 8)")
        ] = 8,
        clock_control: Annotated[
            str, Field(description="'base' (default: locked, as profiles are) or 'none'")
        ] = "base",
        wait_s: Annotated[
            float | None,
            Field(
                ge=0,
                le=55,
                description="answer within this many seconds: the floor "
                "if done, else a job_id for get_profile "
                "(default 45)",
            ),
        ] = None,
    ) -> Annotated[CallToolResult, NoiseSummary]:
        """How much does a profile's time move between two profiles of the SAME code on this GPU?
        Profiles each case in event mode `rounds` times, alternating between cases (A/A), and
        stores each one's (max − min) ÷ median, per GPU model and per class (compute- or
        memory-bound), in kprof's cache. Every later profile on this GPU carries the floor of its
        time scale and class, and its vs-Baseline verdict says "faster"/"slower" only beyond it
        ("no significant change" inside it: use compare_versions for such differences). On an
        H100 at a locked clock: ~3.5 % for a tensor-core GEMM, 0.1–0.4 % for memory-bound kernels.
        Takes about 3 s per profile (8 rounds × 3 cases: ~1–2 min)."""
        return await run_job(
            lambda: engine.check_noise(
                [(c.kernel, c.version, c.params) for c in cases] if cases else None, rounds, clock_control
            ),
            lambda spec: spec.label,
            ctx,
            wait_s,
            "noise measurement",
            "the floor",
            lambda spec, job: NoiseSummary(status=job.status, job_id=job.id),
            lambda job: CallToolResult(
                content=[TextContent(type="text", text=noise_markdown(job.outcome))],
                structured_content=noise_summary(job.outcome, job_id=job.id).model_dump(mode="json"),
            ),
        )

    @mcp.tool(annotations=_ann(False, False, False, False, "Sweep a parameter: table and plot"))
    async def sweep(
        kernel: Annotated[str, Field(description="kernel package name (list_kernels) or path to a package")],
        param: Annotated[str, Field(description="the parameter to sweep, e.g. 't' for mla_decode")],
        values: Annotated[
            list[Any], Field(max_length=32, description="1 to 32 values of it, each within its bounds")
        ],
        ctx: Context,
        versions: Annotated[
            list[str] | None, Field(max_length=4, description="1 to 4 versions (default: the latest)")
        ] = None,
        params: Annotated[
            dict[str, Any] | None, Field(description="the other parameters; omitted ones take their defaults")
        ] = None,
        budget_ms: Annotated[
            float | None,
            Field(ge=20, le=10000, description="timing budget per stage and point (default 300)"),
        ] = None,
        wait_s: wait_within("the table and plot") = None,
        timeout_s: TimeLimit = None,
        clock_control: TimingClock = "base",
    ) -> Annotated[CallToolResult, SweepSummary]:
        """Profile one or more versions across the values of one parameter (sizes, tile counts):
        each point checked against the reference, then timed as event mode times it (kernel time
        from CUPTI, L2 flushed) on a short budget and assessed like a profile. Returns a markdown
        table (time, TFLOP/s, GB/s, % of roofline, bottleneck, top opportunity per point) and a
        PNG plot (time and % of roofline against the parameter, log axes where the values span
        8x) as image content; sweep.csv/.png/.json in sweep_dir. Points that cannot run (too big,
        wrong result) are listed as skipped. Long sweeps return a job_id for get_profile."""
        return await run_job(
            lambda: engine.check_sweep(
                kernel, param, values, versions, params, budget_ms, timeout_s, clock_control
            ),
            lambda spec: f"sweep {spec.req.kernel} {','.join(spec.req.versions)} over {spec.req.param}",
            ctx,
            wait_s,
            "sweep",
            "the table and plot",
            lambda spec, job: SweepSummary(
                status=job.status, job_id=job.id, kernel=spec.req.kernel, param=spec.req.param
            ),
            lambda job: CallToolResult(
                content=_sweep_content(job.outcome),
                structured_content=sweep_summary(
                    job.outcome.result, job.outcome.rows, job_id=job.id
                ).model_dump(mode="json"),
            ),
        )

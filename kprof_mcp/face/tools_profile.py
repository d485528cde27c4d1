"""The profiling tools: ``profile_kernel``, ``profile_command`` (registered only when the operator
allows commands), and the job tools ``get_profile`` and ``cancel_profile``."""

from __future__ import annotations

import time
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from ..engine import KprofError
from ..engine.catalogue import cpu_sized_line
from ..jobs import UnknownJob
from ..render.summary import ProfileSummary
from .errors import _ann
from .io import JobInfo
from .toolctx import ToolContext


def _with_line(result: CallToolResult, line: str) -> CallToolResult:
    """The answer with one more line: at the end of its text (the contract, or the job's state), and
    as the structured part's ``message`` where it has none (a finished profile)."""
    content = list(result.content)
    if content and isinstance(content[0], TextContent):
        content[0] = TextContent(type="text", text=f"{content[0].text.rstrip()}\n\n{line}\n")
    else:
        content.insert(0, TextContent(type="text", text=line))
    data = dict(result.structured_content or {})
    data["message"] = f"{data['message']}; {line}" if data.get("message") else line
    return CallToolResult(content=content, structured_content=data, is_error=result.is_error)


def register_profile(mcp: MCPServer, tc: ToolContext) -> None:
    """profile_kernel, and profile_command when commands are allowed."""
    engine = tc.engine
    jobs = tc.jobs
    allow_commands = tc.allow_commands
    _answer = tc.answers.answer

    @mcp.tool(annotations=_ann(False, False, False, False, "Profile a kernel"))
    async def profile_kernel(
        kernel: Annotated[
            str,
            Field(
                description="kernel package: a name from list_kernels (e.g. 'vector_add', "
                "'matmul') or a path inside the workspace to your own package "
                "directory or .py file defining KERNEL"
            ),
        ],
        ctx: Context,
        version: Annotated[
            str | None, Field(description="version to profile, e.g. 'v0'; default: the newest")
        ] = None,
        params: Annotated[
            dict[str, Any] | None,
            Field(
                description="kernel parameters, e.g. {'n': 16777216, 'dtype': 'float32'}; omitted ones take their "
                "defaults (see list_kernels; without a GPU, smaller CPU-sized ones, named in the answer); bounds and "
                "device-memory fit are checked"
            ),
        ] = None,
        mode: Annotated[
            str,
            Field(
                description="'annotation' (default: Nsight Compute metric set per stage, "
                "clocks locked to base), 'ncu' (full sections, rules, source-level "
                "SASS; slower), 'nsys' (timeline of the whole plan: kernel/API "
                "summaries, stream overlap, launch overhead, idle gaps, waves; "
                "Nsight Systems report or trace.json, timeline.png), 'event' "
                "(kernel time from CUPTI + roofline estimate; works without a "
                "GPU or ncu)"
            ),
        ] = "annotation",
        baseline: Annotated[
            str | None,
            Field(
                description="profile_dir of an earlier run to compare with; the contract then has a filled "
                "'vs Baseline' table. One of other parameters, another device or another mode is refused "
                "(see allow_mismatch)"
            ),
        ] = None,
        allow_mismatch: Annotated[
            bool,
            Field(
                description="compare with a baseline of other parameters, device or mode anyway; what "
                "differs then heads the verdict"
            ),
        ] = False,
        ncu_launches: Annotated[
            int,
            Field(
                ge=1,
                le=20,
                description="annotation/ncu: profiled launches per stage (>1 measures a spread of durations)",
            ),
        ] = 1,
        clock_control: Annotated[
            str,
            Field(
                description="'base' (default: the SM clock locked for the run — by "
                "ncu to base in annotation/ncu, by kprof to the device's "
                "sustained clock in event/nsys — and reset after) or 'none' "
                "(clocks free; needed under MIG)"
            ),
        ] = "base",
        timeline_iters: Annotated[
            int,
            Field(
                ge=1,
                le=50,
                description="nsys: plan iterations recorded back to back (after 3 warm-up iterations)",
            ),
        ] = 5,
        timeline_engine: Annotated[
            str,
            Field(
                description="nsys: 'auto' (Nsight Systems when a working one is "
                "found, else CUPTI via torch.profiler, and the report says "
                "why), 'nsys' (Nsight Systems or an error) or 'kineto' "
                "(torch.profiler)"
            ),
        ] = "auto",
        wait_s: Annotated[
            float | None,
            Field(
                ge=0,
                le=55,
                description="answer within this many seconds: the "
                "contract if the profile is done, else a "
                "job_id for get_profile (default 45)",
            ),
        ] = None,
        timeout_s: Annotated[
            float | None,
            Field(
                ge=1,
                le=86400,
                description="time limit of the profile; past it the process tree is killed (default 900)",
            ),
        ] = None,
    ) -> Annotated[CallToolResult, ProfileSummary]:
        """Profile one version of a kernel and return the Profiler Output Contract (markdown).

        The kernel runs in a separate process and is first checked against the package's
        reference (a wrong result is reported as an error, not profiled). Then, by mode:
        annotation — each stage's launch inside an NVTX range is profiled by Nsight Compute
        (one run, few replay passes; JIT/autotune/warm-up excluded): TC%, SM%, DRAM%,
        achieved/theoretical occupancy, L2 hit, spills, waves, registers, shared memory,
        duration and DRAM bytes vs the stage's byte model (over-fetch), where the time went
        (each stall reason's share of the warps' time, pipe utilisation, FFMA vs tensor-core
        instructions, global atomics, sectors per request, bank conflicts), plus ncu's own rule
        estimates; ncu — the same with `--set full`, report-verbose.md with every section and
        source/<stage>.md mapping SASS samples and stall reasons to source lines; nsys — an
        Nsight Systems recording (or, when none works here, torch.profiler/CUPTI; the report
        names the engine and why) of several back-to-back iterations of the whole plan:
        kernel and CUDA API summaries, memory operations, per-stage ranges, stream overlap,
        launch order, GPU idle gaps, launch-bound verdict, waves, timeline.nsys-rep/.sqlite or
        trace.json, and timeline.png; event — each stage's kernel time from CUPTI (what Nsight
        Systems reports) with L2 flushed, repeated until the spread is small, the launch-inclusive
        CUDA-event time beside it (TC%/DRAM%/Occ%
        are then `n/a` and the class comes from the roofline position; on a machine without a
        GPU this is CPU timing and says so). The contract gives per-stage duration, the
        bottleneck, the root cause and the top 3 opportunities with estimated gain and trigger
        metric. Each estimate is the share of the stage's time one change would remove, never
        more than its gap to the speed of light (FLOP/byte model over the device's peaks);
        causes a counter pins down (few blocks, tail, spills, over-fetch, launch gaps; from the
        accounting: a dot on the FMA pipes, contended atomics, small tiles, bank conflicts;
        each opportunity's `cause` key names it) rank before generic advice. Checked against measured fixes on an H100
        (docs/diagnosis-calibration.md): the planted problem ranked first in every pair, the
        top estimate within 2x of the measured gain in most: rank by it, do not bank on its
        size. Artifacts (params.json, report.md, tiling/, compiled/, profile.ncu-rep, ...) are
        under `profile_dir`; other versions profiled in the same mode and parameters appear in
        report.md's comparison table."""
        received = time.perf_counter()
        fills: dict[str, Any] = {}

        def check():
            # Without a GPU: the package's CPU-sized defaults for what the caller did not give.
            fills.update(engine.cpu_sized(kernel, set(params or {})))
            return engine.check_profile(
                kernel,
                version,
                {**fills, **(params or {})} if fills else params,
                mode,
                baseline,
                timeout_s,
                ncu_launches,
                clock_control,
                timeline_iters,
                timeline_engine,
                allow_mismatch,
            )

        try:
            spec = await anyio.to_thread.run_sync(check)
        except KprofError as e:
            raise ToolError(str(e)) from None
        job = jobs.submit(spec, f"{spec.req.kernel} {spec.req.version} {spec.req.mode}", received)
        result = await _answer(
            job, ctx, wait_s if wait_s is not None else engine.config.wait_s, cancel_on_abort=True
        )
        return _with_line(result, cpu_sized_line(fills, "params " + "/".join(fills))) if fills else result

    async def profile_command(
        command: Annotated[
            list[str],
            Field(
                description="argument vector, never a shell string: ['python', "
                "'train.py', '--steps', '5'], ['python', '-m', 'pytest', "
                "'tests/test_x.py::test_y'] or ['python', '-m', 'pkg.mod']"
            ),
        ],
        ctx: Context,
        mode: Annotated[
            str,
            Field(
                description="'event' (default: CUPTI kernel time per range occurrence; works "
                "without a GPU, CPU wall time), 'nsys' (Nsight Systems timeline of the "
                "whole run, stages by range), 'annotation' / 'ncu' (Nsight Compute "
                "counters per range: every kernel up to max_kernels)"
            ),
        ] = "event",
        include: Annotated[
            list[str] | None,
            Field(
                max_length=32,
                description="range names (fnmatch patterns) that "
                "are stages, e.g. ['forward', "
                "'backward', 'attn*']; default: every "
                "range; with no range at all the "
                "kernels, by name",
            ),
        ] = None,
        stage_models: Annotated[
            dict[str, dict[str, Any]] | None,
            Field(
                description="FLOPs/bytes of one occurrence of a stage when you know them: {'attention': {'flops': "
                "4.3e9, 'bytes': 6.7e7, 'dtype': 'bfloat16', 'tensor_cores': true}} (integer work: 'int_ops', "
                "the integer and logic operations it needs); without one a stage has no roofline and is ranked "
                "from counters alone"
            ),
        ] = None,
        cwd: Annotated[
            str | None, Field(description="working directory inside the workspace (default: the workspace)")
        ] = None,
        max_kernels: Annotated[
            int, Field(ge=1, le=5000, description="annotation/ncu: profile at most this many kernel launches")
        ] = 200,
        clock_control: Annotated[
            str,
            Field(
                description="'base' (default: SM clock locked for the run, reset "
                "after) or 'none' (clocks free)"
            ),
        ] = "base",
        timeline_engine: Annotated[str, Field(description="nsys: 'auto', 'nsys' or 'kineto'")] = "auto",
        warmup_occurrences: Annotated[
            int,
            Field(
                ge=0,
                le=100,
                description="event/nsys: the first occurrences of "
                "each range left out (JIT compilation, "
                "first-call set-up); default 1; never a pytest test's single occurrence",
            ),
        ] = 1,
        python_backtrace: Annotated[
            bool,
            Field(
                description="nsys: record each CUDA call's Python stack, so every cause of the GPU's idle "
                "time (sync, allocation, copy, launches) names the line that made its calls (Nsight Systems; "
                "on the Kineto engine, torch.profiler's with_stack names the user function); costs ~8 µs per "
                "CUDA call, which the timeline shows as launch overhead"
            ),
        ] = False,
        wait_s: Annotated[
            float | None,
            Field(
                ge=0,
                le=55,
                description="answer within this many seconds: the "
                "contract if done, else a job_id for "
                "get_profile (default 45)",
            ),
        ] = None,
        timeout_s: Annotated[
            float | None,
            Field(
                ge=1,
                le=86400,
                description="time limit; past it the command's process tree is killed (default 900)",
            ),
        ] = None,
    ) -> Annotated[CallToolResult, ProfileSummary]:
        """EXECUTES CODE: runs your Python command (a script or module under the workspace, e.g. a
        training step or a pytest test) in its own process and profiles it; returns the same
        Profiler Output Contract as profile_kernel.

        Use it for code that already runs, before (or instead of) writing a kernel package:
        stages are the command's ranges — mark regions with `kprof.range("name")` (importable
        without torch; also NVTX and torch.profiler.record_function ranges) — selected by
        `include`; with no range, its kernels grouped by name. A pytest command (`python -m
        pytest ...` or `pytest ...`) has one stage per test (its call phase, named like
        `test_x.py::test_y[param]`; `include=["*test_y*"]` picks some). Each stage gets the contract's
        row, counters (annotation/ncu), bottleneck, opportunities and, in ncu mode, the source
        view. In nsys mode (or on Kineto) the report's "Where the wall time went" splits the
        ranges' wall time into GPU busy and GPU idle by what the host was doing (a sync or
        `.item()`, launch calls, one-off module loads, host-to-device copies, its own work), and
        opportunity 1 names a host-side cause when it owns the time: a sync per step, host-bound,
        launch-bound, copy-bound; several memory-bound kernels in one range are told to fuse
        (pass stage_models). Samples are the range's occurrences as the application ran them (no L2 flush, no
        repeat runs), and a command has no reference, so correctness is not checked: for
        controlled A/B timing and correctness, wrap the kernel as a package (`kprof init NAME`)
        and use profile_kernel / compare_versions. The command runs under the same job queue,
        GPU lock, time limit and cancellation as a profile; its output's tail is in report.md;
        a command that fails, or records no range and no kernel, is an error saying so."""
        try:
            spec = await anyio.to_thread.run_sync(
                lambda: engine.check_command(
                    command,
                    cwd,
                    mode,
                    include,
                    stage_models,
                    timeout_s,
                    max_kernels,
                    clock_control,
                    timeline_engine,
                    warmup_occurrences,
                    python_backtrace,
                )
            )
        except KprofError as e:
            raise ToolError(str(e)) from None
        job = jobs.submit(spec, f"command {' '.join(command[1:3])[:80]} {spec.req.mode}")
        return await _answer(
            job, ctx, wait_s if wait_s is not None else engine.config.wait_s, cancel_on_abort=True
        )

    if allow_commands:  # executing the caller's code is a capability the operator turns on
        mcp.tool(annotations=_ann(False, True, False, True, "Profile a Python command (executes code)"))(
            profile_command
        )


def register_jobs(mcp: MCPServer, tc: ToolContext) -> None:
    """get_profile and cancel_profile."""
    jobs = tc.jobs
    _answer = tc.answers.answer

    @mcp.tool(annotations=_ann(True, False, False, False, "Result or state of a profiling job"))
    async def get_profile(
        job_id: Annotated[str, Field(description="the job_id profile_kernel returned")],
        ctx: Context,
        wait_s: Annotated[
            float,
            Field(
                ge=0,
                le=50,
                description="wait up to this many seconds for the job to "
                "finish (progress is reported meanwhile)",
            ),
        ] = 0,
    ) -> Annotated[CallToolResult, ProfileSummary]:
        """Return a profiling job's contract when it is done, else its state (queued with its
        place in the GPU queue, or running with progress). A failed job returns its error; a
        cancelled one says so. Cancelling this call does not cancel the job (cancel_profile does)."""
        try:
            job = jobs.get(job_id)
        except UnknownJob as e:
            raise ToolError(str(e.args[0])) from None
        return await _answer(job, ctx, wait_s, cancel_on_abort=False)

    @mcp.tool(annotations=_ann(False, True, True, False, "Cancel a profiling job"))
    async def cancel_profile(
        job_id: Annotated[str, Field(description="the job_id profile_kernel returned")],
    ) -> JobInfo:
        """Cancel a profiling job: a queued job leaves the queue; a running one has its whole
        process tree killed (no orphans) and clocks a profiler locked are reset. Returns the
        job's final state. Cancelling a finished job changes nothing."""
        try:
            job = await anyio.to_thread.run_sync(lambda: jobs.cancel(job_id))
        except UnknownJob as e:
            raise ToolError(str(e.args[0])) from None
        snap = jobs.snapshot(job)
        return JobInfo(
            **{
                k: snap[k]
                for k in (
                    "job_id",
                    "status",
                    "label",
                    "queue_position",
                    "gpu",
                    "progress",
                    "message",
                    "error",
                )
            }
        )

"""The MCP layer: tool registration, argument descriptions, errors → ``ToolError``.

Thin on purpose: each tool validates its input through the engine and returns a pydantic
model (structured output) plus a text block. No torch or triton is imported here.
"""

from __future__ import annotations

import argparse
import atexit
import functools
import inspect
import logging
import os
import sys
import threading
from contextlib import contextmanager
from typing import Annotated, Any, Callable, Iterator, Mapping

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from .engine import CompareOutcome, Config, Engine, KprofError, SweepOutcome
from .jobs import CANCELLED, DONE, FAILED, QUEUED, Job, JobManager, UnknownJob
from .models import Diagnosis
from .noise import NoiseOutcome
from .render.compare import CompareSummary, compare_summary
from .render.noise import NoiseCase, NoiseSummary, noise_markdown, noise_summary
from .render.summary import ProfileSummary, profile_summary
from .render.sweep import SweepSummary, sweep_summary
from .warm import WorkerPool

INSTRUCTIONS = """\
kprof-mcp profiles GPU kernels (Triton / PyTorch) and answers with the Profiler Output Contract.
Workflow: list_kernels → profile_kernel(kernel, version, params) → read the contract (Stages,
Bottleneck, Top 3 Opportunities) → change the kernel → profile_kernel again with
baseline=<previous profile_dir> → compare_versions(kernel, [old, new]) for a verdict with a 95 % CI →
update_devlog. Modes: 'annotation' (default first pass: Nsight
Compute counters per stage), 'ncu' (deep dive: every section, rules, source-level SASS), 'nsys'
(timeline: stream overlap, launch overhead, idle gaps; Nsight Systems, or CUPTI via torch.profiler),
'event' (quick A/B: each kernel's own time from CUPTI, launch-inclusive CUDA-event time beside it). Without a GPU only 'event' and 'nsys' run (CPU timing, labelled as such).
device_info tells which device, peaks, profilers and modes are usable.
"""


class ParamInfo(BaseModel):
    name: str
    default: int | str
    min: int | None = None
    max: int | None = None
    choices: list[str] | None = None
    doc: str = ""


class VersionInfo(BaseModel):
    name: str
    doc: str
    plan_kind: str
    stages: list[str]


class KernelInfo(BaseModel):
    name: str
    description: str = ""
    source: str
    params: list[ParamInfo]
    versions: list[VersionInfo]
    error: str | None = Field(default=None, description="set when the package failed to load")


class KernelList(BaseModel):
    kernels: list[KernelInfo]
    modes: dict[str, bool] = Field(description="mode name -> built in this version")


class JobInfo(BaseModel):
    job_id: str
    status: str = Field(description="queued | running | done | failed | cancelled")
    label: str
    queue_position: int | None = None
    gpu: str | None = None
    progress: float = 0.0
    message: str = ""
    error: str | None = None


class ParamsFile(BaseModel):
    profile_dir: str
    params: dict[str, Any] = Field(
        description="the run's params.json: parameters, dtype, device, clocks, versions"
    )


class DevlogResult(BaseModel):
    path: str
    entry: str


class DeviceInfo(BaseModel):
    info: dict[str, Any]


def _ann(
    read_only: bool, destructive: bool, idempotent: bool, open_world: bool, title: str
) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=open_world,
    )


MAX_ERROR_CHARS = 2000  # the longest error text a tool call answers with, whatever the input
_log = logging.getLogger("kprof_mcp.server")


def _internal_error(tool: str, e: Exception) -> ToolError:
    """The answer for an exception ``tool`` did not anticipate (a bug: every bad input is meant
    to raise :class:`KprofError` with a reason where it is checked), logged with its traceback.
    An ``OSError`` is named by its ``strerror`` alone: its file name may be a path the caller
    must not learn (outside the workspace, or a link's target)."""
    _log.error("internal error in tool %s", tool, exc_info=e)
    detail = (e.strerror or str(e)) if isinstance(e, OSError) else str(e)
    if len(detail) > 300:
        detail = detail[:300] + "…"
    return ToolError(
        f"internal error in {tool}: {type(e).__name__}: {detail} (a bug in kprof-mcp; the server's "
        "log has the traceback)"
    )


# Failures the SDK itself answers with their own message (a ToolError's text, a protocol error).
_ANSWERED_BY_SDK = (ToolError, ResourceError, MCPError)


@contextmanager
def _reasons(tool: str) -> Iterator[None]:
    """The last-resort net around a tool's body: a :class:`KprofError` that escaped it answers with
    its message, any other unexpected exception with :func:`_internal_error` — never the SDK's bare
    "Error executing tool <name>", which says nothing the caller can act on."""
    try:
        yield
    except _ANSWERED_BY_SDK:
        raise
    except KprofError as e:
        raise ToolError(str(e)) from None
    except Exception as e:  # noqa: BLE001 — the net: whatever it is, the caller gets a reason
        raise _internal_error(tool, e) from e


def _with_reason(fn: Callable[..., Any], tool: str) -> Callable[..., Any]:
    """``fn`` (a tool's function) run inside :func:`_reasons`; async stays async (the SDK awaits
    it), sync stays sync (the SDK runs it in a thread)."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def reasoned_async(*args: Any, **kwargs: Any) -> Any:
            with _reasons(tool):
                return await fn(*args, **kwargs)

        return reasoned_async

    @functools.wraps(fn)
    def reasoned(*args: Any, **kwargs: Any) -> Any:
        with _reasons(tool):
            return fn(*args, **kwargs)

    return reasoned


async def _bounded_errors(ctx: Any, call_next: Callable[[Any], Any]) -> Any:
    """Server middleware: a failed tool call's text is cut to :data:`MAX_ERROR_CHARS`. kprof's own
    messages quote at most ~200 characters of any input (``safefs.clip``), but some texts are the
    SDK's: its argument-validation error lists every failing item with its value (a 10,000-entry
    list of the wrong type answers 1.8 MB), and "Unknown tool: <name>" quotes the name whole."""
    result = await call_next(ctx)
    if ctx.method != "tools/call" or not isinstance(result, dict) or not result.get("isError"):
        return result
    content = []
    for block in result.get("content") or []:
        text = block.get("text") if isinstance(block, dict) else None
        if isinstance(text, str) and len(text) > MAX_ERROR_CHARS:
            cut = f"… (cut: {len(text)} characters in all)"
            block = {**block, "text": text[: MAX_ERROR_CHARS - len(cut)] + cut}
        content.append(block)
    return {**result, "content": content}


class _ReasonedServer(MCPServer):
    """The MCP server: every tool registered through :func:`_with_reason`, every failed call's text
    bounded by :func:`_bounded_errors`, so no call answers without a reason, nor with a huge one."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, middleware=[_bounded_errors], **kwargs)

    def add_tool(self, fn: Callable[..., Any], name: str | None = None, *args: Any, **kwargs: Any) -> None:
        super().add_tool(_with_reason(fn, name or fn.__name__), name, *args, **kwargs)


def build_server(
    config: Config | None = None,
    start_workers: bool = False,
    pool: WorkerPool | None = None,
    cluster: dict[str, Any] | None = None,
    allow_commands: bool = False,
) -> MCPServer:
    """``cluster``: {"address", "security"} — jobs run as Dask tasks (kprof_mcp.cluster).
    ``allow_commands``: register ``profile_command``, which executes the caller's Python command
    (the operator's explicit choice: ``--allow-commands``)."""
    engine = Engine(config, eager_workers=cluster is None, pool=pool)
    slots = ([None] if engine.config.force_cpu else engine.config.gpus) or None
    import atexit

    if cluster is not None:  # Dask is imported only here
        from .cluster import connect

        connect(engine, cluster["address"], cluster.get("security"))  # KprofError: main() reports it
        jobs = JobManager(engine.execute, slots=engine.remote.slots(), more_slots=engine.remote.slots)
        start_workers = False
    else:
        jobs = JobManager(engine.execute, slots=slots)

    atexit.register(engine.close)  # registered first, so it runs after jobs.shutdown: warm workers killed
    atexit.register(jobs.shutdown)  # server exit: queued jobs dropped, running process trees killed
    if start_workers:  # importing torch and bringing up CUDA while the client connects
        engine.start_workers(jobs.slots)
    mcp = _ReasonedServer("kprof-mcp", instructions=INSTRUCTIONS, version="0.1.0")

    @mcp.tool(annotations=_ann(True, False, True, False, "List kernel packages"))
    def list_kernels() -> KernelList:
        """List the kernel packages that can be profiled: each one's versions (v0, v1, ...),
        parameters with defaults and bounds (always including dtype), and the named stages
        each version's plan runs. Call this first to learn valid `kernel`, `version` and
        `params` for profile_kernel."""
        try:
            kernels = engine.list_kernels()
        except KprofError as e:
            raise ToolError(str(e)) from None
        out = []
        for k in kernels:
            out.append(
                KernelInfo(
                    name=k["name"],
                    description=k.get("description", ""),
                    source=k.get("source", ""),
                    params=[ParamInfo(**{**p, "choices": p.get("choices")}) for p in k.get("params", [])],
                    versions=[
                        VersionInfo(
                            name=v["name"],
                            doc=v["doc"],
                            plan_kind=v["plan_kind"],
                            stages=[s["name"] for s in v["stages"]],
                        )
                        for v in k.get("versions", [])
                    ],
                    error=k.get("error"),
                )
            )
        from .modes import MODES

        return KernelList(kernels=out, modes={name: True for name in MODES})

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
                "defaults (see list_kernels); bounds and device-memory fit are checked"
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
                "'vs Baseline' table"
            ),
        ] = None,
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
        try:
            spec = await anyio.to_thread.run_sync(
                lambda: engine.check_profile(
                    kernel,
                    version,
                    params,
                    mode,
                    baseline,
                    timeout_s,
                    ncu_launches,
                    clock_control,
                    timeline_iters,
                    timeline_engine,
                )
            )
        except KprofError as e:
            raise ToolError(str(e)) from None
        job = jobs.submit(spec, f"{spec.req.kernel} {spec.req.version} {spec.req.mode}")
        return await _answer(
            job, ctx, wait_s if wait_s is not None else engine.config.wait_s, cancel_on_abort=True
        )

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
                "4.3e9, 'bytes': 6.7e7, 'dtype': 'bfloat16', 'tensor_cores': true}}; without one a stage "
                "has no roofline and is ranked from counters alone"
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
                "first-call set-up); default 1",
            ),
        ] = 1,
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
        `include`; with no range, its kernels grouped by name. Each stage gets the contract's
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

    async def _answer(job: Job, ctx: Context, wait_s: float, cancel_on_abort: bool) -> CallToolResult:
        """Wait up to ``wait_s`` for the job (see :func:`_wait`); then the contract or the job's state."""
        await _wait(job, ctx, wait_s, cancel_on_abort)
        return _job_result(job)

    def _raise_if_ended_badly(job: Job, what: str) -> None:
        if job.status == FAILED:
            raise ToolError(job.error or f"the {what} failed")
        if job.status == CANCELLED:
            raise ToolError(f"job {job.id} was cancelled: {job.error}")

    def _pending(job: Job, what: str, answer: str) -> str | None:
        """None once the job is done; the text saying how to fetch ``answer`` while it is queued or
        running; a ToolError when it failed or was cancelled."""
        _raise_if_ended_badly(job, what)
        if job.status == DONE:
            return None
        return (
            f"Job `{job.id}` ({job.label}) is {job.status} ({job.progress * 100:.0f}%: {job.message}). Call "
            f"get_profile(job_id=\"{job.id}\") for {answer}, or cancel_profile to stop it."
        )

    def _job_result(job: Job) -> CallToolResult:
        _raise_if_ended_badly(job, "profile")
        if job.status != DONE:
            snap = jobs.snapshot(job)
            summary = ProfileSummary(
                status=job.status,
                job_id=job.id,
                queue_position=snap["queue_position"],
                progress=snap["progress"],
                message=snap["message"],
                gpu=job.slot,
            )
            where = (
                f"queued, place {snap['queue_position']} for the GPU"
                if job.status == QUEUED
                else f"running ({snap['progress'] * 100:.0f}%: {snap['message']})"
            )
            text = (
                f"Job `{job.id}` ({job.label}) is {where}. Call get_profile(job_id=\"{job.id}\") for the "
                "contract (it can wait up to 50 s per call), or cancel_profile to stop it."
            )
            return CallToolResult(
                content=[TextContent(type="text", text=text)],
                structured_content=summary.model_dump(mode="json"),
            )
        outcome = job.outcome
        if isinstance(outcome, SweepOutcome):  # a sweep job fetched through get_profile
            summary = ProfileSummary(
                status=DONE,
                job_id=job.id,
                gpu=job.slot,
                profile_dir=str(outcome.sweep_dir),
                kernel=outcome.result.kernel,
                device=outcome.result.device.name,
                message=f"sweep of {outcome.result.param}: {len(outcome.rows)} points",
            )
            return CallToolResult(
                content=_sweep_content(outcome), structured_content=summary.model_dump(mode="json")
            )
        if isinstance(outcome, NoiseOutcome):  # a measure_noise job fetched through get_profile
            summary = ProfileSummary(
                status=DONE,
                job_id=job.id,
                gpu=job.slot,
                device=outcome.device,
                message=f"noise floor stored in {outcome.stored}",
            )
            return CallToolResult(
                content=[TextContent(type="text", text=noise_markdown(outcome))],
                structured_content=summary.model_dump(mode="json"),
            )
        if isinstance(outcome, CompareOutcome):  # a compare_versions job fetched through get_profile
            summary = ProfileSummary(
                status=DONE,
                job_id=job.id,
                gpu=job.slot,
                profile_dir=str(outcome.compare_dir),
                kernel=outcome.result.kernel,
                device=outcome.result.device.name,
                message="; ".join(c.sentence for c in outcome.result.comparisons),
            )
            return CallToolResult(
                content=[TextContent(type="text", text=outcome.markdown)],
                structured_content=summary.model_dump(mode="json"),
            )
        summary = profile_summary(
            outcome.result,
            outcome.assessment,
            job_id=job.id,
            gpu=job.slot,
            profile_dir=str(outcome.profile_dir),
            baseline=job.spec.baseline,
        )
        return CallToolResult(
            content=[TextContent(type="text", text=outcome.contract)],
            structured_content=summary.model_dump(mode="json"),
        )

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
        wait_s: Annotated[
            float | None,
            Field(
                ge=0,
                le=55,
                description="answer within this many seconds: the "
                "verdict if done, else a job_id for "
                "get_profile (default 45)",
            ),
        ] = None,
        timeout_s: Annotated[
            float | None, Field(ge=1, le=86400, description="time limit (default 900)")
        ] = None,
        clock_control: Annotated[
            str,
            Field(
                description="'base' (default: the SM clock locked at the device's "
                "sustained clock for the timing, reset after) or 'none' "
                "(clocks free)"
            ),
        ] = "base",
    ) -> Annotated[CallToolResult, CompareSummary]:
        """Is version B faster than version A? Times every version in ONE process on the SAME
        inputs, each checked against the reference first, interleaved round by round in rotating
        order (so clock and thermal drift hit all alike), L2 flushed before every run, kernel time
        from CUPTI on a GPU. Answers with the ratio of medians and a 95 % bootstrap confidence
        interval: "v3 is 1.090× faster than v1 (95 % CI 1.085–1.094)", or "no significant
        difference" when the interval contains 1. Use it instead of comparing two separate
        profiles: those differ by process, memory placement and drift (a few % on an H100).
        With param_sets, one version is compared with itself at other parameters (e.g. an aligned
        and an unaligned K); each set gets its own inputs. With mode='annotation'/'ncu' each version
        is then also profiled under Nsight Compute and the counters (tensor/SM/DRAM throughput,
        occupancy, registers, spills, bottleneck, top opportunity) come side by side with their
        changes: why one is faster, not only whether.
        The text is compare.md; the structured part has each version's median, spread and runs
        and each comparison's speed-up, CI and verdict; raw samples in compare_dir/samples.csv."""
        try:
            spec = await anyio.to_thread.run_sync(
                lambda: engine.check_compare(
                    kernel, versions, params, budget_ms, rounds, timeout_s, param_sets, mode, clock_control
                )
            )
        except KprofError as e:
            raise ToolError(str(e)) from None
        job = jobs.submit(spec, f"compare {spec.req.kernel} {' vs '.join(a.label for a in spec.req.arms)}")
        await _wait(job, ctx, wait_s if wait_s is not None else engine.config.wait_s)
        text = _pending(job, "comparison", "the verdict")
        if text:
            return CallToolResult(
                content=[TextContent(type="text", text=text)],
                structured_content=CompareSummary(
                    status=job.status, job_id=job.id, kernel=spec.req.kernel
                ).model_dump(mode="json"),
            )
        out = job.outcome
        return CallToolResult(
            content=[TextContent(type="text", text=out.markdown)],
            structured_content=compare_summary(out.result, job_id=job.id).model_dump(mode="json"),
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
        try:
            spec = await anyio.to_thread.run_sync(
                lambda: engine.check_noise(
                    [(c.kernel, c.version, c.params) for c in cases] if cases else None, rounds, clock_control
                )
            )
        except KprofError as e:
            raise ToolError(str(e)) from None
        job = jobs.submit(spec, spec.label)
        await _wait(job, ctx, wait_s if wait_s is not None else engine.config.wait_s)
        text = _pending(job, "noise measurement", "the floor")
        if text:
            return CallToolResult(
                content=[TextContent(type="text", text=text)],
                structured_content=NoiseSummary(status=job.status, job_id=job.id).model_dump(mode="json"),
            )
        return CallToolResult(
            content=[TextContent(type="text", text=noise_markdown(job.outcome))],
            structured_content=noise_summary(job.outcome, job_id=job.id).model_dump(mode="json"),
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
        wait_s: Annotated[
            float | None,
            Field(
                ge=0,
                le=55,
                description="answer within this many seconds: the "
                "table and plot if done, else a job_id "
                "for get_profile (default 45)",
            ),
        ] = None,
        timeout_s: Annotated[
            float | None, Field(ge=1, le=86400, description="time limit (default 900)")
        ] = None,
        clock_control: Annotated[
            str,
            Field(
                description="'base' (default: the SM clock locked at the device's "
                "sustained clock for the timing, reset after) or 'none' "
                "(clocks free)"
            ),
        ] = "base",
    ) -> Annotated[CallToolResult, SweepSummary]:
        """Profile one or more versions across the values of one parameter (sizes, tile counts):
        each point checked against the reference, then timed as event mode times it (kernel time
        from CUPTI, L2 flushed) on a short budget and assessed like a profile. Returns a markdown
        table (time, TFLOP/s, GB/s, % of roofline, bottleneck, top opportunity per point) and a
        PNG plot (time and % of roofline against the parameter, log axes where the values span
        8x) as image content; sweep.csv/.png/.json in sweep_dir. Points that cannot run (too big,
        wrong result) are listed as skipped. Long sweeps return a job_id for get_profile."""
        try:
            spec = await anyio.to_thread.run_sync(
                lambda: engine.check_sweep(
                    kernel, param, values, versions, params, budget_ms, timeout_s, clock_control
                )
            )
        except KprofError as e:
            raise ToolError(str(e)) from None
        job = jobs.submit(
            spec, f"sweep {spec.req.kernel} {','.join(spec.req.versions)} over {spec.req.param}"
        )
        await _wait(job, ctx, wait_s if wait_s is not None else engine.config.wait_s)
        text = _pending(job, "sweep", "the table and plot")
        if text:
            return CallToolResult(
                content=[TextContent(type="text", text=text)],
                structured_content=SweepSummary(
                    status=job.status, job_id=job.id, kernel=spec.req.kernel, param=spec.req.param
                ).model_dump(mode="json"),
            )
        out = job.outcome
        return CallToolResult(
            content=_sweep_content(out),
            structured_content=sweep_summary(out.result, out.rows, job_id=job.id).model_dump(mode="json"),
        )

    def _sweep_content(out: SweepOutcome) -> list:
        import base64

        content: list = [TextContent(type="text", text=out.markdown)]
        if out.png:
            content.append(
                ImageContent(type="image", data=base64.b64encode(out.png).decode(), mime_type="image/png")
            )
        return content

    async def _wait(job: Job, ctx: Context, wait_s: float, cancel_on_abort: bool = True) -> None:
        """Wait up to ``wait_s`` for the job, sending progress while this request is open (only from
        this coroutine, so never after it returned). When the request is aborted — cancelled
        (notifications/cancelled, or the client went away cleanly), or its HTTP connection dropped
        (:func:`connection_dropped`: the SDK does not cancel the request then) — and
        ``cancel_on_abort``, the job is cancelled and its process tree killed."""
        deadline = anyio.current_time() + max(0.0, wait_s)
        last = None
        try:
            while not job.done.is_set() and anyio.current_time() < deadline:
                if connection_dropped(ctx):  # nobody is waiting for the answer any more
                    if cancel_on_abort:
                        await _cancel(job)
                    return
                msg = (
                    f"queued: place {jobs.position(job)} for the GPU" if job.status == QUEUED else job.message
                )
                if (job.progress, msg) != last:
                    last = (job.progress, msg)
                    try:
                        await ctx.report_progress(job.progress, 1.0, msg)
                    except Exception:  # noqa: BLE001 — progress is best effort
                        pass
                await anyio.sleep(0.1)
            if job.done.is_set() and job.status == DONE:
                # The job may end between two polls, its last steps unseen: the request's last progress
                # says it finished.
                try:
                    await ctx.report_progress(1.0, 1.0, "done")
                except Exception:  # noqa: BLE001 — progress is best effort
                    pass
        except anyio.get_cancelled_exc_class():
            if cancel_on_abort:
                with anyio.CancelScope(shield=True):
                    await _cancel(job)
            raise

    async def _cancel(job: Job) -> None:
        """Cancel the job, waiting (in a thread) until its process tree is killed."""
        await anyio.to_thread.run_sync(lambda: jobs.cancel(job.id, wait_s=20))

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

    @mcp.tool(annotations=_ann(True, False, True, False, "Read a profile's params.json"))
    def read_params(
        profile_dir: Annotated[
            str, Field(description="a profile_dir returned by profile_kernel (inside the workspace)")
        ],
    ) -> ParamsFile:
        """Return the run's params.json: every kernel parameter with dtype, the device (name,
        SMs, L2, table entry), clock state before/after, cache control and the torch / triton /
        CUDA / driver versions. It is the source of truth for the contract's Configuration."""
        try:
            return ParamsFile(profile_dir=profile_dir, params=engine.read_params(profile_dir))
        except KprofError as e:
            raise ToolError(str(e)) from None

    @mcp.tool(annotations=_ann(True, False, True, False, "Classify a bottleneck from metrics"))
    def classify_bottleneck(
        tc_pct: Annotated[
            float | None,
            Field(
                description="tensor-pipe utilisation, % of peak (ncu "
                "sm__pipe_tensor_cycles_active); null if not measured"
            ),
        ],
        dram_pct: Annotated[
            float | None, Field(description="DRAM throughput, % of peak; null if not measured")
        ],
        occupancy_pct: Annotated[float | None, Field(description="achieved occupancy, %")] = None,
        l2_hit_pct: Annotated[float | None, Field(description="L2 hit rate, %")] = None,
        local_spill_bytes: Annotated[
            float | None, Field(description="local-memory spill bytes (0 is healthy)")
        ] = None,
        waves_per_sm: Annotated[
            float | None, Field(description="waves per SM (blocks / (SMs x blocks per SM))")
        ] = None,
        compute_pct: Annotated[
            float | None,
            Field(
                description="SM throughput %, used as compute utilisation when the kernel has no tensor-core work "
                "(TC% = 0 by construction for elementwise/reduction/FP32 kernels)"
            ),
        ] = None,
        dram_bytes_over_model: Annotated[
            float | None,
            Field(
                description="measured DRAM bytes / the kernel's minimum (model) bytes; > 1.25 is over-fetch, "
                "<= 1.25 means streaming (no L2-locality advice)"
            ),
        ] = None,
        duration_us: Annotated[
            float | None,
            Field(
                description="measured kernel time, µs (with sol_us: bounds every "
                "estimate by duration/sol − 1)"
            ),
        ] = None,
        sol_us: Annotated[
            float | None,
            Field(
                description="speed-of-light time, µs: max(FLOPs / peak FLOP/s, minimum "
                "bytes / peak bytes/s) at the clocks it ran"
            ),
        ] = None,
        grid_blocks: Annotated[
            int | None, Field(description="blocks launched (fewer than SMs: idle SMs)")
        ] = None,
        sm_count: Annotated[int | None, Field(description="SMs of the GPU (132 on an H100 SXM)")] = None,
        local_bytes_share_pct: Annotated[
            float | None,
            Field(
                description="local-memory (spill) bytes as % of all L1 traffic bytes (ncu l1tex__t_bytes.sum)"
            ),
        ] = None,
        accounting: Annotated[
            dict[str, float] | None,
            Field(
                description="where the time went, as a profile's result.json stage 'accounting' holds it (Nsight "
                "Compute: stall_<reason> cycles per issued instruction, pipe_<x>_pct, ffma_thread_inst, "
                "hmma_inst, l2_atom_sectors, global_ld_sectors, shared_bank_conflicts, shared_wavefronts, "
                "...): the catalogue's causes (fma_dot, atomics, small_tiles, bank_conflicts) are ranked "
                "from it"
            ),
        ] = None,
        tensor_work: Annotated[bool, Field(description="the work suits tensor cores (a matmul/dot)")] = False,
        flops: Annotated[float | None, Field(description="the stage's FLOPs (its model)")] = None,
        dtype: Annotated[
            str | None, Field(description="element type of the operands, e.g. 'float16'")
        ] = None,
        tensor_peak_tflops: Annotated[
            float | None,
            Field(
                description="the tensor-core peak for this dtype at the clock it ran, TFLOP/s (for fma_dot)"
            ),
        ] = None,
    ) -> Diagnosis:
        """Classify a kernel from its metrics with SPEC.md's thresholds: Memory-bound (DRAM > 70%,
        compute low), Compute-bound (TC/SM > 60%, DRAM low), Latency-bound (both low); flags a
        locality issue when L2 hit < 80% and the DRAM traffic exceeds the model (not compulsory
        misses); lists unhealthy metrics and the opportunities the given metrics support, largest
        first. Each estimate is the share of the time one change would remove (gain = 1/(1 −
        share) − 1), from the same model profile_kernel uses: specific causes (too few blocks,
        spills, over-fetch, tail) first, generic advice credited only with what they leave. Give
        duration_us and sol_us to bound every estimate by the speed of light; without them a
        cause is credited at most 95 % of the time. waves_per_sm=0 is a value (no SM busy), not
        'missing' (use null)."""
        try:
            return Engine.classify(
                tc_pct,
                dram_pct,
                occupancy_pct,
                l2_hit_pct,
                local_spill_bytes,
                waves_per_sm,
                compute_pct,
                dram_bytes_over_model,
                duration_us,
                sol_us,
                grid_blocks,
                sm_count,
                local_bytes_share_pct,
                accounting,
                tensor_work,
                flops,
                dtype,
                tensor_peak_tflops,
            )
        except KprofError as e:
            raise ToolError(str(e)) from None

    @mcp.tool(annotations=_ann(False, False, False, False, "Append to a kernel's development log"))
    def update_devlog(
        kernel: Annotated[
            str, Field(description="kernel name (plain name): the log is docs/kernels/<kernel>.md")
        ],
        profile_dir: Annotated[str, Field(description="the profile_dir whose numbers the entry records")],
        issues: Annotated[list[str] | None, Field(description="remaining problems, one per item")] = None,
        insights: Annotated[
            list[str] | None, Field(description="why the change worked or not; guidance for the next step")
        ] = None,
    ) -> DevlogResult:
        """Append a performance entry (SPEC.md's devlog template: duration, TFLOP/s, GB/s,
        occupancy, TC util, bottleneck, issues, insights) to docs/kernels/<kernel>.md in the
        workspace. 'vs Previous' is filled from the log's last entry. Appends only; safe
        under concurrent calls (file lock, atomic replace)."""
        try:
            path, entry = engine.update_devlog(kernel, profile_dir, issues, insights)
        except KprofError as e:
            raise ToolError(str(e)) from None
        return DevlogResult(path=str(path), entry=entry)

    @mcp.tool(annotations=_ann(True, False, True, False, "Active device, peaks and profilers"))
    def device_info() -> DeviceInfo:
        """The active device (name, memory, clocks, driver), its devices.json peaks (TFLOP/s per
        dtype, GB/s) and ridge points in FLOP/byte, the clock-control policy, which profilers
        are present and which modes are built. With no GPU it says timing runs on the CPU."""
        return DeviceInfo(info=engine.device_info())

    return mcp


LOOPBACK = ("127.0.0.1", "localhost", "::1")
MIN_TOKEN_CHARS = 16


class TokenError(Exception):
    """The bearer token cannot be used; the message says what to do."""


def read_token(token_file: str | None, environ: Mapping[str, str]) -> str | None:
    """The bearer token from ``--token-file`` or ``KPROF_MCP_TOKEN``; None when neither is given.
    A token that is given but empty (or blank) is an error, never "no authentication": an empty
    file or variable is a mistake, and turning authentication off silently would hide it."""
    if token_file is not None:
        try:
            with open(token_file, encoding="utf-8") as f:
                token = f.read(4096).strip()
        except FileNotFoundError:
            raise TokenError(f"--token-file {token_file}: no such file") from None
        except (OSError, UnicodeDecodeError) as e:
            raise TokenError(
                f"--token-file {token_file}: cannot read it ({getattr(e, 'strerror', None) or e})"
            ) from None
        where = f"--token-file {token_file}"
    elif "KPROF_MCP_TOKEN" in environ:
        token, where = environ["KPROF_MCP_TOKEN"].strip(), "KPROF_MCP_TOKEN"
    else:
        return None
    if not token:
        raise TokenError(
            f"{where} is empty: give a token of at least {MIN_TOKEN_CHARS} characters (e.g. "
            "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`), or leave it unset to "
            "serve loopback without authentication"
        )
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
        raise TokenError(f"{where}: a token must be at least {MIN_TOKEN_CHARS} characters with no whitespace")
    return token


class _Exchange:
    """One HTTP request as :class:`DisconnectWatch` saw it."""

    __slots__ = ("answered", "dropped")

    def __init__(self) -> None:
        self.answered = False  # the response's last body part was sent
        self.dropped = False  # the client disconnected before that


EXCHANGE = "kprof.exchange"  # the ASGI scope key DisconnectWatch puts an _Exchange under


class DisconnectWatch:
    """ASGI middleware: notes in the request's scope when its client disconnects before the response
    ended. A tool call over streamable HTTP answers on an SSE stream; when the client drops that
    connection, the SDK (2025-era sessions) ends the stream but goes on running the call, so a job
    would keep the GPU until its time limit. :func:`connection_dropped` lets the call see it. The
    disconnect is seen by whoever reads ``receive`` (the SSE response listens for it)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        exchange = scope[EXCHANGE] = _Exchange()

        async def receive_watched():
            message = await receive()
            if message["type"] == "http.disconnect" and not exchange.answered:
                exchange.dropped = True
            return message

        async def send_watched(message):
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                exchange.answered = True
            await send(message)

        await self.app(scope, receive_watched, send_watched)


def connection_dropped(ctx: Context) -> bool:
    """Whether the HTTP connection carrying this tool call went away before its answer (never over
    stdio, where the request carries no HTTP request)."""
    scope = getattr(ctx.request_context.request, "scope", None)
    exchange = scope.get(EXCHANGE) if isinstance(scope, dict) else None
    return exchange is not None and exchange.dropped


class BearerAuth:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>`` (constant-time
    comparison); others get 401 before reaching MCP."""

    def __init__(self, app, token: str):
        self.app, self._token = app, token.encode()

    async def __call__(self, scope, receive, send):
        import hmac

        if scope["type"] == "http":
            got = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not (got.startswith(b"Bearer ") and hmac.compare_digest(got[7:].strip(), self._token)):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="kprof-mcp"'),
                        ],
                    }
                )
                await send(
                    {
                        "type": "http.response.body",
                        "body": b'{"error": "missing or wrong bearer token (Authorization: Bearer <token>)"}',
                    }
                )
                return
        await self.app(scope, receive, send)


def http_app(
    server: MCPServer,
    host: str,
    port: int,
    token: str | None,
    allowed_hosts: list[str],
    allowed_origins: list[str],
):
    """The streamable-HTTP app with DNS-rebinding protection (Host and Origin checked against
    allow-lists: loopback names by default), dropped connections noted (:class:`DisconnectWatch`)
    and, when a token is given, bearer authentication. Refuses a non-loopback bind without a token."""
    from mcp.server.transport_security import TransportSecuritySettings

    if host not in LOOPBACK and not token:
        raise SystemExit(
            f"kprof-mcp: refusing to serve HTTP on {host}: binding to anything but 127.0.0.1/localhost "
            "requires a bearer token (set KPROF_MCP_TOKEN or pass --token-file)"
        )
    hosts = (
        ["127.0.0.1:*", "localhost:*", "[::1]:*"]
        + ([f"{host}:{port}", f"{host}:*"] if host not in LOOPBACK else [])
        + list(allowed_hosts)
    )
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"] + list(allowed_origins)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )
    app = DisconnectWatch(server.streamable_http_app(transport_security=security, host=host))
    return BearerAuth(app, token) if token else app


_stopping = threading.Event()


def _stop(signum: int, frame) -> None:
    """SIGTERM (a service manager, ``kill``) or SIGINT (Ctrl-C): exit after the clean-up a normal exit
    runs (its atexit handlers: running jobs' process trees killed, warm workers killed). A normal
    exit cannot be had here: over stdio the transport's thread blocked reading stdin keeps the
    interpreter from finishing. The clean-up runs in a thread of its own, so that no lock the
    interrupted main thread holds can stall it; a second signal exits at once (the children's
    lifelines still take them down, :mod:`kprof_mcp.lifeline`)."""
    if _stopping.is_set():
        os._exit(128 + signum)
    _stopping.set()
    threading.Thread(target=_exit_after_clean_up, args=(signum,), name="kprof-stop").start()


def _exit_after_clean_up(signum: int) -> None:
    atexit._run_exitfuncs()  # what a normal exit would run, each handler once (os._exit skips them after)
    os._exit(128 + signum)  # the shell's convention for "ended by this signal"


def main(argv: list[str] | None = None, pool: WorkerPool | None = None) -> None:
    """The server (``pool``: warm workers already started by :mod:`kprof_mcp.launch`)."""
    import signal

    for sig in (
        signal.SIGTERM,
        signal.SIGINT,
    ):  # over streamable HTTP uvicorn shuts down first, then calls this
        signal.signal(sig, _stop)
    ap = argparse.ArgumentParser(
        prog="kprof-mcp", description="kprof-mcp: MCP server for GPU kernel profiling"
    )
    ap.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    ap.add_argument(
        "--host",
        default="127.0.0.1",
        help="bind address for streamable-http (default 127.0.0.1; any "
        "other address requires a bearer token)",
    )
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument(
        "--token-file",
        default=None,
        help="file holding the bearer token for streamable-http "
        "(default: the KPROF_MCP_TOKEN environment variable)",
    )
    ap.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        help="extra Host header value accepted (DNS-rebinding protection), e.g. gpu1:8000",
    )
    ap.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        help="extra Origin accepted, e.g. https://inspector.example",
    )
    ap.add_argument(
        "--allow-commands",
        action="store_true",
        help="register profile_command, which EXECUTES the caller's Python command (a script or module "
        "under the workspace, or pytest) as this server's user; over streamable-http it also needs "
        "a bearer token, on loopback too",
    )
    ap.add_argument(
        "--workspace", default=None, help="root for profiles, devlogs and user kernels (default: cwd)"
    )
    ap.add_argument("--kernels-dir", action="append", default=[], help="extra directory of kernel packages")
    ap.add_argument(
        "--timeout", type=float, default=None, help="time limit per profile, seconds (default 900)"
    )
    ap.add_argument(
        "--wait",
        type=float,
        default=None,
        help="profile_kernel answers within this many seconds with the contract or a job id (default 45)",
    )
    ap.add_argument(
        "--gpus", default=None, help="comma-separated GPU indices jobs may use (default: all visible)"
    )
    ap.add_argument(
        "--cluster",
        default=None,
        metavar="tcp://SCHEDULER:8786",
        help="run profiles as Dask tasks on this scheduler's workers (one GPU resource each; see "
        "docs/cluster.md); off loopback it must be tls:// with --tls-ca/--tls-cert/--tls-key",
    )
    ap.add_argument("--tls-ca", default=None)
    ap.add_argument("--tls-cert", default=None)
    ap.add_argument("--tls-key", default=None)
    a = ap.parse_args(argv)
    token = None
    if a.transport == "streamable-http":
        try:
            token = read_token(a.token_file, os.environ)
        except TokenError as e:
            ap.error(str(e))
        if a.allow_commands and not token:
            ap.error(
                "--allow-commands over streamable-http needs a bearer token, on loopback too (any local process "
                "could otherwise run code as this user): set KPROF_MCP_TOKEN or pass --token-file"
            )
    gpus = [g.strip() for g in a.gpus.split(",") if g.strip()] if a.gpus else None
    cluster = None
    if a.cluster:
        from .cluster import ClusterError, security_from

        try:
            cluster = {"address": a.cluster, "security": security_from(a.tls_ca, a.tls_cert, a.tls_key)}
        except ClusterError as e:
            ap.error(str(e))
    try:
        server = build_server(
            Config.from_options(a.workspace, a.kernels_dir, a.timeout, wait_s=a.wait, gpus=gpus),
            start_workers=cluster is None,
            pool=pool,
            cluster=cluster,
            allow_commands=a.allow_commands,
        )
    except KprofError as e:
        ap.error(str(e))
    if a.transport == "stdio":
        server.run("stdio")
        return
    app = http_app(server, a.host, a.port, token, a.allowed_host, a.allowed_origin)
    import uvicorn

    uvicorn.run(app, host=a.host, port=a.port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])

"""Waiting for a profiling job inside a tool call (progress while the request is open; the job
cancelled when the request is abandoned) and answering with its contract, verdict or state."""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ImageContent, TextContent

from ..engine import CompareOutcome, SweepOutcome
from ..jobs import CANCELLED, DONE, FAILED, QUEUED, Job, JobManager
from ..noise import NoiseOutcome
from ..render.compare import verdict_sentence
from ..render.noise import noise_markdown
from ..render.summary import ProfileSummary, profile_summary
from .http import connection_dropped


class Answers:
    """The job helpers the tools share (made by :func:`answers` over one :class:`JobManager`)."""

    def __init__(self, **fns: Any) -> None:
        self.__dict__.update(fns)


def answers(jobs: JobManager) -> Answers:
    """Waiting for a job while reporting progress, cancelling it when the request is abandoned, and
    answering with its result or state."""

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
                message="; ".join(
                    verdict_sentence(c, outcome.result.device.kind) for c in outcome.result.comparisons
                ),
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

    return Answers(
        answer=_answer,
        pending=_pending,
        job_result=_job_result,
        wait=_wait,
        cancel=_cancel,
        sweep_content=_sweep_content,
    )

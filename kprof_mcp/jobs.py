"""Profiling jobs: one at a time per GPU, the rest queued in order, each cancellable.

A :class:`JobManager` owns one worker thread per *slot* (a GPU index, or ``None`` for a
machine without GPUs). A job is a validated profile (:class:`~kprof_mcp.engine.ProfileSpec`);
the first free slot takes the oldest queued job, so with several GPUs jobs run in parallel,
one per GPU, and each child sees only its GPU (``CUDA_VISIBLE_DEVICES``). Cancelling a queued
job removes it; cancelling a running one kills its process tree (and resets clocks a profiler
had locked). Finished jobs are kept (the newest ``keep`` of them) for :meth:`JobManager.get`.

No MCP here: the server polls :class:`Job` state and forwards progress while a request is open.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from .runner import RunControl
from .safefs import clip

QUEUED, RUNNING, DONE, FAILED, CANCELLED = "queued", "running", "done", "failed", "cancelled"
FINAL = (DONE, FAILED, CANCELLED)


class UnknownJob(KeyError):
    pass


@dataclass
class Job:
    id: str
    label: str
    spec: Any
    control: RunControl
    status: str = QUEUED
    slot: str | None = None
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    progress: float = 0.0
    message: str = "queued"
    outcome: Any = None
    error: str | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def snapshot(self, position: int | None) -> dict[str, Any]:
        return {
            "job_id": self.id,
            "status": self.status,
            "label": self.label,
            "queue_position": position,
            "gpu": self.slot,
            "progress": round(self.progress, 3),
            "message": self.message,
            "created": self.created,
            "started": self.started,
            "finished": self.finished,
            "error": self.error,
        }


def detect_slots() -> list[str | None]:
    """The GPUs jobs may use: ``KPROF_GPUS`` (comma-separated indices), else the visible ones
    (``CUDA_VISIBLE_DEVICES`` or nvidia-smi), else one CPU slot."""
    env = os.environ.get("KPROF_GPUS") or os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None and env.strip() not in ("", "-1"):
        return [g.strip() for g in env.split(",") if g.strip()]
    from .tools import nvidia_smi

    gpus = [g.get("index") for g in nvidia_smi.gpus() if g.get("index") is not None]
    return list(gpus) or [None]


class JobManager:
    def __init__(
        self,
        run: Callable[[Any, Callable[[float, str], None], RunControl], Any],
        slots: list[str | None] | None = None,
        keep: int = 200,
        more_slots: Callable[[], list[str | None]] | None = None,
    ):
        """``more_slots``: asked at each submit for the slots there are now (a cluster whose GPU
        workers joined after the server started); new ones get a thread, none is taken away."""
        self._run = run
        self._more_slots = more_slots
        self.slots = list(slots) if slots is not None else detect_slots()
        self._queue: deque[Job] = deque()
        self._jobs: dict[str, Job] = {}
        self._order: deque[str] = deque()
        self._cond = threading.Condition()
        self._keep = keep
        self._threads: list[threading.Thread] = []

    # ------------------------------------------------------------------ public
    def submit(self, spec: Any, label: str, received: float | None = None) -> Job:
        """Queue ``spec``; ``received``: when the tool got the request (``time.perf_counter``), so the
        profile's wall time counts the checks made before it was queued."""
        job = Job(id=secrets.token_hex(6), label=label, spec=spec, control=RunControl())
        job.control.received = received
        more = self._ask_more_slots()  # outside the lock: for a cluster it asks the scheduler
        with self._cond:
            self._start_threads(more)
            self._jobs[job.id] = job
            self._order.append(job.id)
            self._queue.append(job)
            self._forget_old()
            self._cond.notify_all()
        return job

    def get(self, job_id: str) -> Job:
        with self._cond:
            job = self._jobs.get(job_id) if isinstance(job_id, str) else None
            if job is None:
                recent = list(self._order)[-5:]
                raise UnknownJob(
                    f"unknown job_id {clip(job_id)}; recent jobs: {recent or 'none'} (jobs live in the "
                    "server's memory: a restarted server forgets them, their profile_dir stays on disk)"
                )
            return job

    def position(self, job: Job) -> int | None:
        """1-based place among the queued jobs; None once it has left the queue."""
        with self._cond:
            for i, j in enumerate(self._queue):
                if j is job:
                    return i + 1
        return None

    def snapshot(self, job: Job) -> dict[str, Any]:
        return job.snapshot(self.position(job))

    def cancel(self, job_id: str, wait_s: float = 30.0) -> Job:
        job = self.get(job_id)
        with self._cond:
            if job.status == QUEUED and job in self._queue:
                self._queue.remove(job)
                self._finish(job, CANCELLED, error="cancelled while queued", message="cancelled while queued")
                return job
        if job.status == RUNNING:
            job.control.cancel()
            job.done.wait(wait_s)
        return job

    def active(self) -> list[Job]:
        with self._cond:
            return [j for j in self._jobs.values() if j.status in (QUEUED, RUNNING)]

    def shutdown(self) -> None:
        """Cancel everything (server exit): queued jobs are dropped, running ones killed."""
        for job in self.active():
            self.cancel(job.id, wait_s=10.0)

    # ------------------------------------------------------------------ internals
    def _ask_more_slots(self) -> list[str | None]:
        if self._more_slots is None:
            return []
        try:
            return list(self._more_slots())
        except Exception:  # noqa: BLE001 — the slots there are keep working
            return []

    def _start_threads(self, more: list[str | None] = ()) -> None:
        self.slots += [s for s in more if s not in self.slots]
        for slot in self.slots[len(self._threads) :]:
            t = threading.Thread(target=self._loop, args=(slot,), name=f"kprof-gpu-{slot}", daemon=True)
            t.start()
            self._threads.append(t)

    def _forget_old(self) -> None:
        while len(self._order) > self._keep:
            old = self._jobs.get(self._order[0])
            if old is not None and old.status not in FINAL:
                break
            self._order.popleft()
            if old is not None:
                del self._jobs[old.id]

    def _finish(
        self,
        job: Job,
        status: str,
        *,
        outcome: Any = None,
        error: str | None = None,
        message: str | None = None,
    ) -> None:
        # Everything a reader needs is in place before the status says final (readers poll it).
        job.outcome, job.error = outcome, error
        job.finished = time.time()
        if message:
            job.message = message
        if status == DONE:
            job.progress = 1.0
        job.status = status
        job.done.set()

    def _loop(self, slot: str | None) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    self._cond.wait()
                job = self._queue.popleft()
                job.status, job.slot, job.started = RUNNING, slot, time.time()
                job.control.gpu = slot
                job.message = "started" + (f" on GPU {slot}" if slot is not None else "")

            def progress(fraction: float, message: str, job: Job = job) -> None:
                job.progress, job.message = max(job.progress, float(fraction)), str(message)

            try:
                outcome = self._run(job.spec, progress, job.control)
            except BaseException as e:  # noqa: BLE001 — a job's failure never stops the slot
                if job.control.cancelled:
                    note = f" ({job.control.clock_reset})" if job.control.clock_reset else ""
                    self._finish(
                        job,
                        CANCELLED,
                        error=f"cancelled while running; its process tree was killed{note}",
                        message="cancelled",
                    )
                else:
                    self._finish(job, FAILED, error=str(e) or type(e).__name__, message="failed")
                continue
            self._finish(job, DONE, outcome=outcome, message="done")

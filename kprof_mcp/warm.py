"""Warm workers: a profiling child per GPU started ahead of its job, so a profile skips the imports,
the CUDA context and CUPTI's start-up (parent side; the child is :mod:`kprof_mcp.child.serve`).

A confined pool (a server's workspace, :meth:`WorkerPool.confine`) runs one job per worker: the
worker is killed as its job ends, before the server reads what the job wrote, and its replacement
starts warming once the engine has finished that job's outputs (:meth:`WorkerPool.replenish`; issue 38, the fifth probe: a package's thread, audit hook or forged
end-of-job line ran on into later jobs and swapped their run directories for links while the server
wrote them). An unconfined pool (the CLI, the user's own code) keeps its worker from job to job, so a
re-profile also skips the JIT of unchanged kernels.

Isolation is kept by replacing, not repairing: a worker that ran a command that did not
succeed (an error record, a crash, a CUDA error, a kernel that printed its way out with
``sys.exit``) is killed and a new one started; one that hangs past its time limit or whose job is
cancelled has its whole process group killed. A failure of a worker that had already served
other commands is retried once in a fresh process by the runner (see
:func:`kprof_mcp.runner.run_profile`), so no stale state can turn into a reported failure.

Nothing here imports torch. A :class:`WorkerPool` is owned by the :class:`~kprof_mcp.engine.Engine`.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, Callable

from . import lifeline, sandbox
from .child_wait import _kill_group as kill_group
from .child_wait import end_group, exited
from .outcap import Kept, lines, read_file
from .protocol import DONE_PREFIX, READY_PREFIX, child_command, parse_progress

MAX_STDERR_KEPT = 4 * 2**20  # a worker's stderr file is emptied between commands past this


@dataclass
class Ended:
    """How one child command ended, in a fresh process or a warm worker."""

    stopped: str | None  # "timeout" or "cancelled" when its process group had to be killed
    rc: int | None  # exit code (a fresh child's) or the command's code in a worker; <0: killed by a signal
    out: str  # stdout lines that were not progress (their first and last bytes: kprof_mcp.outcap)
    err: str  # stderr (its first and last bytes)
    wall: float
    warm: bool = False  # ran in a warm worker
    reused: bool = False  # ... that had served commands before


class WarmWorker:
    """One ``python -m kprof_mcp.child serve`` process and the threads that read it."""

    def __init__(self, env: dict[str, str], flags: list[str], confine: sandbox.Confinement | None = None):
        env, lifeline_fds = lifeline.for_child(env)  # the worker dies with this process (kill -9 too)
        argv = child_command("serve", "--commands-fd", "{fd}", *flags)
        if confine is not None:  # it imports workspace packages: under Landlock (kprof_mcp.sandbox)
            env = sandbox.confined_env(env, confine.private_tmp, confine.caches)
            argv = sandbox.wrap(confine.policy_file, argv)
        r, w = os.pipe()
        fd, path = tempfile.mkstemp(prefix="kprof-warm-", suffix=".stderr")
        os.close(fd)
        # O_APPEND: the file can be emptied between commands while the child keeps writing to it.
        self._err_fd = os.open(path, os.O_RDWR | os.O_APPEND)
        os.unlink(path)
        try:
            self.proc = subprocess.Popen(
                [str(r) if a == "{fd}" else a for a in argv],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=self._err_fd,
                env=env,
                start_new_session=True,
                pass_fds=(r, *lifeline_fds),
            )
        finally:
            os.close(r)
        self._commands = os.fdopen(w, "w")
        self.started = time.monotonic()
        self.served = 0
        self.facts: dict[str, Any] = {}
        self.ready = threading.Event()
        self._events: queue.Queue = queue.Queue()
        self._sink: tuple[Callable[[float, str], None] | None, Kept] | None = None
        self._busy = threading.Lock()
        self._job = 0
        self._reader = threading.Thread(target=self._read, daemon=True, name=f"kprof-warm-{self.proc.pid}")
        self._reader.start()

    # ------------------------------------------------------------------ state
    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return not exited(self.proc)  # not reaped: its group's id stays its own for kill()

    def try_acquire(self) -> bool:
        return self._busy.acquire(blocking=False)

    def release(self) -> None:
        self._busy.release()

    def kill(self) -> None:
        """Kill the worker's whole process group (what the kernel started dies with it)."""

        kill_group(self.proc, 5)  # its tree and group while unreaped (no pid-reuse window), then reaped
        try:
            self._commands.close()
        except OSError:
            pass
        try:
            os.close(self._err_fd)
        except OSError:
            pass

    # ------------------------------------------------------------------ reading
    def _read(self) -> None:
        assert self.proc.stdout is not None
        # in chunks, a line's length bounded (never a readline of a line without end: P4-9)
        for line, n in lines(self.proc.stdout.fileno()):
            # A job's code prints on the same pipe: a marker's payload is checked for its shape, never
            # trusted (the sixth probe's P6-3 and P6-5: a list killed this thread, a bare error followed)
            if line.startswith(DONE_PREFIX):
                done = _payload(line[len(DONE_PREFIX) :])
                if isinstance(done.get("job"), int) and isinstance(done.get("rc", 1), int):
                    self._events.put(("done", done))
                continue
            if line.startswith(READY_PREFIX):
                if not self.ready.is_set():  # once: the worker's own line comes before any job
                    self.facts = _payload(line[len(READY_PREFIX) :])
                    self.facts["ready_after_s"] = round(time.monotonic() - self.started, 3)
                    self.ready.set()
                continue
            sink = self._sink
            if sink is None:
                continue  # between commands (the newline before a marker)
            msg = parse_progress(line)
            if msg is None:
                sink[1].add(line, n)  # bounded: a chatty kernel must not grow the server's memory
            elif sink[0] is not None:
                try:
                    sink[0](*msg)
                except Exception:  # noqa: BLE001 — a failing progress sink must not stop the reader
                    pass
        self._events.put(("eof", None))

    def _stderr_from(self, offset: int) -> str:
        try:
            text = read_file(self._err_fd, offset)  # its first and last bytes only (P4-9)
            if os.fstat(self._err_fd).st_size > MAX_STDERR_KEPT:
                os.ftruncate(self._err_fd, 0)
            return text
        except OSError:
            return ""

    # ------------------------------------------------------------------ one command
    def run(self, argv: list[str], timeout_s: float, on_progress, control) -> Ended:
        """Run one child command; the caller holds :meth:`try_acquire`."""
        self._job += 1
        job = self._job
        other = Kept()
        reused = self.served > 0
        try:
            offset = os.fstat(self._err_fd).st_size
        except OSError:
            offset = 0
        self._sink = (on_progress, other)
        t0 = time.perf_counter()
        deadline = time.monotonic() + timeout_s
        stopped: str | None = None
        rc: int | None = None
        try:
            self._commands.write(json.dumps({"job": job, "argv": argv}) + "\n")
            self._commands.flush()
        except (OSError, ValueError):
            pass  # the worker is gone: its end shows below
        while True:
            try:
                kind, msg = self._events.get(timeout=0.1)
            except queue.Empty:
                if control is not None and control.cancelled:
                    stopped = "cancelled"
                elif time.monotonic() >= deadline:
                    stopped = "timeout"
                if stopped:
                    self.kill()
                    break
                continue
            if kind == "eof":
                end_group(self.proc)  # what it started dies with it, then it is reaped
                rc = self.proc.returncode
                self._events.put(("eof", None))  # stays gone for anyone else waiting
                break
            if msg.get("job") == job:
                rc = msg.get("rc", 1)
                break
        wall = time.perf_counter() - t0
        self._sink = None
        self.served += 1
        return Ended(
            stopped=stopped,
            rc=rc,
            out=other.text(),
            err=self._stderr_from(offset),
            wall=wall,
            warm=True,
            reused=reused,
        )


class WorkerPool:
    """At most one warm worker per key (a GPU, or ``"describe"`` for loading packages without a
    GPU context). ``eager``: start a replacement as soon as a worker is retired (the server),
    rather than at the next command."""

    def __init__(
        self, env_for: Callable[[str | None], dict[str, str]], force_cpu: bool = False, eager: bool = False
    ):
        self._env_for = env_for
        self._force_cpu = force_cpu
        self._eager = eager
        self._workers: dict[str, WarmWorker] = {}
        self._lock = threading.Lock()
        self.scope: sandbox.KernelScope | None = None  # set by confine(): workers run confined to it
        self._closed = False
        self.retired: list[dict[str, Any]] = []  # why workers were replaced (newest last, a few kept)
        self._deferred: dict[str, str | None] = {}  # retired workers to start again (replenish)
        self._finalizer = weakref.finalize(self, _kill_all, self._workers)

    @staticmethod
    def _key(gpu: str | None, describe: bool) -> str:
        return "describe" if describe else f"gpu:{gpu}"

    def _spawn(self, key: str, gpu: str | None) -> WarmWorker:
        old = self._workers.get(key)
        if old is not None and not old.alive:
            old.kill()  # a worker that died: what it left in its group killed, then it is reaped
        flags = ["--light"] if key == "describe" else (["--cpu"] if self._force_cpu else [])
        w = WarmWorker(
            self._env_for(None if key == "describe" else gpu),
            flags,
            sandbox.kernel_confinement(self.scope, outputs=key != "describe"),
        )
        self._workers[key] = w
        return w

    def confine(self, scope: sandbox.KernelScope | None) -> None:
        """Run the workers confined to ``scope`` from now on (they import workspace packages): workers
        started before (unconfined, or to another scope) are replaced."""
        with self._lock:
            if scope == self.scope:
                return
            self.scope = scope
            started = [(k, w) for k, w in self._workers.items()]
            self._workers.clear()
            for k, w in started:
                w.kill()
                if self._eager and not self._closed:
                    self._spawn(k, None if k == "describe" else _gpu_of(k))

    def start(self, gpu: str | None = None, describe: bool = False) -> None:
        """Start a worker ahead of its first command (server start-up), if none runs."""
        key = self._key(gpu, describe)
        with self._lock:
            if not self._closed and (key not in self._workers or not self._workers[key].alive):
                self._spawn(key, gpu)

    def run(
        self, argv: list[str], timeout_s: float, on_progress=None, control=None, describe: bool = False
    ) -> Ended | None:
        """Run a child command in the key's worker; None when it is busy or the pool is closed
        (the caller then starts a fresh child)."""
        gpu = getattr(control, "gpu", None)
        key = self._key(gpu, describe)
        with self._lock:
            if self._closed:
                return None
            w = self._workers.get(key)
            if w is None or not w.alive:
                w = self._spawn(key, gpu)
            if not w.try_acquire():
                return None
        try:
            ended = w.run(argv, timeout_s, on_progress, control)
        except BaseException:
            w.release()
            self._retire(key, w, f"{argv[0]} raised in the parent", gpu)  # never reused after it (P6-5)
            raise
        else:
            w.release()
        if ended.stopped or ended.rc != 0:
            why = ended.stopped or (
                f"signal {-ended.rc}" if ended.rc is not None and ended.rc < 0 else f"exit code {ended.rc}"
            )
            self._retire(key, w, f"{argv[0]} ended with {why}", gpu)
        elif self.scope is not None:
            # Confined (a server's workspace): one job per worker, killed before the caller reads what
            # the job wrote. A job's package code runs in the worker's own interpreter; a thread, an audit
            # hook, a gc callback or a forged end-of-job line it leaves would run on into later jobs and
            # race the server's checks of their run directories (issue 38, the fifth probe: P5-5, P5-6,
            # P5-8). The replacement starts once the engine has finished the job's outputs (replenish).
            self._retire(key, w, f"{argv[0]} done: one job per confined worker", gpu)
        return ended

    def _retire(self, key: str, w: WarmWorker, why: str, gpu: str | None) -> None:
        w.kill()
        with self._lock:
            self.retired = (self.retired + [{"key": key, "pid": w.pid, "served": w.served, "why": why}])[-20:]
            if self._workers.get(key) is w:
                del self._workers[key]
                if self._eager and not self._closed:
                    # Started by replenish(), once the caller has finished with what the job wrote: a
                    # replacement warming meanwhile would load the workspace's confined caches (a Triton
                    # launcher the job may have planted there) while the server checks and writes the
                    # job's run directory (the sixth probe's H1).
                    self._deferred[key] = gpu

    def replenish(self) -> None:
        """Start the workers retired since the last call (eager pools): the engine calls it once it has
        finished a job's outputs. A job that finds its worker missing starts one itself."""
        with self._lock:
            deferred, self._deferred = self._deferred, {}
            for key, gpu in deferred.items():
                if not self._closed and (key not in self._workers or not self._workers[key].alive):
                    self._spawn(key, gpu)

    def status(self) -> dict[str, Any]:
        with self._lock:
            return {
                "workers": [
                    {
                        "key": k,
                        "pid": w.pid,
                        "alive": w.alive,
                        "ready": w.ready.is_set(),
                        "served": w.served,
                        "age_s": round(time.monotonic() - w.started, 1),
                        **(
                            {
                                k: w.facts.get(k)
                                for k in (
                                    "ready_after_s",
                                    "warm_up_s",
                                    "steps_s",
                                    "cupti",
                                    "cuda",
                                    "gc_frozen",
                                )
                            }
                            if w.facts
                            else {}
                        ),
                    }
                    for k, w in self._workers.items()
                ],
                "retired": list(self.retired),
            }

    def close(self) -> None:
        with self._lock:
            self._closed = True
            _kill_all(self._workers)


def _payload(text: str) -> dict[str, Any]:
    """A marker line's JSON object, or {} for anything else (a job may print a marker of its own)."""
    try:
        v = json.loads(text)
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


def _gpu_of(key: str) -> str | None:
    gpu = key.removeprefix("gpu:")
    return None if gpu == "None" else gpu


def _kill_all(workers: dict[str, WarmWorker]) -> None:
    for w in list(workers.values()):
        w.kill()
    workers.clear()

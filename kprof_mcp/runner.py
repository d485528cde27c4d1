"""Running a profiling child (:mod:`kprof_mcp.child`): its own process group, a time limit, progress
lines forwarded, and every way it can end turned into a result or a :class:`WorkerError`.
A child command runs in a fresh process, or in a warm worker (:mod:`kprof_mcp.warm`) when the
caller's :class:`RunControl` has a pool and no profiler wraps it.

No shell is involved and no caller string becomes a command-line flag: the request travels
as a JSON file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import child_io, lifeline, safefs, sandbox
from .child_wait import _exit_waiter, _kill_group, _reap, _wait  # noqa: F401
from .outcap import Kept, lines, read_file
from .protocol import child_command, parse_progress
from .removal import temp_dir
from .tools.nvidia_smi import reset_clocks
from .warm import Ended

if TYPE_CHECKING:
    from .warm import WorkerPool

ProgressFn = Callable[[float, str], None]


class RunControl:
    """What a caller controls about the children of one profile: the GPU they may see
    (``CUDA_VISIBLE_DEVICES``) and cancellation. ``cancel()`` kills the running child's whole
    process group within a fraction of a second; later children are refused."""

    def __init__(self, gpu: str | None = None, pool: WorkerPool | None = None):
        self.gpu = gpu
        self.pool = pool  # warm workers the children may run in (None: a fresh process each time)
        # the workspace a user's command may read, set by an engine that confines commands (the
        # server's; not `kprof run`'s): the command then runs under Landlock (kprof_mcp.sandbox)
        self.workspace: Path | None = None
        # where kernel children (which import workspace packages) may write, set by the same engine:
        # they then run under Landlock too (kprof_mcp.sandbox.kernel_policy)
        self.scope: sandbox.KernelScope | None = None
        self._cancelled = threading.Event()
        self.clock_reset: str | None = None  # what was done about clocks after a kill
        self.created = time.perf_counter()  # a job's control is made at its submission: its queue wait starts
        self.received: float | None = None  # when the tool got the request, before checking it (jobs.submit)

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def check(self) -> None:
        if self.cancelled:
            raise WorkerError("cancelled", "the profile was cancelled")


class WorkerError(RuntimeError):
    """The child failed. ``kind``: params, too_large, incorrect, mode, load, timeout, crash."""

    def __init__(self, kind: str, message: str, detail: dict[str, Any] | None = None):
        super().__init__(message)
        self.kind = kind
        self.detail = detail or {}


def child_env(gpu: str | None = None) -> dict[str, str]:
    """The environment of a child that may see only ``gpu`` (all when None)."""
    env = dict(os.environ)
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = gpu
    # The child must import this very kprof_mcp and the built-in kernels (also from a checkout).
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _env(control: RunControl | None = None) -> dict[str, str]:
    return child_env(control.gpu if control is not None else None)


def describe(
    source: Path,
    timeout_s: float = 60.0,
    pool: WorkerPool | None = None,
    scope: sandbox.KernelScope | None = None,
) -> dict[str, Any]:
    """Load a kernel package in a child process (the pool's package-loading worker when given)
    and return its description. ``scope``: the child is confined to it (:func:`kprof_mcp.sandbox.kernel_confinement`)."""
    args = ["describe", "--source", str(source)]
    ended = pool.run(args, timeout_s, describe=True) if pool is not None else None
    if ended is None or _confirm_fresh(ended, None):
        ended = _run_once(args, timeout_s, scope=scope)  # no worker, or confirming a reused worker's failure
    if ended.stopped:
        raise WorkerError(
            "load",
            f"loading kernel package {source} took over {timeout_s:.0f} s; "
            "does it run heavy work at import time?",
        )
    lines = [ln for ln in ended.out.strip().splitlines() if ln.strip()]
    try:
        out = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        out = None
    if not isinstance(out, dict):
        raise WorkerError(
            "load", f"loading kernel package {source} failed (exit {ended.rc}): {_tail(ended.err)}"
        )
    if out.get("status") != "ok":
        raise WorkerError("load", f"cannot load kernel package {source}: {out.get('message')}", out)
    return out["kernel"]


def _tail(text: str, n: int = 15) -> str:
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    return "\n".join(lines[-n:]) if lines else "(no output)"


def _clock_reset_argv(prefix: list[str] | None, control: RunControl | None) -> list[str] | None:
    """``nvidia-smi -rgc`` for a profiler prefix that locks clocks (``--clock-control base``): what
    an orphaned child leaves behind to reset them, as :func:`run_profile` does after a kill."""
    import shutil

    p = list(prefix or [])
    exe = shutil.which("nvidia-smi")
    if not exe or "--clock-control" not in p or p[p.index("--clock-control") + 1 :][:1] != ["base"]:
        return None
    gpu = control.gpu if control is not None else None
    return [exe, "-rgc"] + (["-i", gpu] if gpu is not None else [])


def _run_once(
    args: list[str],
    timeout_s: float,
    on_progress: ProgressFn | None = None,
    control: RunControl | None = None,
    prefix: list[str] | None = None,
    confine: sandbox.Confinement | None = None,
    scope: sandbox.KernelScope | None = None,
    gate: list[str] | None = None,
) -> Ended:
    """Run ``python -m kprof_mcp.child ARGS`` (behind a profiler's ``prefix``) in a fresh process
    of its own group; on time-out or cancellation its tree and group are killed, and when this
    process dies the child kills them itself (its lifeline, passed through the prefix).
    ``confine``: a user's command, run under :mod:`kprof_mcp.sandbox`'s supervisor; otherwise a
    kernel child is confined to ``scope`` (default: the control's) where Landlock is usable."""
    env, lifeline_fds = lifeline.for_child(_env(control), then=_clock_reset_argv(prefix, control))
    argv = child_command(*args)
    if confine is None:
        confine = sandbox.kernel_confinement(
            scope or getattr(control, "scope", None), prefix, gate or [], outputs=args[0] != "describe"
        )
    outer = list(prefix or [])
    if confine is not None:
        env = sandbox.confined_env(env, confine.private_tmp, confine.caches)
        if confine.profiler_inside:  # confined with its target, in the same domain and namespaces
            argv, outer = sandbox.wrap(confine.policy_file, [*outer, *argv]), []
        else:
            argv = sandbox.wrap(confine.policy_file, argv)
    with tempfile.TemporaryFile("w+b", prefix="kprof-stderr-") as err:
        other = Kept()  # what is kept of its stdout and stderr is bounded (kprof_mcp.outcap)
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [*outer, *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
            env=env,
            pass_fds=lifeline_fds,
            start_new_session=True,
        )
        reader = threading.Thread(target=_pump, args=(proc, on_progress, other), daemon=True)
        reader.start()
        waiter = _exit_waiter(proc)
        try:
            stopped = _wait(proc, timeout_s, control, waiter)
        except BaseException:
            _kill_group(proc)  # interrupted by the caller: no orphans
            _reap(proc, waiter)  # reaped already: its pidfd closed
            raise
        wall = time.perf_counter() - t0
        _reap(proc, waiter)  # its group killed by its still reserved id, then reaped (unless stopped: done)
        reader.join(5)
        return Ended(
            stopped=stopped, rc=proc.returncode, out=other.text(), err=read_file(err.fileno()), wall=wall
        )


def run_child(args: list[str], timeout_s: float, on_progress: ProgressFn | None = None) -> Ended:
    """``python -m kprof_mcp.child ARGS`` in a fresh process of its own group (never a warm
    worker), killed at ``timeout_s``: for a child that is no profile (``calibrate``)."""
    return _run_once(args, timeout_s, on_progress)


def _run(
    args: list[str],
    timeout_s: float,
    on_progress: ProgressFn | None,
    control: RunControl | None,
    prefix: list[str] | None = None,
    gate: list[str] | None = None,
) -> Ended:
    """In the control's warm worker when there is one and no profiler wraps the child, else fresh."""
    pool = getattr(control, "pool", None)
    ended = pool.run(args, timeout_s, on_progress, control) if pool is not None and not prefix else None
    return ended if ended is not None else _run_once(args, timeout_s, on_progress, control, prefix, gate=gate)


@dataclass(frozen=True)
class Record:
    """A child command that succeeded: the directories of its ok-record (``--result``, see
    :mod:`kprof_mcp.protocol`) and how its process ended. All that the engine and the modes read of
    a run."""

    work_dir: str = ""  # the profile's ``.partial`` directory, while it is written
    profile_dir: str = ""  # the name it gets when it is complete
    correctness: dict[str, Any] | None = None  # a preparation run's correctness check (prepare_only)
    log: str = ""  # what the process printed (a profiler wrapping it included), its stderr last
    returncode: int | None = None  # the process' exit status (a profiler's, when one wrapped it)
    wall_s: float = 0.0  # the process' wall time
    warm_worker: bool = False  # it ran in a warm worker (:mod:`kprof_mcp.warm`)
    plain: dict[str, Any] | None = None  # nsys mode's plain pass: its ranges' entry times (child.command)


# Failures a reused warm worker could have caused (a package that did not re-import cleanly, state
# left by an earlier command): confirmed in a fresh process before they are reported.
RETRY_FRESH_KINDS = ("load", "crash", None)


def _confirm_fresh(ended: Ended, record: dict[str, Any] | None) -> bool:
    """Whether a command's failure happened in a reused warm worker and is of a kind stale state
    could explain, so it must be run again in a fresh process."""
    return (
        ended.reused
        and not ended.stopped
        and ended.rc != 0
        and (record or {}).get("kind") in RETRY_FRESH_KINDS
    )


def _run_recorded(
    args: list[str],
    result: Path,
    timeout_s: float,
    on_progress: ProgressFn | None,
    control: RunControl | None,
    prefix: list[str] | None = None,
    fresh: bool = False,
    confine: sandbox.Confinement | None = None,
    inputs: dict[Path, str] | None = None,
) -> tuple[Ended, dict[str, Any] | None]:
    """Run a child command that writes its record to ``result`` (warm or fresh, see :func:`_run`;
    ``fresh``: always a new process), confirming a reused worker's failure in a fresh process;
    return how it ended and the record. ``inputs``: the files the engine wrote for the child (path →
    text; the request first), written again before a fresh process reads them."""
    inputs = inputs or {}
    gate = child_io.gate(next(iter(inputs.values()), None))
    if fresh or confine is not None:
        ended = _run_once(args, timeout_s, on_progress, control, prefix, confine, gate=gate)
        return ended, child_io.read_record(result)
    ended = _run(args, timeout_s, on_progress, control, prefix, gate)
    record = child_io.read_record(result)
    if _confirm_fresh(ended, record):
        result.unlink(missing_ok=True)
        if on_progress:
            on_progress(0.01, "the warm worker failed; running again in a fresh process")
        child_io.restore(inputs)
        ended = _run_once(args, timeout_s, on_progress, control, prefix, gate=gate)
        record = child_io.read_record(result)
    return ended, record


def _last_words(ended: Ended, n: int = 3) -> str:
    """The last lines the child and its profiler printed before a time-out (where it stood: Nsight
    Compute's last ``==PROF==`` line, a traceback's end), or nothing."""
    said = [ln.strip()[:200] for ln in (ended.out + "\n" + ended.err).splitlines() if ln.strip()][-n:]
    return f" Its last output: {' | '.join(said)}" if said else " It printed nothing."


def run_profile(
    request_json: str,
    timeout_s: float,
    on_progress: ProgressFn | None = None,
    prefix: list[str] | None = None,
    control: RunControl | None = None,
    locks_clocks: bool = False,
    command: str = "run",
    fresh: bool = False,
) -> Record:
    """Run one profile in a child; return its :class:`Record` or raise :class:`WorkerError`.

    ``prefix`` is a profiler's argument vector that launches the child (``ncu ... python -m
    kprof_mcp.child run``); what the profiler prints comes back in the record's ``log``.
    Without one, the control's warm worker runs it when it has one (``control.pool``); a failure
    there that a reused worker could have caused is run again in a fresh process. ``fresh``: never
    in a warm worker (a user's command: its imports, argv and working directory are its own).
    On time-out or cancellation the child's whole process group is killed; when the profiler
    had locked clocks (``locks_clocks``) they are reset and the error says so.
    """
    if control is not None:
        control.check()
    with temp_dir(  # removed without recursion, a failure only warned (P4-10)
        prefix="kprof-", dir=sandbox.tmp_dir(getattr(control, "scope", None), command)
    ) as tmp:
        req_path = Path(tmp) / "request.json"
        res_path = Path(tmp) / "result.json"
        _write_inputs({req_path: request_json})
        args = [command, "--request", str(req_path), "--result", str(res_path)]
        confine = (
            sandbox.command_confinement(request_json, Path(tmp), getattr(control, "workspace", None), prefix)
            if command == "command"
            else None
        )
        ended, record = _run_recorded(
            args, res_path, timeout_s, on_progress, control, prefix, fresh, confine, {req_path: request_json}
        )
        if ended.stopped:
            clocks = ""
            if locks_clocks:
                note = reset_clocks(control.gpu if control else None)
                if control is not None:
                    control.clock_reset = note
                clocks = f" ({note})"
            if ended.stopped == "cancelled":
                raise WorkerError(
                    "cancelled", f"the profile was cancelled; the kernel process tree was killed{clocks}."
                )
            raise WorkerError(
                "timeout",
                f"profiling did not finish within {timeout_s:.0f} s; the kernel "
                f"process tree was killed{clocks}. Raise the time limit (timeout_s), "
                f"or use smaller sizes or a smaller timing budget.{_last_words(ended)}",
                {"log": (ended.out[-200_000:] + ended.err)[-4000:]},
            )
    rc, stderr = ended.rc, ended.err
    log = ended.out[-200_000:] + stderr
    if record and record.get("status") == "ok" and (rc == 0 or prefix):
        return Record(
            work_dir=record.get("work_dir", ""),
            profile_dir=record.get("profile_dir", ""),
            correctness=record.get("correctness"),
            plain=record.get("plain") if isinstance(record.get("plain"), dict) else None,
            log=log,
            returncode=rc,
            wall_s=round(ended.wall, 3),
            warm_worker=ended.warm,
        )
    if record and record.get("status") == "error":
        detail, kind, message = record.get("detail"), record.get("kind"), record.get("message")
        raise WorkerError(  # each field of its shape or none: the record is the job's to write (P6-7)
            kind if isinstance(kind, str) else "crash",
            message if isinstance(message, str) else "unknown error",
            dict(detail if isinstance(detail, dict) else {}, log=log[-4000:]),
        )
    if prefix:
        raise WorkerError(
            "profiler",
            f"the profiled process failed (exit code {rc}); the profiler printed:\n{_tail(log, 25)}",
            {"log": log[-8000:]},
        )
    if rc is not None and rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        raise WorkerError(
            "crash",
            f"the kernel process died with {name} (the server is unaffected). Last output:\n{_tail(stderr)}",
        )
    last = _tail(stderr, 1)
    raise WorkerError(
        "crash",
        f"the kernel process failed (exit code {rc}): {last} — the server is "
        f"unaffected. Last output:\n{_tail(stderr)}",
    )


def _write_inputs(inputs: dict[Path, str]) -> None:
    """A child's input files, each created new and never through a link (:func:`child_io.write_inputs`);
    a planted one fails the job with a clear error."""
    try:
        child_io.write_inputs(inputs)
    except OSError as e:
        raise WorkerError(
            "crash", f"the job's scratch directory was tampered with: {safefs.clip(str(e))}"
        ) from None


def finish(
    request_json: str,
    work_dir: Path,
    log: str,
    profiler: dict[str, Any],
    timeout_s: float = 600.0,
    control: RunControl | None = None,
) -> None:
    """Read a profiler's output in a child process (``python -m kprof_mcp.child finish``; the
    control's warm worker when it has one)."""
    if control is not None:
        control.check()
    with temp_dir(  # removed without recursion, a failure only warned (P4-10)
        prefix="kprof-", dir=sandbox.tmp_dir(getattr(control, "scope", None), "finish")
    ) as tmp:
        paths = {n: Path(tmp) / f"{n}.json" for n in ("request", "profiler", "result")}
        log_path = Path(tmp) / "ncu.log"
        _write_inputs(
            {paths["request"]: request_json, paths["profiler"]: json.dumps(profiler), log_path: log}
        )
        args = [
            "finish",
            "--request",
            str(paths["request"]),
            "--work-dir",
            str(work_dir),
            "--log",
            str(log_path),
            "--profiler",
            str(paths["profiler"]),
            "--result",
            str(paths["result"]),
        ]
        ended, record = _run_recorded(
            args,
            paths["result"],
            timeout_s,
            None,
            control,
            inputs={paths["request"]: request_json, paths["profiler"]: json.dumps(profiler)},
        )
        if ended.stopped == "cancelled":
            raise WorkerError("cancelled", "the profile was cancelled while its report was being read")
        if ended.stopped:
            raise WorkerError("timeout", f"reading the Nsight Compute report took over {timeout_s:.0f} s")
    if ended.rc == 0 and record and record.get("status") == "ok":
        return
    if record and record.get("status") == "error":
        raise WorkerError(record.get("kind", "crash"), record.get("message", "unknown error"))
    raise WorkerError(
        "crash",
        f"reading the Nsight Compute report failed (exit code {ended.rc}; a corrupt "
        f"report can crash the native parser — the server is unaffected): "
        f"{_tail(ended.err)}",
    )


def _pump(proc: subprocess.Popen, on_progress: ProgressFn | None, other: Kept | None = None) -> None:
    """Read the child's stdout to its end in chunks (never a whole line of unbounded length):
    progress lines go to ``on_progress``, the others to ``other`` (bounded)."""
    assert proc.stdout is not None
    for line, n in lines(proc.stdout.fileno()):
        msg = parse_progress(line)
        if msg is None:
            if other is not None:
                other.add(line, n)
            continue
        if on_progress is not None:
            try:
                on_progress(*msg)
            except Exception:  # noqa: BLE001 — a failing progress sink must not stop the pump
                continue

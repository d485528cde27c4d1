"""Running a profiling child (:mod:`kprof_mcp.child`): its own process group, a time limit, progress
lines forwarded, and every way it can end turned into a result or a :class:`WorkerError`.

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
from pathlib import Path
from typing import Any

from .protocol import child_command, parse_progress
from .tools.nvidia_smi import reset_clocks

ProgressFn = Callable[[float, str], None]


class RunControl:
    """What a caller controls about the children of one profile: the GPU they may see
    (``CUDA_VISIBLE_DEVICES``) and cancellation. ``cancel()`` kills the running child's whole
    process group within a fraction of a second; later children are refused."""

    def __init__(self, gpu: str | None = None):
        self.gpu = gpu
        self._cancelled = threading.Event()
        self.clock_reset: str | None = None  # what was done about clocks after a kill

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


def _env(control: RunControl | None = None) -> dict[str, str]:
    env = dict(os.environ)
    if control is not None and control.gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = control.gpu
    # The child must import this very kprof_mcp and the built-in kernels (also from a checkout).
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _wait(proc: subprocess.Popen, timeout_s: float, control: RunControl | None) -> str | None:
    """Wait for the child; ``"timeout"`` or ``"cancelled"`` when it had to be stopped (group killed)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            proc.wait(timeout=0.1)
            return None
        except subprocess.TimeoutExpired:
            pass
        if control is not None and control.cancelled:
            _kill_group(proc)
            return "cancelled"
        if time.monotonic() >= deadline:
            _kill_group(proc)
            return "timeout"


def describe(source: Path, timeout_s: float = 60.0) -> dict[str, Any]:
    """Load a kernel package in a child process and return its description."""
    try:
        cp = subprocess.run(child_command("describe", "--source", str(source)), capture_output=True, text=True,
                            timeout=timeout_s, env=_env(), start_new_session=True)
    except subprocess.TimeoutExpired as e:
        raise WorkerError("load", f"loading kernel package {source} took over {timeout_s:.0f} s; "
                                  "does it run heavy work at import time?") from e
    line = cp.stdout.strip().splitlines()[-1] if cp.stdout.strip() else ""
    try:
        out = json.loads(line)
    except json.JSONDecodeError:
        raise WorkerError("load", f"loading kernel package {source} failed (exit {cp.returncode}): "
                                  f"{_tail(cp.stderr)}") from None
    if out.get("status") != "ok":
        raise WorkerError("load", f"cannot load kernel package {source}: {out.get('message')}", out)
    return out["kernel"]


def _tail(text: str, n: int = 15) -> str:
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    return "\n".join(lines[-n:]) if lines else "(no output)"


def run_profile(request_json: str, timeout_s: float, on_progress: ProgressFn | None = None,
                prefix: list[str] | None = None, control: RunControl | None = None,
                locks_clocks: bool = False, command: str = "run") -> dict[str, Any]:
    """Run one profile in a child; return the child's ok-record or raise :class:`WorkerError`.

    ``prefix`` is a profiler's argument vector that launches the child (``ncu ... python -m
    kprof_mcp.child run``); what the profiler prints comes back in the record's ``log``.
    On time-out or cancellation the child's whole process group is killed; when the profiler
    had locked clocks (``locks_clocks``) they are reset and the error says so.
    """
    if control is not None:
        control.check()
    with tempfile.TemporaryDirectory(prefix="kprof-") as tmp:
        req_path = Path(tmp) / "request.json"
        res_path = Path(tmp) / "result.json"
        req_path.write_text(request_json)
        err_path = Path(tmp) / "stderr.txt"
        with open(err_path, "w+") as err:
            other: list[str] = []
            t0 = time.perf_counter()
            proc = subprocess.Popen([*(prefix or []), *child_command(command, "--request", str(req_path),
                                                                   "--result", str(res_path))],
                                    stdout=subprocess.PIPE, stderr=err, text=True, env=_env(control),
                                    start_new_session=True, errors="replace")
            reader = threading.Thread(target=_pump, args=(proc, on_progress, other), daemon=True)
            reader.start()
            try:
                stopped = _wait(proc, timeout_s, control)
            except BaseException:
                _kill_group(proc)  # interrupted by the caller: no orphans
                raise
            if stopped:
                reader.join(5)
                clocks = ""
                if locks_clocks:
                    note = reset_clocks(control.gpu if control else None)
                    if control is not None:
                        control.clock_reset = note
                    clocks = f" ({note})"
                if stopped == "cancelled":
                    raise WorkerError("cancelled", "the profile was cancelled; the kernel process tree was "
                                                   f"killed{clocks}.")
                raise WorkerError("timeout", f"profiling did not finish within {timeout_s:.0f} s; the kernel "
                                             f"process tree was killed{clocks}. Raise the time limit (timeout_s), "
                                             "or use smaller sizes or a smaller timing budget.")
            wall = time.perf_counter() - t0
            reader.join(5)
            # Grandchildren the kernel may have started die with the group.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            err.seek(0)
            stderr = err.read()
        rc = proc.returncode
        record = None
        if res_path.exists():
            try:
                record = json.loads(res_path.read_text())
            except json.JSONDecodeError:
                record = None
        log = "".join(other[-2000:]) + stderr
        if record and record.get("status") == "ok" and (rc == 0 or prefix):
            record["log"] = log
            record["returncode"] = rc
            record["wall_s"] = round(wall, 3)
            return record
        if record and record.get("status") == "error":
            raise WorkerError(record.get("kind", "crash"), record.get("message", "unknown error"),
                              dict(record.get("detail") or {}, log=log[-4000:]))
        if prefix:
            raise WorkerError("profiler", f"the profiled process failed (exit code {rc}); the profiler printed:\n"
                                          f"{_tail(log, 25)}", {"log": log[-8000:]})
        if rc < 0:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = f"signal {-rc}"
            raise WorkerError("crash", f"the kernel process died with {name} (the server is unaffected). "
                                       f"Last output:\n{_tail(stderr)}")
        last = _tail(stderr, 1)
        raise WorkerError("crash", f"the kernel process failed (exit code {rc}): {last} — the server is "
                                   f"unaffected. Last output:\n{_tail(stderr)}")


def finish(request_json: str, work_dir: Path, log: str, profiler: dict[str, Any], timeout_s: float = 600.0,
           control: RunControl | None = None) -> dict[str, Any]:
    """Read a profiler's output in a child process (``python -m kprof_mcp.child finish``)."""
    if control is not None:
        control.check()
    with tempfile.TemporaryDirectory(prefix="kprof-") as tmp:
        paths = {n: Path(tmp) / f"{n}.json" for n in ("request", "profiler", "result")}
        paths["request"].write_text(request_json)
        paths["profiler"].write_text(json.dumps(profiler))
        log_path = Path(tmp) / "ncu.log"
        log_path.write_text(log)
        cmd = child_command("finish", "--request", str(paths["request"]), "--work-dir", str(work_dir),
                          "--log", str(log_path), "--profiler", str(paths["profiler"]), "--result", str(paths["result"]))
        with open(Path(tmp) / "stdout.txt", "w+") as out, open(Path(tmp) / "stderr.txt", "w+") as err:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=_env(control), start_new_session=True)
            try:
                stopped = _wait(proc, timeout_s, control)
            except BaseException:
                _kill_group(proc)
                raise
            if stopped == "cancelled":
                raise WorkerError("cancelled", "the profile was cancelled while its report was being read")
            if stopped:
                raise WorkerError("timeout", f"reading the Nsight Compute report took over {timeout_s:.0f} s")
            err.seek(0)
            cp = subprocess.CompletedProcess(cmd, proc.returncode, "", err.read())
        record = None
        if paths["result"].exists():
            try:
                record = json.loads(paths["result"].read_text())
            except json.JSONDecodeError:
                record = None
        if cp.returncode == 0 and record and record.get("status") == "ok":
            return record
        if record and record.get("status") == "error":
            raise WorkerError(record.get("kind", "crash"), record.get("message", "unknown error"))
        raise WorkerError("crash", f"reading the Nsight Compute report failed (exit code {cp.returncode}; a corrupt "
                                   f"report can crash the native parser — the server is unaffected): "
                                   f"{_tail(cp.stderr)}")


def _pump(proc: subprocess.Popen, on_progress: ProgressFn | None, other: list[str] | None = None) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        msg = parse_progress(line)
        if msg is None:
            if other is not None:
                other.append(line)
                if len(other) > 6000:  # a chatty kernel must not grow the server's memory
                    del other[:1000]
            continue
        if on_progress is not None:
            try:
                on_progress(*msg)
            except Exception:  # noqa: BLE001 — a failing progress sink must not stop the pump
                continue

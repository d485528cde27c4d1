"""The recorder inside every Python process a profiled command starts (issue 39): the ranks that
``torch.multiprocessing.spawn``, ``torchrun`` or another launcher starts, each a fresh interpreter.

kprof's child puts a directory holding a generated ``sitecustomize.py`` first on the command's
``PYTHONPATH`` and names a run directory in :data:`ENV_DIR` (:mod:`kprof_mcp.capture.ranks`); every
Python process the command starts then calls :func:`install` at start-up. Nothing happens until the
process imports torch: a process that never does (a resource tracker, a shell tool) is left alone.
When torch is imported, the same recorder as the main child's starts — ``torch.profiler`` with the CPU
activity, and CUDA's when the main child uses the GPU — and ``<run>/ranks/<pid>.json`` says the
process is running. At exit (``atexit``: a normal end, ``sys.exit``, an uncaught exception) the trace
is exported to ``<pid>.trace.json`` and ``<pid>.json`` rewritten with the process's rank:

* from the process group, when ``torch.distributed.init_process_group`` ran (noted as it returns:
  most programs destroy the group before they exit) or one is still up at exit;
* else from the environment (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``: torchrun and most launchers);
* a DataLoader worker (``torch.utils.data.get_worker_info()``) is never a rank, whatever its
  environment says, and a process with no rank is ``other``: both are named, their traces dropped.

A process that ends without ``atexit`` (killed, ``os._exit``, a crash in native code) leaves its
``running`` file: the merge names it. A process whose script lies inside torch's own package (the
inductor's compile workers, ``python -m torch.distributed.run`` started as a subprocess) is not
recorded. Processes forked without ``exec`` (``fork`` start method) run no ``sitecustomize`` and are
not recorded either. Standard library only at import; torch only once the process imports it.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import sys
import time
from typing import Any

ENV_DIR = "KPROF_RANKS_DIR"  # the run's ranks/ directory: set, every process started records
ENV_CUDA = "KPROF_RANKS_CUDA"  # "1": record CUDA activity (CUPTI) too, as the main child does
RANK_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK")

_state: dict[str, Any] = {}


class _TorchWatch:
    """A meta-path finder that starts the recorder once ``torch`` has been imported (its module
    executed), then steps aside."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "torch":
            return None
        import importlib.util

        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        spec = importlib.util.find_spec("torch")
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            start(module)

        loader.exec_module = exec_module
        return spec


def install() -> None:
    """Called by the generated ``sitecustomize``: wait for torch (or start now if it is there)."""
    if not os.environ.get(ENV_DIR) or _state:
        return
    _state["installed"] = True
    torch = sys.modules.get("torch")
    if torch is not None:
        start(torch)
    else:
        sys.meta_path.insert(0, _TorchWatch())


def _env_rank() -> dict[str, int]:
    out = {}
    for var in RANK_VARS:
        try:
            out[var.lower()] = int(os.environ[var])
        except (KeyError, ValueError):
            pass
    return out


def _write(record: dict[str, Any]) -> None:
    """``<dir>/<pid>.json``, replaced whole (a reader never sees half a file)."""
    d = os.environ.get(ENV_DIR) or _state.get("dir")
    if not d:
        return
    path = os.path.join(d, f"{os.getpid()}.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(record, f)
    os.replace(tmp, path)


def _inside_torch(torch: Any) -> bool:
    """The process's script lies inside torch's package (a compile worker, torch's own launcher)."""
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] not in ("", "-c") else ""
    root = os.path.dirname(os.path.abspath(getattr(torch, "__file__", "") or ""))
    return bool(script and root and script.startswith(root + os.sep))


def start(torch: Any) -> None:
    """Start recording this process (torch is imported); never raises into the user's code."""
    if _state.get("profiler") is not None or _state.get("skipped"):
        return
    try:
        if _inside_torch(torch):
            _state["skipped"] = True
            return
        _state["dir"] = os.environ.get(ENV_DIR)
        _state["record"] = {
            "pid": os.getpid(),
            "ppid": os.getppid(),
            "argv": [str(a)[:200] for a in sys.argv[:8]],
            "status": "running",
            "started_ns": time.time_ns(),
            "env": _env_rank(),
        }
        _write(_state["record"])
        from torch.profiler import ProfilerActivity, profile

        acts = [ProfilerActivity.CPU]
        if os.environ.get(ENV_CUDA) == "1":
            acts.append(ProfilerActivity.CUDA)
        prof = profile(activities=acts)
        prof.__enter__()
        _state["profiler"] = prof
        _watch_group(torch)
        atexit.register(finish)
    except Exception as e:  # noqa: BLE001 — a recorder must never break the user's process
        _state["error"] = f"{type(e).__name__}: {e}"
        rec = dict(_state.get("record") or {"pid": os.getpid()}, status="failed", error=_state["error"])
        try:
            _write(rec)
        except OSError:
            pass


def _watch_group(torch: Any) -> None:
    """Note the rank when ``torch.distributed.init_process_group`` returns (the group is often
    destroyed before the process exits)."""
    dist = getattr(torch, "distributed", None)
    if dist is None or not dist.is_available() or getattr(dist.init_process_group, "_kprof", False):
        return
    run = dist.init_process_group

    @functools.wraps(run)
    def init_process_group(*args: Any, **kwargs: Any) -> Any:
        out = run(*args, **kwargs)
        _note_group(dist)
        return out

    init_process_group._kprof = True  # type: ignore[attr-defined]
    dist.init_process_group = init_process_group


def _note_group(dist: Any) -> None:
    try:
        if dist.is_initialized():
            _state["group"] = {"rank": int(dist.get_rank()), "world_size": int(dist.get_world_size())}
            rec = dict(_state.get("record") or {}, group=_state["group"])
            _state["record"] = rec
            _write(rec)
    except Exception:  # noqa: BLE001
        pass


def finish() -> None:
    """At exit: stop the recorder, say which rank this was, export its trace when it is one."""
    prof = _state.pop("profiler", None)
    if prof is None:
        return
    rec = dict(_state.get("record") or {"pid": os.getpid()})
    torch = sys.modules.get("torch")
    try:
        prof.__exit__(None, None, None)
        dist = getattr(torch, "distributed", None)
        if dist is not None and dist.is_available():
            _note_group(dist)
        rec.update({k: v for k, v in (_state.get("record") or {}).items() if k == "group"})
        worker = None
        data = sys.modules.get("torch.utils.data")
        if data is not None:
            worker = data.get_worker_info()
        group, env = rec.get("group"), rec.get("env") or {}
        if worker is not None:
            rec.update(role="dataloader_worker", worker_id=int(worker.id))
        elif group is not None:
            rec.update(
                role="rank", rank=group["rank"], world_size=group["world_size"], rank_from="process group"
            )
        elif "rank" in env:
            rec.update(
                role="rank", rank=env["rank"], world_size=env.get("world_size"), rank_from="environment"
            )
        else:
            rec.update(role="other")
        rec["ended_ns"] = time.time_ns()
        if rec["role"] == "rank":
            trace = os.path.join(_state["dir"], f"{os.getpid()}.trace.json")
            prof.export_chrome_trace(trace)
            try:
                add_rank_info(trace, int(rec["rank"]), rec.get("world_size"))
            except (OSError, ValueError, TypeError):
                pass  # the trace as torch wrote it: kprof reads the rank from the record
            rec["trace"] = os.path.basename(trace)
        rec["status"] = "ok"
    except Exception as e:  # noqa: BLE001
        rec.update(status="failed", error=f"{type(e).__name__}: {e}"[:500])
    try:
        _write(rec)
    except OSError:
        pass


def add_rank_info(trace: str, rank: int, world_size: Any) -> bool:
    """Give an exported trace the ``distributedInfo`` torch.profiler writes only with a process group up
    and CUDA recorded (the gloo ranks' CPU traces have none), so that tools reading a directory of
    per-rank traces (HTA's ``TraceAnalysis``, which finds each trace's rank by the first ``"rank": N``)
    know whose it is. The object goes first, the trace is copied once; a trace that has one is left
    alone (Kineto writes it after the events). Returns whether it was added."""
    with open(trace, "rb") as f:
        head = f.read(1 << 16)
        f.seek(max(0, os.fstat(f.fileno()).st_size - (1 << 16)))
        tail = f.read()  # Kineto writes its distributedInfo after the events
    if b'"distributedInfo"' in head + tail or not head.lstrip().startswith(b"{"):
        return False
    info = json.dumps({"distributedInfo": {"rank": rank, "world_size": world_size}})[1:-1]
    tmp = trace + ".rank"
    with open(trace, "rb") as src, open(tmp, "wb") as dst:
        body = src.read(1 << 16)
        at = body.index(b"{") + 1
        comma = b"" if body[at:].lstrip().startswith(b"}") else b","
        dst.write(body[:at] + b"\n  " + info.encode() + comma + body[at:])
        while chunk := src.read(1 << 20):
            dst.write(chunk)
    os.replace(tmp, trace)
    return True

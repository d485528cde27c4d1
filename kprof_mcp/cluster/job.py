"""The job that runs on a Dask worker (:func:`remote_job`) and what it keeps between jobs: the
worker process's engine (with its warm worker) and the unpacked kernel packages."""

from __future__ import annotations

import os
import secrets
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..removal import remove_tree
from .pack import MAX_RESULT_BYTES, pack, unpack


def remote_job(payload: dict[str, Any], job: str) -> dict[str, Any]:
    """Run one job (a profile, a comparison or a sweep: the validated spec itself) on this Dask
    worker, as a task needing ``GPU=1`` (one at a time per worker process): the package unpacked
    into this worker's private workspace, the spec's paths moved there, the engine's own pipeline,
    and every directory it wrote packed for the server, named by its path relative to this
    worker's output root (the outcome's own paths are the worker's: the server sets its own).
    Raises with the engine's own message on failure."""
    from dataclasses import replace

    from distributed import Event, Queue, get_worker

    from ..engine import CompareSpec, KprofError, ProfileSpec, SweepSpec
    from ..runner import RunControl

    t0 = time.time()
    worker = get_worker()
    engine = worker_engine(bool(payload["force_cpu"]))
    cfg = engine.config
    written: list[Path] = []
    scratch: Path | None = None
    try:
        if payload.get("command"):
            # A command's working directory: unpacked afresh for this job (the command may write there),
            # removed after it.
            scratch = cfg.workspace / "commands" / job
            unpack(payload["package"], scratch)
            source = scratch / payload["package_name"]
        else:
            source = _package_here(cfg.workspace, payload["package"], payload["package_name"])

        def moved(req):
            update = {"kernel_source": str(source), "out_root": str(cfg.out_root)}
            if getattr(req, "command", None):
                old = str(req.command_cwd or req.kernel_source)
                update["command_cwd"] = str(source)
                if getattr(req, "command_root", None):  # confined: the shipped directory is its workspace
                    update["command_root"] = str(source)
                update["command"] = [
                    str(source) + a[len(old) :] if a == old or a.startswith(old + os.sep) else a
                    for a in req.command
                ]
            return req.model_copy(update=update)

        from ..modes import ModeError, get_mode, preflight_env
        from ..tools import nvidia_smi

        cpu = cfg.force_cpu or not nvidia_smi.gpu_present()

        def checked(s: ProfileSpec) -> ProfileSpec:
            """The profile's request checked here, on the machine that runs it (the mode's preflight:
            GPU, profilers, MIG), with this machine's profiler paths."""
            try:
                extra = get_mode(s.req.mode).preflight(
                    preflight_env(s.req, cpu, cfg.force_cpu, nvidia_smi.gpus())
                )
            except ModeError as e:
                raise RuntimeError(f"on Dask worker {worker.address} ({socket.gethostname()}): {e}") from None
            return replace(s, req=moved(s.req).with_options(**extra), source=source, base=None, cpu=cpu)

        spec = payload["spec"]
        if isinstance(spec, ProfileSpec):
            spec = checked(spec)
        elif isinstance(spec, CompareSpec):
            spec = replace(spec, req=moved(spec.req), cpu=cpu, arm_specs=[checked(a) for a in spec.arm_specs])
        elif isinstance(spec, SweepSpec):
            spec = replace(spec, req=moved(spec.req), cpu=cpu)
        # The worker's one GPU (CUDA_VISIBLE_DEVICES): its children see it, and the machine-wide lock
        # is that GPU's, so two workers of one host on two GPUs run at once.
        control = RunControl(gpu=os.environ.get("CUDA_VISIBLE_DEVICES") or None)
        queue = Queue(f"kprof-progress-{job}")
        queue.put(
            (
                0.01,
                f"started on Dask worker {worker.address} ({socket.gethostname()})",
                {"worker": worker.address, "host": socket.gethostname()},
            )
        )
        cancel = Event(f"kprof-cancel-{job}")
        stop = threading.Event()

        def watch() -> None:
            while not stop.is_set():
                try:
                    if cancel.wait(timeout=0.5):
                        control.cancel()
                        return
                except Exception:  # noqa: BLE001 — the scheduler went away: the task ends on its own
                    time.sleep(0.5)

        threading.Thread(target=watch, name=f"kprof-cancel-{job}", daemon=True).start()

        def progress(f: float, m: str) -> None:
            queue.put((float(f), str(m)))

        t_run = time.time()
        try:
            outcome = spec.run(engine, progress, control)
            dirs = outcome.dirs()
        except KprofError as e:
            raise RuntimeError(str(e)) from None
        finally:
            stop.set()
        t_ran = time.time()
        written = [Path(d) for d in dirs]
        limit = payload.get("max_result_bytes", MAX_RESULT_BYTES)
        # Each directory by its path relative to the output root, the outcome's own first (then a
        # comparison's arms, in the order of its result's ``profiles``): the server joins them to its own.
        archives = [
            (d.relative_to(cfg.out_root).as_posix(), pack(d, limit, f"the directory {d.name}"))
            for d in written
        ]
        t1 = time.time()
        return {
            "outcome": outcome,
            "archives": archives,
            "worker": worker.address,
            "host": socket.gethostname(),
            "started": t0,
            "finished": t1,
            "seconds": {
                "worker_setup": round(t_run - t0, 3),
                "run": round(t_ran - t_run, 3),
                "pack": round(t1 - t_ran, 3),
            },
        }
    finally:  # the worker keeps no job's directories (they are on the server now, or the job failed)
        for d in written:
            remove_tree(d)
        if scratch is not None:
            remove_tree(scratch)
        for d in cfg.out_root.rglob("*.partial") if cfg.out_root.is_dir() else []:
            remove_tree(d)


KEEP_PACKAGES = 16  # unpacked packages a worker keeps (the least recently used go)


def _package_here(workspace: Path, data: bytes, name: str) -> Path:
    """The shipped package, unpacked at a path named by its digest and kept: an unchanged package
    is the same path job after job, so the warm worker keeps its modules, Triton's JIT and the
    autotuner's choice, as it does locally; an edited one is a new path, imported afresh."""
    import hashlib

    root = workspace / "pkgs"
    final = root / hashlib.sha256(data).hexdigest()[:20]
    if not final.is_dir():
        tmp = root / f".{final.name}.{secrets.token_hex(4)}"
        unpack(data, tmp)
        try:
            tmp.rename(final)
        except OSError:  # another job unpacked it first
            remove_tree(tmp)
        kept = sorted(
            (d for d in root.iterdir() if not d.name.startswith(".")), key=lambda d: d.stat().st_mtime
        )
        for old in kept[:-KEEP_PACKAGES]:
            if old != final:
                remove_tree(old)
    os.utime(final)
    return final / name


_ENGINES: dict[bool, Any] = {}  # this Dask worker process's engine, kept between its jobs


def worker_engine(force_cpu: bool):
    """The engine this Dask worker runs its jobs with, made at its first job and kept: its warm
    worker (one per GPU, :mod:`kprof_mcp.warm`; ``KPROF_WARM=0`` turns it off) keeps torch, Triton,
    the CUDA context and CUPTI loaded between jobs, as a local server's does, so a cluster job costs
    what a local re-profile costs. Its workspace is private to this process and removed at exit."""
    force_cpu = force_cpu or os.environ.get("KPROF_FORCE_CPU") == "1"  # a CPU worker's jobs are CPU jobs
    if force_cpu not in _ENGINES:
        import atexit

        from ..engine import Config, Engine

        root = Path(
            tempfile.mkdtemp(prefix=f"kprof-worker-{os.getpid()}-", dir=os.environ.get("KPROF_WORKER_ROOT"))
        )
        cfg = Config.from_options(str(root), force_cpu=force_cpu)
        cfg.render_profiles = False  # the server renders what it brings back, against its baseline
        engine = Engine(cfg)
        _ENGINES[force_cpu] = engine

        def bye() -> None:
            engine.close()
            remove_tree(root)

        atexit.register(bye)
    return _ENGINES[force_cpu]

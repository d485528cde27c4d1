"""Profiling jobs on a Dask cluster (``kprof-mcp --cluster tcp://SCHEDULER:8786``).

No scheduler of our own: each job becomes one Dask task that needs one ``GPU`` resource, so
Dask runs at most one profile at a time per GPU across the cluster (a worker advertises
``GPU=1`` per GPU it owns: :func:`worker_main` starts one worker per GPU with
``CUDA_VISIBLE_DEVICES`` set). The server side keeps everything else as it is locally: the
:class:`~kprof_mcp.jobs.JobManager` queue and job ids, progress, cancellation, time limits.

* **What travels.** No shared filesystem is assumed. The job's kernel package is packed
  (tar.gz, size-limited) and unpacked into a private workspace on the worker; the worker runs
  the same engine pipeline as a local profile; the finished profile directory comes back packed
  (size-limited: the ``.ncu-rep`` included up to the limit, with a clear error past it) and is
  unpacked into the server's workspace at the same relative path, then rendered there.
* **Progress** flows back on a Dask ``Queue`` per job; **cancellation** sets a Dask
  ``Event`` the worker-side task watches, which kills the remote process tree exactly as a local
  cancellation does (``RunControl.cancel``).
* **A lost worker.** Dask reschedules a task whose worker died (up to its
  ``allowed-failures``, then ``KilledWorker``): the job's progress then says which worker was
  lost and where the profile started again, and the result carries it
  (``profiler.cluster.rescheduled_after`` and a warning); past the limit the job fails with a
  message saying so. Failures of the profile itself are not retried. The server never waits on
  a lost worker.
* **Security.** A scheduler off loopback is refused without TLS (Dask's ``Security``: the
  client certificate is what authenticates), so profiles — which execute code — are never
  submitted over plain TCP to another machine.

Dask is imported only here, and this module only with ``--cluster``.
"""

from __future__ import annotations

import io
import ipaddress
import os
import secrets
import shutil
import socket
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from . import lifeline

MAX_PACKAGE_BYTES = 32 << 20  # a kernel package shipped to a worker
MAX_RESULT_BYTES = 256 << 20  # a profile directory shipped back (the .ncu-rep included)
MAX_COMMAND_DIR_BYTES = 64 << 20  # a command's working directory shipped to a worker (profile_command)


class ClusterError(RuntimeError):
    """A cluster set-up or transport failure the caller can act on (the message says how)."""


def is_loopback(address: str) -> bool:
    host = urlparse(address if "://" in address else f"tcp://{address}").hostname or ""
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback
    except (OSError, ValueError):
        return False


def security_from(tls_ca: str | None = None, tls_cert: str | None = None, tls_key: str | None = None):
    """Dask ``Security`` for mutual TLS, or None when no file is given."""
    if not (tls_ca or tls_cert or tls_key):
        return None
    if not (tls_ca and tls_cert and tls_key):
        raise ClusterError("TLS needs all three of --tls-ca, --tls-cert and --tls-key")
    for f in (tls_ca, tls_cert, tls_key):
        if not Path(f).is_file():
            raise ClusterError(f"TLS file {f} not found")
    from distributed.security import Security

    return Security(
        tls_ca_file=tls_ca,
        tls_client_cert=tls_cert,
        tls_client_key=tls_key,
        require_encryption=True,
        tls_worker_cert=tls_cert,
        tls_worker_key=tls_key,
        tls_scheduler_cert=tls_cert,
        tls_scheduler_key=tls_key,
    )


def check_address(address: str, security) -> None:
    """Refuse a scheduler off loopback without TLS: jobs execute code on the workers."""
    scheme = urlparse(address).scheme if "://" in address else "tcp"
    if scheme not in ("tcp", "tls", "inproc"):
        raise ClusterError(
            f"scheduler address {address!r}: use tcp://HOST:PORT (loopback) or tls://HOST:PORT"
        )
    if scheme == "tls" and security is None:
        raise ClusterError(
            f"scheduler {address} speaks TLS: give the certificates (--tls-ca, --tls-cert, --tls-key; "
            "in Python, cluster.security_from(ca, cert, key))"
        )
    if is_loopback(address):
        return
    if scheme != "tls" or security is None:
        raise ClusterError(
            f"scheduler {address} is not on this machine: connect with TLS (tls://HOST:PORT and "
            "--tls-ca/--tls-cert/--tls-key; the certificates authenticate both sides). Plain tcp:// "
            "is accepted only on loopback, because a profile executes code on the worker."
        )


def connect(engine, address: str, security=None) -> None:
    """Make ``engine`` run its profile, compare and sweep jobs on the Dask cluster at ``address``
    (``engine.execute`` then goes through :class:`ClusterRunner`); requests are then checked on the
    worker that runs them, against that machine's GPU and profilers. The Python API::

        engine = Engine(Config.from_options("."))
        connect(engine, "tcp://127.0.0.1:8786")
        engine.profile("matmul", "v3", mode="ncu")   # runs on a GPU worker; artifacts come back here
    """
    from .engine import KprofError

    try:
        engine.remote = ClusterRunner(address, engine, security)
    except ClusterError as e:
        raise KprofError(str(e)) from None
    engine.config.remote_gpus = True


# ----------------------------------------------------------------------------- packing


def pack(path: Path, limit: int, what: str) -> bytes:
    """A directory or file as tar.gz bytes (``__pycache__`` left out), refusing past ``limit``.
    The same files give the same bytes (sorted members, no gzip timestamp), so a worker can tell
    an unchanged package by its digest."""
    import gzip

    def skip(ti: tarfile.TarInfo):
        if "__pycache__" in ti.name.split("/") or ti.name.endswith(".pyc"):
            return None
        if ti.isdir():
            ti.mtime = 0  # a directory's time moves when Python writes __pycache__ in it
        return ti

    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        members = [path] + (sorted(path.rglob("*")) if path.is_dir() else [])
        for m in members:
            tar.add(
                str(m),
                arcname=str(Path(path.name) / m.relative_to(path)) if m != path else path.name,
                recursive=False,
                filter=skip,
            )
    data = buf.getvalue()
    if len(data) > limit:
        raise ClusterError(
            f"{what} is {len(data) / 2**20:.1f} MiB packed, over the {limit / 2**20:.0f} MiB limit for "
            "shipping between server and worker"
        )
    return data


def unpack(data: bytes, dest: Path) -> None:
    """Unpack tar.gz bytes under ``dest``, refusing members that would land outside it."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(dest, filter="data")


# ----------------------------------------------------------------------------- worker side


def remote_job(payload: dict[str, Any], job: str) -> dict[str, Any]:
    """Run one job (a profile, a comparison or a sweep: the validated spec itself) on this Dask
    worker, as a task needing ``GPU=1`` (one at a time per worker process): the package unpacked
    into this worker's private workspace, the spec's paths moved there, the engine's own pipeline,
    and every directory it wrote packed for the server. Raises with the engine's own message on
    failure."""
    from dataclasses import replace

    from distributed import Event, Queue, get_worker

    from .engine import CompareSpec, KprofError, ProfileSpec, SweepSpec
    from .runner import RunControl

    t0 = time.time()
    worker = get_worker()
    engine = _worker_engine(bool(payload["force_cpu"]))
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
                update["command"] = [
                    str(source) + a[len(old) :] if a == old or a.startswith(old + os.sep) else a
                    for a in req.command
                ]
            return req.model_copy(update=update)

        from .modes import ModeError, PreflightEnv, get_mode
        from .tools import nvidia_smi

        cpu = cfg.force_cpu or not nvidia_smi.gpu_present()

        def checked(s: ProfileSpec) -> ProfileSpec:
            """The profile's request checked here, on the machine that runs it (the mode's preflight:
            GPU, profilers, MIG), with this machine's profiler paths."""
            try:
                extra = get_mode(s.req.mode).preflight(
                    PreflightEnv(
                        cpu=cpu,
                        force_cpu=cfg.force_cpu,
                        gpus=nvidia_smi.gpus(),
                        clock_control=s.req.clock_control,
                        timeline_engine=s.req.timeline_engine,
                    )
                )
            except ModeError as e:
                raise RuntimeError(f"on Dask worker {worker.address} ({socket.gethostname()}): {e}") from None
            return replace(s, req=moved(s.req).model_copy(update=extra), source=source, base=None, cpu=cpu)

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
            if isinstance(spec, CompareSpec):
                outcome = engine.run_compare(spec, progress, control)
                dirs = [outcome.compare_dir, *(Path(p) for p in outcome.result.profiles.values())]
            elif isinstance(spec, SweepSpec):
                outcome = engine.run_sweep(spec, progress, control)
                dirs = [outcome.sweep_dir]
            else:
                outcome = engine.run_checked(spec, progress, control)
                dirs = [outcome.profile_dir]
        except KprofError as e:
            raise RuntimeError(str(e)) from None
        finally:
            stop.set()
        t_ran = time.time()
        written = [Path(d) for d in dirs]
        limit = payload.get("max_result_bytes", MAX_RESULT_BYTES)
        archives = [
            (str(d.relative_to(cfg.out_root)), pack(d, limit, f"the directory {d.name}")) for d in dirs
        ]
        t1 = time.time()
        return {
            "outcome": outcome,
            "archives": archives,
            "worker_out_root": str(cfg.out_root),
            "worker": worker.address,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": t0,
            "finished": t1,
            "warm": engine.pool is not None,
            "seconds": {
                "worker_setup": round(t_run - t0, 3),
                "run": round(t_ran - t_run, 3),
                "pack": round(t1 - t_ran, 3),
            },
        }
    finally:  # the worker keeps no job's directories (they are on the server now, or the job failed)
        for d in written:
            shutil.rmtree(d, ignore_errors=True)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        for d in cfg.out_root.rglob("*.partial") if cfg.out_root.is_dir() else []:
            shutil.rmtree(d, ignore_errors=True)


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
            shutil.rmtree(tmp, ignore_errors=True)
        kept = sorted(
            (d for d in root.iterdir() if not d.name.startswith(".")), key=lambda d: d.stat().st_mtime
        )
        for old in kept[:-KEEP_PACKAGES]:
            if old != final:
                shutil.rmtree(old, ignore_errors=True)
    os.utime(final)
    return final / name


_ENGINES: dict[bool, Any] = {}  # this Dask worker process's engine, kept between its jobs


def dask_setup(worker) -> None:
    """Dask's preload hook (``kprof worker`` starts each worker with ``--preload kprof_mcp.cluster``):
    make this worker's engine and start its warm worker now, so that the first job does not pay
    torch's import, the CUDA context and CUPTI's start, as a local server's first job does not.
    First, the lifeline from ``kprof worker``: the worker dies with the command that started it."""
    lifeline.watch()
    if os.environ.get("KPROF_WARM", "1") == "0":
        return
    engine = _worker_engine(False)
    engine.start_workers([os.environ.get("CUDA_VISIBLE_DEVICES") or None])  # spawns; does not wait


def _worker_engine(force_cpu: bool):
    """The engine this Dask worker runs its jobs with, made at its first job and kept: its warm
    worker (one per GPU, :mod:`kprof_mcp.warm`; ``KPROF_WARM=0`` turns it off) keeps torch, Triton,
    the CUDA context and CUPTI loaded between jobs, as a local server's does, so a cluster job costs
    what a local re-profile costs. Its workspace is private to this process and removed at exit."""
    force_cpu = force_cpu or os.environ.get("KPROF_FORCE_CPU") == "1"  # a CPU worker's jobs are CPU jobs
    if force_cpu not in _ENGINES:
        import atexit

        from .engine import Config, Engine

        root = Path(
            tempfile.mkdtemp(prefix=f"kprof-worker-{os.getpid()}-", dir=os.environ.get("KPROF_WORKER_ROOT"))
        )
        cfg = Config.from_options(str(root), force_cpu=force_cpu)
        engine = Engine(cfg)
        _ENGINES[force_cpu] = engine

        def bye() -> None:
            engine.close()
            shutil.rmtree(root, ignore_errors=True)

        atexit.register(bye)
    return _ENGINES[force_cpu]


# ----------------------------------------------------------------------------- server side


class ClusterRunner:
    """The JobManager's ``run`` for a cluster: submit, follow, cancel, bring the profile back."""

    def __init__(self, address: str, engine, security=None, connect_timeout_s: float = 20.0):
        check_address(address, security)
        from distributed import Client

        try:
            self.client = Client(address, security=security, timeout=connect_timeout_s, set_as_default=False)
        except (OSError, TypeError, ValueError) as e:  # TimeoutError is an OSError; TLS set-up errors are not
            raise ClusterError(
                f"cannot reach the Dask scheduler at {address}: {e}. Start one with `dask scheduler` "
                "and workers with `kprof worker --scheduler ADDRESS`."
            ) from None
        self.address, self.engine = address, engine
        self.ran: list[dict[str, Any]] = []  # where and when each job ran (benchmarks, tests)

    def gpu_count(self) -> int:
        info = self.client.scheduler_info()
        return int(sum(w.get("resources", {}).get("GPU", 0) for w in info.get("workers", {}).values()))

    def slots(self) -> list[str]:
        """One JobManager slot per GPU the cluster advertises now (at least one: jobs then wait in
        Dask's queue until a worker joins). The server asks again at each submit, so workers that
        join later (Slurm scaling up) add slots."""
        return [f"cluster-{i}" for i in range(max(1, self.gpu_count()))]

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:  # noqa: BLE001
            pass

    def run(self, spec, progress, control):
        from dataclasses import replace

        from distributed import Event, Queue
        from distributed.client import FutureCancelledError

        from .engine import KprofError, ProfileSpec

        job = secrets.token_hex(6)
        source = Path(spec.req.kernel_source)
        command = isinstance(spec, ProfileSpec) and bool(spec.req.command)
        shipped = replace(spec, base=None) if isinstance(spec, ProfileSpec) else spec
        try:
            # A command's working directory travels like a package: the worker runs the command there.
            packed = (
                pack(source, MAX_COMMAND_DIR_BYTES, f"the command's working directory {source.name}")
                if command
                else pack(source, MAX_PACKAGE_BYTES, f"kernel package {source.name}")
            )
        except ClusterError as e:
            raise KprofError(
                f"{e}"
                + (
                    "; keep data and outputs out of the command's working directory (cwd), or "
                    "profile the command on a server without --cluster"
                    if command
                    else ""
                )
            ) from None
        payload = {
            "spec": shipped,
            "force_cpu": bool(getattr(spec.req, "force_cpu", False)),
            "package_name": source.name,
            "package": packed,
            "command": command,
        }
        sub = Queue(f"kprof-progress-{job}", client=self.client)
        cancel = Event(f"kprof-cancel-{job}", client=self.client)
        progress(0.0, f"submitted to the Dask cluster at {self.address}")
        t_submit = time.monotonic()
        fut = self.client.submit(
            remote_job,
            payload,
            job,
            resources={"GPU": 1},
            pure=False,
            retries=0,
            key=f"kprof-{type(spec).__name__}-{job}",
        )
        deadline = (
            time.monotonic() + spec.timeout + 120.0
        )  # the worker enforces the limit; this is a backstop
        cancel_sent = None
        starts: list[dict[str, str]] = []  # each worker the task started on (more than one: rescheduled)

        def forward() -> None:
            for item in _drain(sub):
                f, m = item[0], item[1]
                if len(item) > 2:
                    starts.append(item[2])
                    if len(starts) > 1:
                        lost = starts[-2]
                        m = (
                            f"Dask worker {lost['worker']} ({lost['host']}) was lost mid-job; Dask rescheduled the job "
                            f"and it started again on {starts[-1]['worker']} ({starts[-1]['host']})"
                        )
                progress(f, m)

        try:
            while not fut.done():
                forward()
                if control.cancelled and cancel_sent is None:
                    # A running task: the worker kills the process tree, tidies up, then the task
                    # fails, and only then is the job cancelled, as locally. One still in Dask's
                    # queue is taken out (a task starting meanwhile sees the Event at once).
                    cancel.set()
                    cancel_sent = time.monotonic()
                    if not starts:
                        fut.cancel()
                if cancel_sent is not None and time.monotonic() - cancel_sent > 30.0:
                    fut.cancel()
                    raise KprofError("cancelled; the worker did not confirm within 30 s")
                if time.monotonic() > deadline:
                    cancel.set()
                    fut.cancel()
                    raise KprofError(
                        f"the cluster job did not finish within {spec.timeout + 120:.0f} s; cancelled"
                    )
                try:  # wakes as soon as the task ends
                    fut.result(timeout=0.2)
                except TimeoutError:
                    pass
                except Exception:  # noqa: BLE001 — it ended badly: read below, once done
                    if not fut.done():
                        time.sleep(0.2)
            forward()
            try:
                out = fut.result()
            except FutureCancelledError:
                raise KprofError("cancelled") from None
            except Exception as e:  # noqa: BLE001 — the worker's error, or the cluster's
                raise KprofError(_remote_error(e)) from None
        except KeyboardInterrupt:  # the CLI's Ctrl-C: the remote process tree is killed too
            cancel.set()
            fut.cancel()
            raise
        finally:
            try:
                cancel.clear()
            except Exception:  # noqa: BLE001
                pass
        lost = [s["worker"] for s in starts[:-1]]
        out["seconds"]["round_trip"] = round(time.monotonic() - t_submit, 3)
        t_back = time.monotonic()
        outcome = self._bring_back(spec, out, job, lost)
        out["seconds"]["bring_back"] = round(time.monotonic() - t_back, 3)  # in runner.ran only
        return outcome

    def _bring_back(self, spec, out: dict[str, Any], job: str, lost: list[str] | None = None):
        """Unpack the job's directories into the server's workspace (same relative paths), point
        the outcome's paths there, and re-render a profile against the server's baseline."""
        from . import store
        from .engine import CompareSpec, KprofError, ProfileOutcome, SweepSpec, render_profile

        root = self.engine.config.out_root
        old = out["worker_out_root"]
        dirs = []
        for rel, data in out.pop("archives"):
            final = root / rel
            if final.exists():
                raise KprofError(
                    f"{final} already exists on the server; the returned directory was not unpacked"
                )
            unpack(data, final.parent)
            for f in final.rglob("*"):
                if f.suffix in (".md", ".json") and f.is_file():  # the worker's paths, as the server's
                    text = f.read_text(errors="replace")
                    if old in text:
                        f.write_text(text.replace(old, str(root)))
            dirs.append(final)
        outcome = out.pop("outcome")
        # The task's span on the worker (Unix s, its clock) and where the job's time went: on the worker
        # (setup: unpack and preflight; run: the engine; pack), and the server's round trip from submit
        # to result (all of it: the queue in Dask, shipping both ways, the worker's part).
        where = {
            "scheduler": self.address,
            "worker": out["worker"],
            "host": out["host"],
            "started": out["started"],
            "finished": out["finished"],
            "seconds": dict(out["seconds"]),
        }
        if lost:
            where["rescheduled_after"] = lost
        self.ran.append(dict(out, job=job, rescheduled_after=lost or []))
        note = (
            (
                f"Dask rescheduled this job after losing worker(s) {', '.join(lost)} mid-job; it ran again from the "
                f"start on {out['worker']} ({out['host']}), so its figures come from that run alone"
            )
            if lost
            else None
        )
        if isinstance(spec, CompareSpec):
            if note:
                from .models import ResultWarning

                outcome.result.warnings.append(ResultWarning(kind="note", message=note))
                (dirs[0] / "compare.json").write_text(outcome.result.model_dump_json(indent=2))
            outcome.compare_dir = dirs[0]
            outcome.markdown = outcome.markdown.replace(old, str(root))
            outcome.result = type(outcome.result).model_validate_json(
                outcome.result.model_dump_json().replace(old, str(root))
            )
            return outcome
        if isinstance(spec, SweepSpec):
            outcome.sweep_dir = dirs[0]
            outcome.markdown = outcome.markdown.replace(old, str(root))
            return outcome
        final_dir = dirs[0]
        result = store.load_result(final_dir, "profile")
        result.profiler = dict(result.profiler, cluster=where)
        if note:
            from .models import ResultWarning

            result.warnings.append(ResultWarning(kind="note", message=note))
        (final_dir / "result.json").write_text(result.model_dump_json(indent=2))
        r = render_profile(result, spec.base, store.sibling_versions(result, final_dir))
        (final_dir / "report.md").write_text(r.report)
        (final_dir / "contract.md").write_text(r.contract)
        return ProfileOutcome(
            result=result, assessment=r.assessment, contract=r.contract, profile_dir=final_dir
        )


def _drain(queue) -> list[tuple[float, str]]:
    """The progress lines waiting in a job's queue (none: an empty list)."""
    try:
        return [tuple(item) for item in queue.get(batch=True)]
    except Exception:  # noqa: BLE001 — the scheduler is going away: progress is best effort
        return []


def _remote_error(e: BaseException) -> str:
    name = type(e).__name__
    if name == "KilledWorker":
        return (
            f"the Dask workers running this job died (lost connection or killed) before it finished, and Dask "
            f"stopped rescheduling it ({e}; the limit is the scheduler's distributed.scheduler.allowed-failures). "
            "Check the workers' machines (a kernel that kills its process is run in a child and would fail the "
            "job instead) and profile again."
        )
    return str(e) or name


# ----------------------------------------------------------------------------- kprof worker


def stop_processes(procs: list, wait_s: float) -> None:
    """Terminate processes (Dask's own shutdown), then kill those still there after ``wait_s``."""
    import subprocess

    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(wait_s)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def worker_main(
    scheduler: str,
    gpus: list[str],
    nthreads: int = 1,
    tls: tuple[str, str, str] | None = None,
    extra: list[str] | None = None,
) -> int:
    """Start one Dask worker per GPU (``CUDA_VISIBLE_DEVICES=<gpu>``, resource ``GPU=1``) and wait;
    Ctrl-C or SIGTERM stops them all."""
    import signal
    import subprocess
    import sys

    procs = []
    # The workers' workspaces, removed when this command ends even if a worker could not tidy up.
    root = tempfile.mkdtemp(prefix="kprof-workers-")
    for i, g in enumerate(gpus):
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=g, KPROF_WORKER_ROOT=root)
        if g == "cpu":
            env.pop("CUDA_VISIBLE_DEVICES")
            env["KPROF_FORCE_CPU"] = "1"
        cmd = [
            sys.executable,
            "-m",
            "distributed.cli.dask_worker",
            scheduler,
            "--nworkers",
            "1",
            "--nthreads",
            str(nthreads),
            "--resources",
            "GPU=1",
            "--name",
            f"kprof-{socket.gethostname()}-{os.getpid()}-{i}-gpu{g}",
            "--no-nanny",
            "--preload",
            "kprof_mcp.cluster",
        ]
        if tls:
            ca, cert, key = tls
            cmd += ["--tls-ca-file", ca, "--tls-cert", cert, "--tls-key", key]
        # Its own process group and this process's lifeline: a worker (and its jobs' processes) dies
        # with this command however it ends; see dask_setup.
        env, lifeline_fds = lifeline.for_child(env)
        procs.append(
            subprocess.Popen(cmd + list(extra or []), env=env, pass_fds=lifeline_fds, start_new_session=True)
        )
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        while not stop.is_set() and any(p.poll() is None for p in procs):
            stop.wait(0.5)
    finally:
        stop_processes(procs, 10.0)
        shutil.rmtree(root, ignore_errors=True)
    return max((p.returncode or 0) for p in procs) if not stop.is_set() else 0

"""The server side: :func:`connect` and :class:`ClusterRunner`, the JobManager's ``run`` for a
cluster (submit, follow, cancel, bring the directories back)."""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

from .errors import ClusterError
from .job import remote_job
from .pack import MAX_COMMAND_DIR_BYTES, MAX_PACKAGE_BYTES, pack, unpack
from .tls import check_address


def connect(engine, address: str, security=None) -> None:
    """Make ``engine`` run its profile, compare and sweep jobs on the Dask cluster at ``address``
    (``engine.execute`` then goes through :class:`ClusterRunner`); requests are then checked on the
    worker that runs them, against that machine's GPU and profilers. The Python API::

        engine = Engine(Config.from_options("."))
        connect(engine, "tcp://127.0.0.1:8786")
        engine.profile("matmul", "v3", mode="ncu")   # runs on a GPU worker; artifacts come back here
    """
    from ..engine import KprofError

    try:
        engine.remote = ClusterRunner(address, engine, security)
    except ClusterError as e:
        raise KprofError(str(e)) from None
    engine.config.remote_gpus = True


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
        self.ran: list[dict[str, Any]] = []  # where and when each job ran (its profiler.cluster record)

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

        from ..engine import KprofError, ProfileSpec

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
        return self._bring_back(spec, out, job, lost)

    def _bring_back(self, spec, out: dict[str, Any], job: str, lost: list[str] | None = None):
        """Unpack the job's directories into the server's workspace at the paths the worker gave
        relative to its output root, point the outcome and its results at them (no file's text is
        rewritten), and render a profile here, against the server's baseline and sibling versions."""
        from .. import store
        from ..engine import CompareSpec, KprofError, ProfileOutcome, SweepSpec, render_profile
        from ..models import ResultWarning

        root = self.engine.config.out_root
        dirs = []
        for rel, data in out.pop("archives"):
            final = root / rel
            if final.exists():
                raise KprofError(
                    f"{final} already exists on the server; the returned directory was not unpacked"
                )
            unpack(data, final.parent)
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
        self.ran.append(dict(where, job=job, rescheduled_after=lost or []))
        note = (
            ResultWarning(
                kind="note",
                message=(
                    f"Dask rescheduled this job after losing worker(s) {', '.join(lost)} mid-job; it ran again "
                    f"from the start on {out['worker']} ({out['host']}), so its figures come from that run alone"
                ),
            )
            if lost
            else None
        )
        if isinstance(spec, CompareSpec):
            return _compare_here(outcome, dirs, note)
        if isinstance(spec, SweepSpec):
            outcome.sweep_dir = dirs[0]
            outcome.result.sweep_dir = str(dirs[0])
            from .. import safefs  # a run file a kernel package's job could have written: bounded first

            text = safefs.read_json_text(dirs[0], dirs[0] / "sweep.json", *store.RESULT_CAP)
            sweep = type(outcome.result).model_validate_json(text)
            (dirs[0] / "sweep.json").write_text(
                sweep.model_copy(update={"sweep_dir": str(dirs[0])}).model_dump_json(indent=2)
            )
            return outcome
        final_dir = dirs[0]
        result = store.load_result(final_dir, "profile")
        result.profile_dir = str(final_dir)
        result.profiler = dict(result.profiler, cluster=where)
        if note:
            result.warnings.append(note)
        store.write_result(final_dir, result)
        # The one rendering (the worker's engine renders none): the server's baseline and siblings are here.
        r = render_profile(result, spec.base, store.sibling_versions(result, final_dir), spec.allow_mismatch)
        (final_dir / "report.md").write_text(r.report)
        (final_dir / "contract.md").write_text(r.contract)
        return ProfileOutcome(
            result=result, assessment=r.assessment, contract=r.contract, profile_dir=final_dir
        )


def _compare_here(outcome, dirs: list[Path], note=None):
    """A comparison brought back: its directory first, then its arms' profiles (Nsight modes), in the
    order of its result's ``profiles``. Their paths in the results are set to the server's, each
    arm's contract and report rendered here (the worker renders none), and compare.md rendered
    again when it names the arms' directories."""
    from .. import store
    from ..engine import render_profile
    from ..render.compare import render_compare

    result = outcome.result
    profiles = dict(zip(result.profiles, (str(d) for d in dirs[1:])))
    for d in dirs[1:]:
        arm = store.load_result(d, "profile")
        arm.profile_dir = str(d)
        store.write_result(d, arm)
        r = render_profile(arm, None, store.sibling_versions(arm, d))
        (d / "report.md").write_text(r.report)
        (d / "contract.md").write_text(r.contract)
    result = result.model_copy(
        update={
            "compare_dir": str(dirs[0]),
            "profiles": profiles,
            "warnings": result.warnings + ([note] if note else []),
        }
    )
    (dirs[0] / "compare.json").write_text(result.model_dump_json(indent=2))
    if profiles:
        outcome.markdown = render_compare(result)
        (dirs[0] / "compare.md").write_text(outcome.markdown)
    outcome.result, outcome.compare_dir = result, dirs[0]
    return outcome


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

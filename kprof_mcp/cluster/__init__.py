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

One module per job: :mod:`.tls` (the TLS policy), :mod:`.pack` (packing a job's files),
:mod:`.job` (the task that runs on the worker), :mod:`.preload` (Dask's preload hook),
:mod:`.runner` (the server side: :class:`ClusterRunner`, :func:`connect`) and :mod:`.worker`
(``kprof worker``). Dask is imported only in this package, and this package only with ``--cluster``.
"""

from .errors import ClusterError
from .job import remote_job
from .pack import MAX_COMMAND_DIR_BYTES, MAX_PACKAGE_BYTES, MAX_RESULT_BYTES, pack, unpack
from .preload import dask_setup
from .runner import ClusterRunner, connect
from .tls import check_address, is_loopback, security_from
from .worker import stop_processes, worker_main

__all__ = [
    "MAX_COMMAND_DIR_BYTES",
    "MAX_PACKAGE_BYTES",
    "MAX_RESULT_BYTES",
    "ClusterError",
    "ClusterRunner",
    "check_address",
    "connect",
    "dask_setup",
    "is_loopback",
    "pack",
    "remote_job",
    "security_from",
    "stop_processes",
    "unpack",
    "worker_main",
]

"""The MCP server's wiring: the engine and the job manager, the tools registered from
:mod:`kprof_mcp.face` in a fixed order, the transports (stdio, streamable HTTP) and the signal
handling. The tools, their I/O models, the error policy and HTTP authentication live in
:mod:`kprof_mcp.face`. No torch or triton is imported here.
"""

from __future__ import annotations

import argparse
import atexit
import os
import sys
import threading
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

from .engine import Config, Engine, KprofError
from .face import tools_batch, tools_info, tools_profile
from .face.errors import MAX_ERROR_CHARS, _ReasonedServer  # noqa: F401  (MAX_ERROR_CHARS: re-exported)
from .face.http import TokenError, http_app, read_token, serving_line  # noqa: F401  (TokenError, read_token: re-exported)
from .face.toolctx import ToolContext
from .face.waiting import answers
from .jobs import JobManager
from .warm import WorkerPool

INSTRUCTIONS = """\
kprof-mcp profiles GPU kernels (Triton / PyTorch) and answers with the Profiler Output Contract.
Workflow: list_kernels → profile_kernel(kernel, version, params) → read the contract (Stages,
Bottleneck, Top 3 Opportunities) → change the kernel → profile_kernel again with
baseline=<previous profile_dir> → compare_versions(kernel, [old, new]) for a verdict with a 95 % CI →
update_devlog. Modes: 'annotation' (default first pass: Nsight
Compute counters per stage), 'ncu' (deep dive: every section, rules, source-level SASS), 'nsys'
(timeline: stream overlap, launch overhead, idle gaps; Nsight Systems, or CUPTI via torch.profiler),
'event' (quick A/B: each kernel's own time from CUPTI, launch-inclusive CUDA-event time beside it). Without a GPU only 'event' and 'nsys' run (CPU timing, labelled as such).
device_info tells which device, peaks, profilers and modes are usable.
"""

# How long an idle keep-alive connection stays open: longer than an HTTP client's own pool keeps one (httpx, the
# MCP SDK's client: 5 s; uvicorn's default is 5 s too), so the client closes first. With both at 5 s, a connection
# the server closes just as the client sends its next request on it fails that request with a ReadError: the
# likely cause of the HTTP fuzz test's ReadErrors under load (issue 38's P7-2; not proven).
KEEP_ALIVE_S = 75


def build_server(
    config: Config | None = None,
    start_workers: bool = False,
    pool: WorkerPool | None = None,
    cluster: dict[str, Any] | None = None,
    allow_commands: bool = False,
) -> MCPServer:
    """``cluster``: {"address", "security"} — jobs run as Dask tasks (kprof_mcp.cluster).
    ``allow_commands``: register ``profile_command``, which executes the caller's Python command
    (the operator's explicit choice: ``--allow-commands``)."""
    engine = Engine(config, eager_workers=cluster is None, pool=pool)
    slots = ([None] if engine.config.force_cpu else engine.config.gpus) or None
    import atexit

    if cluster is not None:  # Dask is imported only here
        from .cluster import connect

        connect(engine, cluster["address"], cluster.get("security"))  # KprofError: main() reports it
        jobs = JobManager(engine.execute, slots=engine.remote.slots(), more_slots=engine.remote.slots)
        start_workers = False
    else:
        jobs = JobManager(engine.execute, slots=slots)

    atexit.register(engine.close)  # registered first, so it runs after jobs.shutdown: warm workers killed
    atexit.register(jobs.shutdown)  # server exit: queued jobs dropped, running process trees killed
    if start_workers:  # importing torch and bringing up CUDA while the client connects
        engine.start_workers(jobs.slots)
    mcp = _ReasonedServer("kprof-mcp", instructions=INSTRUCTIONS, version="0.1.0")
    _plain_log_when_piped()

    tc = ToolContext(engine=engine, jobs=jobs, answers=answers(jobs), allow_commands=allow_commands)
    # Registered in this order (list_tools answers in it).
    tools_info.register_catalogue(mcp, tc)
    tools_profile.register_profile(mcp, tc)
    tools_batch.register_batch(mcp, tc)
    tools_profile.register_jobs(mcp, tc)
    tools_info.register_info(mcp, tc)
    return mcp


def _plain_log_when_piped() -> None:
    """The SDK logs through rich's RichHandler, which breaks every line at 80 columns when stderr is
    not a terminal (a service's log, a file): paths and identifiers cut in two. There, one plain
    line per record instead."""
    import logging

    if sys.stderr.isatty():
        return
    root = logging.getLogger()
    for h in list(root.handlers):
        if type(h).__name__ == "RichHandler":
            root.removeHandler(h)
            plain = logging.StreamHandler(sys.stderr)
            plain.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
            root.addHandler(plain)


_stopping = threading.Event()


def _stop(signum: int, frame) -> None:
    """SIGTERM (a service manager, ``kill``) or SIGINT (Ctrl-C): exit after the clean-up a normal exit
    runs (its atexit handlers: running jobs' process trees killed, warm workers killed). A normal
    exit cannot be had here: over stdio the transport's thread blocked reading stdin keeps the
    interpreter from finishing. The clean-up runs in a thread of its own, so that no lock the
    interrupted main thread holds can stall it; a second signal exits at once (the children's
    lifelines still take them down, :mod:`kprof_mcp.lifeline`)."""
    if _stopping.is_set():
        os._exit(128 + signum)
    _stopping.set()
    threading.Thread(target=_exit_after_clean_up, args=(signum,), name="kprof-stop").start()


def _exit_after_clean_up(signum: int) -> None:
    atexit._run_exitfuncs()  # what a normal exit would run, each handler once (os._exit skips them after)
    os._exit(128 + signum)  # the shell's convention for "ended by this signal"


def _check_workspace_for_commands(ap: argparse.ArgumentParser, workspace: str | None) -> None:
    """``--allow-commands`` lets a command write its working directory, by default the workspace root:
    a workspace that is the home directory (or holds it, ``/``) would open the user's dot-files, keys
    and caches to every command (the tenth probe: ``--workspace ~``)."""
    ws = Path(workspace or ".").resolve()
    home = Path.home().resolve()
    if ws == home or ws in home.parents:
        ap.error(
            f"--allow-commands with the workspace {ws}: it holds the home directory ({home}), whose files "
            "every command could then write; pass the project's own directory as --workspace"
        )


def _check_confinement(ap: argparse.ArgumentParser, unconfined: bool, network: bool = False) -> None:
    """``--allow-commands`` runs commands confined by Landlock (:mod:`kprof_mcp.sandbox`); where
    the kernel has none, only with ``--unconfined-commands``, said once on stderr. Whether commands
    may use TCP (``--commands-network``) is said once on stderr too."""
    from . import sandbox

    sandbox.set_commands_network(network)
    if sandbox.available():
        tcp = "allowed (--commands-network)" if network else "refused (pass --commands-network to allow it)"
        if sandbox.abi() < 4:
            tcp = f"not controlled (Landlock ABI {sandbox.abi()}: TCP needs ABI 4)"
        kind = sandbox.limits.task_limit_kind()
        tasks = (
            f"{sandbox.limits.max_tasks()} ({kind})"
            if kind != "none"
            else "not limited (root, no pids cgroup)"
        )
        mem = "not limited (no writable memory cgroup)"
        if sandbox.memory.limit_kind() != "none":
            total = sandbox.memory.max_memory()
            mem = f"{total} bytes for all jobs, {sandbox.memory.per_job(total)} a job (memory cgroup)"
            atexit.register(sandbox.memory.remove_shared)  # the jobs' cgroup, when no job is left in it
        print(
            f"kprof-mcp: profile_command runs confined (Landlock ABI {sandbox.abi()}); TCP: {tcp}; "
            f"tasks per job: {tasks}; memory: {mem}",
            file=sys.stderr,
        )
        return
    why = (
        f"this kernel has no usable Landlock (ABI {sandbox.abi()}, {sandbox.MIN_ABI} or later needed), "
        "so profile_command's commands cannot be confined to the workspace"
    )
    if not unconfined:
        ap.error(f"--allow-commands: {why}; pass --unconfined-commands too to run them unconfined")
    print(
        f"kprof-mcp: WARNING: {why}; --unconfined-commands: they run unconfined, as this user",
        file=sys.stderr,
        flush=True,
    )


def main(argv: list[str] | None = None, pool: WorkerPool | None = None) -> None:
    """The server (``pool``: warm workers already started by :mod:`kprof_mcp.launch`)."""
    import signal

    for sig in (
        signal.SIGTERM,
        signal.SIGINT,
    ):  # over streamable HTTP uvicorn shuts down first, then calls this
        signal.signal(sig, _stop)
    ap = argparse.ArgumentParser(
        prog="kprof-mcp", description="kprof-mcp: MCP server for GPU kernel profiling"
    )
    ap.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    ap.add_argument(
        "--host",
        default="127.0.0.1",
        help="bind address for streamable-http (default 127.0.0.1; any "
        "other address requires a bearer token)",
    )
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument(
        "--token-file",
        default=None,
        help="file holding the bearer token for streamable-http "
        "(default: the KPROF_MCP_TOKEN environment variable)",
    )
    ap.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        help="extra Host header value accepted (DNS-rebinding protection), e.g. gpu1:8000",
    )
    ap.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        help="extra Origin accepted, e.g. https://inspector.example",
    )
    ap.add_argument(
        "--allow-commands",
        action="store_true",
        help="register profile_command, which EXECUTES the caller's Python command (a script or module "
        "under the workspace, or pytest) as this server's user; over streamable-http it also needs "
        "a bearer token, on loopback too",
    )
    ap.add_argument(
        "--unconfined-commands",
        action="store_true",
        help="with --allow-commands on a kernel without Landlock (ABI 3 or later): run the commands "
        "anyway, NOT confined (they may then read and write whatever this user may)",
    )
    ap.add_argument(
        "--commands-network",
        action="store_true",
        help="with --allow-commands: let the commands use TCP (bind, connect; e.g. torch.distributed's "
        "TCPStore on loopback), which they are refused otherwise; kernel children never get it",
    )
    ap.add_argument(
        "--workspace", default=None, help="root for profiles, devlogs and user kernels (default: cwd)"
    )
    ap.add_argument("--kernels-dir", action="append", default=[], help="extra directory of kernel packages")
    ap.add_argument(
        "--timeout", type=float, default=None, help="time limit per profile, seconds (default 900)"
    )
    ap.add_argument(
        "--wait",
        type=float,
        default=None,
        help="profile_kernel answers within this many seconds with the contract or a job id (default 45)",
    )
    ap.add_argument(
        "--gpus", default=None, help="comma-separated GPU indices jobs may use (default: all visible)"
    )
    ap.add_argument(
        "--cluster",
        default=None,
        metavar="tcp://SCHEDULER:8786",
        help="run profiles as Dask tasks on this scheduler's workers (one GPU resource each; see "
        "docs/cluster.md); off loopback it must be tls:// with --tls-ca/--tls-cert/--tls-key",
    )
    ap.add_argument("--tls-ca", default=None)
    ap.add_argument("--tls-cert", default=None)
    ap.add_argument("--tls-key", default=None)
    a = ap.parse_args(argv)
    token = None
    if a.transport == "streamable-http":
        try:
            token = read_token(a.token_file, os.environ)
        except TokenError as e:
            ap.error(str(e))
        if a.allow_commands and not token:
            ap.error(
                "--allow-commands over streamable-http needs a bearer token, on loopback too (any local process "
                "could otherwise run code as this user): set KPROF_MCP_TOKEN or pass --token-file"
            )
    if a.allow_commands:
        _check_workspace_for_commands(ap, a.workspace)
        _check_confinement(ap, a.unconfined_commands, a.commands_network)
    gpus = [g.strip() for g in a.gpus.split(",") if g.strip()] if a.gpus else None
    cluster = None
    if a.cluster:
        from .cluster import ClusterError, security_from

        try:
            cluster = {"address": a.cluster, "security": security_from(a.tls_ca, a.tls_cert, a.tls_key)}
        except ClusterError as e:
            ap.error(str(e))
    try:
        server = build_server(
            Config.from_options(a.workspace, a.kernels_dir, a.timeout, wait_s=a.wait, gpus=gpus),
            start_workers=cluster is None,
            pool=pool,
            cluster=cluster,
            allow_commands=a.allow_commands,
        )
    except KprofError as e:
        ap.error(str(e))
    if a.transport == "stdio":
        server.run("stdio")
        return
    app = http_app(server, a.host, a.port, token, a.allowed_host, a.allowed_origin)
    import uvicorn

    print(serving_line(a.host, a.port, token), file=sys.stderr, flush=True)  # one line, never wrapped
    uvicorn.run(app, host=a.host, port=a.port, log_level="warning", timeout_keep_alive=KEEP_ALIVE_S)


if __name__ == "__main__":
    main(sys.argv[1:])

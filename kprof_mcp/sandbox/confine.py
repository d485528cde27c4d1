"""How a child of the server is confined: its policy's file, private tmp and caches (the runner's side
of :mod:`kprof_mcp.sandbox`)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .. import safefs
from . import available
from .policy import KernelScope, command_policy, jobs_dir, kernel_policy, profiler_inside, write_policy


@dataclass(frozen=True)
class Confinement:
    """How a child is confined: the Landlock policy's file (None where Landlock is missing:
    supervised only), its private temporary directory and its caches' directory (None: inside
    the private tmp)."""

    policy_file: Path | None
    private_tmp: Path
    caches: Path | None = None
    profiler_inside: bool = False  # the runner wraps PREFIX child... as a whole (the profiler confined too)


def kernel_confinement(
    scope: KernelScope | None,
    prefix: list[str] | None = None,
    reads: list[str] | None = None,
    outputs: bool = True,
) -> Confinement | None:
    """How a kernel child of ``scope`` is confined (:func:`~kprof_mcp.sandbox.policy.kernel_policy`);
    None without a scope (the CLI) or without Landlock (it then runs unconfined, as before: the server
    refuses --allow-commands there unless --unconfined-commands). ``reads``: more directories it reads.
    Behind Nsight Compute the runner confines the profiler with the child (``wrap`` around
    ``PREFIX child...``): the policy grants the report's directory and, where safe, /proc. Behind a
    profiler not confined (:func:`~kprof_mcp.sandbox.policy.profiler_inside`: Nsight Systems for now,
    and where a job can have no mount namespace once it is) None: the child runs unconfined, as before.
    ``outputs=False`` (a child that describes packages): no write to the profiles' root, so that a
    package's code run while describing cannot touch a profile job's run directory while the server
    checks and writes it (issue 38, the fifth probe's P5-6c)."""
    if scope is None or not available() or (prefix and not profiler_inside(prefix)):
        return None
    scope.cache_dir.mkdir(parents=True, exist_ok=True)
    jobs = jobs_dir(scope)
    policy = kernel_policy(scope, jobs, prefix)
    if not outputs:  # describing a package writes no profile: the runs' directories are out of its reach
        policy.write.remove(str(scope.out_root))
    policy.read += reads or []  # e.g. the engine's scratch that holds the file a profiled child waits for
    if outputs and not _made(scope.workspace, scope.out_root):  # a planted link: the engine refuses it
        policy.write.remove(str(scope.out_root))
    return Confinement(write_policy(policy), jobs / "private", scope.cache_dir, bool(prefix))


def tmp_dir(scope: KernelScope | None, command: str) -> str | None:
    """Where a child's request and result live: a confined kernel child's jobs directory (the only
    temporary directory it may write), else the system's (None)."""
    if command == "command" or scope is None or not available():
        return None
    return str(jobs_dir(scope))


def command_confinement(
    request_json: str, tmp: Path, workspace: Path | None, prefix: list[str] | None
) -> Confinement:
    """The confinement of a user's command whose request and result live in ``tmp``: it writes
    there (its private tmp and caches below), in its working directory (not ``out/``, ``.git``, the
    devlogs) and in its mode's command runs under ``out/``; it reads the workspace. Without a
    workspace (`kprof run`) or without Landlock, it is only supervised (every descendant dies with it),
    a profiler with it: Nsight Compute profiles its own child only (``--target-processes
    application-only``), which must be the command, not the supervisor (with the supervisor between them
    the command's CUDA initialisation waited for ncu until the time limit, 2026-11-29)."""
    req = json.loads(request_json)
    cwd = Path(req.get("command_cwd") or os.getcwd())
    runs = Path(req["out_root"]) / str(req.get("mode") or "event") / "command"
    private = tmp / "private"
    private.mkdir()
    if workspace is None or not available():
        runs.mkdir(parents=True, exist_ok=True)
        return Confinement(None, private, None, bool(prefix))
    policy = command_policy(Path(workspace), cwd, runs, tmp, prefix, out_root=Path(req["out_root"]))
    if not _made(Path(workspace), runs):  # a link planted on the way (by a kernel child): nothing granted
        policy.write.remove(str(runs))
    return Confinement(write_policy(policy), private, None, profiler_inside(prefix))


def _made(workspace: Path, path: Path) -> bool:
    """``path`` made (or there) as a real directory: under the workspace without following a link
    (a link planted on the way grants nothing), elsewhere (the operator's own root) as it is."""
    try:
        if safefs.root_of(path, [workspace]) is not None:
            safefs.make_dirs(workspace, path)
        else:
            path.mkdir(parents=True, exist_ok=True)
        return True
    except (OSError, safefs.UnsafePath):
        return False

"""The engine as its parts see it, so that no part imports the facade: the arrows run one way,
``facade`` → the parts (``catalogue``, ``profile``, ``command``, ``run``, ``batch``, ``info``,
``calibrate``) → ``state``, ``specs``, ``config``.

A part's functions take the engine as an :class:`EngineState`: its configuration, its warm
workers, its cluster runner, what it recovered at start and its description cache. The
:class:`~kprof_mcp.engine.facade.Engine` is one (it passes itself); a test may pass any object
with these attributes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .. import runner, sandbox
from .config import Config

if TYPE_CHECKING:
    from ..warm import WorkerPool


class EngineState(Protocol):
    """What the engine's parts read of the engine."""

    config: Config
    pool: WorkerPool | None  # warm workers (kprof_mcp.warm), or None: a fresh process per child
    remote: Any  # a cluster.ClusterRunner once cluster.connect has set it: jobs run on Dask workers
    clock_recovery: list[str]  # the GPUs whose clocks were reset at start (clocks.recover)
    # Package descriptions (catalogue.PackageDescription) by (path, newest modification time).
    describe_cache: dict[tuple[str, float], Any]


def with_workers(engine: EngineState, control: runner.RunControl | None) -> runner.RunControl:
    """The caller's control (a new one if none) with this engine's warm workers."""
    control = control if control is not None else runner.RunControl()
    if control.pool is None:
        control.pool = engine.pool
    if engine.config.confine_modules:  # a user's command runs confined (kprof_mcp.sandbox)
        control.workspace = engine.config.workspace
        control.scope = kernel_scope(engine.config)  # and so do the children that import packages
    return control


def kernel_scope(config: Config) -> sandbox.KernelScope | None:
    """Where the server's kernel children may write and read (issue 38: a workspace package imported
    by profile_kernel runs under Landlock too); None for the CLI (``confine_modules`` off)."""
    if not config.confine_modules:
        return None
    return sandbox.KernelScope(config.workspace, Path(config.out_root), tuple(config.kernel_dirs))

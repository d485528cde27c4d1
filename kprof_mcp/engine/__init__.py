"""The engine: every capability of kprof-mcp as plain Python, with no MCP in it.

A profile goes validate → mode registry → device lock → runner → store → render:
:meth:`Engine.check_profile` checks every argument and runs the mode's preflight (nothing
starts); :meth:`Engine.run_checked` takes the device's lock, runs the child (wrapped in the
mode's profiler, if any), lets the mode complete the directory, computes the assessment once
and renders the contract and report from it, then gives the directory its final name.

The MCP server (``server.py``) and the CLI (``cli.py``) are thin layers over :class:`Engine`.
Expected failures raise :class:`KprofError` with a message that says what is wrong and what
is valid. Nothing here imports torch or triton: kernels are loaded and run in child processes.

The package's modules:

- ``facade``: :class:`Engine`, each public method its documentation and one delegation;
- ``config``: :class:`Config`, :class:`KprofError` and the argument checks requests share;
- ``state``: :class:`~.state.EngineState`, the engine as its parts see it (configuration, warm
  workers, cluster runner, description cache), and ``with_workers``: no part imports the facade;
- ``specs``: the checked requests (specs) and their outcomes; each spec has
  ``run(engine, on_progress, control)``, which :meth:`Engine.execute` calls;
- ``catalogue``: kernel packages, their descriptions and parameters, paths under the workspace;
- ``profile``: checking a kernel profile; ``command``: checking a user's command;
- ``run``: running a checked profile under the device's lock (preparation, profiled child,
  reports), and :func:`render_profile`;
- ``batch``: comparisons, sweeps and noise-floor measurements, checked and run;
- ``info``: the bottleneck classification, the development log and the device's description.
"""

from .catalogue import PackageDescription, PackageError
from .command import ALLOWED_MODULES
from .config import Config, KprofError
from .facade import Engine
from .run import Rendered, render_profile
from .specs import CompareOutcome, CompareSpec, ProfileOutcome, ProfileSpec, SweepOutcome, SweepSpec

__all__ = [
    "ALLOWED_MODULES",
    "CompareOutcome",
    "CompareSpec",
    "Config",
    "Engine",
    "KprofError",
    "PackageDescription",
    "PackageError",
    "ProfileOutcome",
    "ProfileSpec",
    "Rendered",
    "SweepOutcome",
    "SweepSpec",
    "render_profile",
]

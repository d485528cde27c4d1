"""The engine's configuration and its error type, with the argument checks every request shares."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import safefs


class KprofError(Exception):
    """An expected failure; the message is written for the caller to act on."""


@dataclass
class Config:
    workspace: Path = field(default_factory=lambda: Path(os.environ.get("KPROF_WORKSPACE", os.getcwd())))
    out_root: Path | None = None  # default: <workspace>/out/profiles
    kernel_dirs: list[Path] = field(
        default_factory=lambda: [
            Path(p) for p in os.environ.get("KPROF_KERNEL_PATH", "").split(os.pathsep) if p
        ]
    )
    timeout_s: float = float(os.environ.get("KPROF_TIMEOUT_S", "900"))
    # profile_kernel answers within this many seconds: the contract if done, else a job id
    # (clients commonly give up on a call after 60 s).
    wait_s: float = float(os.environ.get("KPROF_WAIT_S", "45"))
    gpus: list[str] | None = None  # GPU indices jobs may use (default: all visible)
    budget_ms: float | None = None  # per-stage timing budget; default by device kind
    force_cpu: bool = os.environ.get("KPROF_FORCE_CPU") == "1"
    # Warm workers (kprof_mcp.warm): one long-lived child per GPU, so re-profiles skip imports,
    # the CUDA context and the JIT of unchanged kernels. Off: a fresh process for every child.
    warm: bool = os.environ.get("KPROF_WARM", "1") != "0"
    # Jobs run on a Dask cluster's workers (kprof-mcp --cluster): the GPUs and profilers are theirs,
    # so a request is not checked against this machine's; each worker checks it (cluster.remote_job).
    remote_gpus: bool = False
    # python -m in a command: only modules under the working directory or ALLOWED_MODULES (with
    # their path arguments confined) for the server's profile_command, whose caller is an agent;
    # the CLI's `kprof run` turns it off (the user runs their own command; links are still refused).
    confine_modules: bool = True
    # Render each profile's contract and report.md when it finishes. A cluster worker's engine does
    # not: the server renders the profile it brings back, against its own baseline and siblings.
    render_profiles: bool = True

    @classmethod
    def from_options(
        cls,
        workspace: str | None = None,
        kernel_dirs: list[str] | None = None,
        timeout_s: float | None = None,
        force_cpu: bool = False,
        wait_s: float | None = None,
        gpus: list[str] | None = None,
    ) -> Config:
        """Build from command-line options; unset ones keep their environment/default values."""
        kwargs: dict[str, Any] = {}
        if workspace:
            kwargs["workspace"] = Path(workspace)
        if kernel_dirs:
            kwargs["kernel_dirs"] = [Path(d) for d in kernel_dirs]
        if timeout_s:
            kwargs["timeout_s"] = timeout_s
        if force_cpu:
            kwargs["force_cpu"] = True
        if wait_s is not None:
            kwargs["wait_s"] = wait_s
        if gpus:
            kwargs["gpus"] = gpus
        return cls(**kwargs)

    def __post_init__(self) -> None:
        self.workspace = Path(self.workspace).resolve()
        self.out_root = (
            Path(self.out_root).resolve() if self.out_root else self.workspace / "out" / "profiles"
        )
        self.kernel_dirs = [Path(p).resolve() for p in self.kernel_dirs]


def in_range(name: str, value: Any, lo: float, hi: float, what: str) -> None:
    """``value`` is None or a number from ``lo`` to ``hi``, else a KprofError saying so."""
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi
    ):
        raise KprofError(f"{name}={safefs.clip(value)}: give {what} from {lo} to {hi}")


def clock_control_arg(value: str) -> str:
    """A comparison's or sweep's ``clock_control``, checked: 'base' or 'none'."""
    if value not in ("base", "none"):
        raise KprofError(
            f"clock_control={safefs.clip(value)}: 'base' (default: the SM clock locked at the device's "
            "sustained clock for the timing, reset after) or 'none' (clocks free)"
        )
    return value

"""Without a GPU, `kprof` profiles a package at its CPU-sized defaults (issue 41): each parameter's
``cpu_default`` (``kprof_mcp.kernel.api``), for the parameters the user did not give, announced in
one line on stderr. What the user gives always wins. A profile's stages are timed for 1 s each there
(the engine's CPU budget, ``engine.profile.CPU_BUDGET_MS``, the MCP tools' too: a 3 s budget made a two-stage
plan and its whole-plan timing take 10 s of a 15 s profile), hundreds of runs at those sizes; CPU wall time says
nothing about a GPU anyway."""

from __future__ import annotations

import sys
from typing import Any

from ..engine import Engine
from ..engine.catalogue import cpu_sized_line


def cpu_sized(engine: Engine, kernel: str, given: set[str]) -> dict[str, Any]:
    """The package's CPU-sized defaults for the parameters not in ``given``, when jobs time on the CPU
    ({} on a GPU, on a cluster's GPUs, or for a kernel that is not found: the check says why)."""
    return engine.cpu_sized(kernel, given)


def _pairs(fills: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in fills.items())


def announce(fills: dict[str, Any]) -> None:
    """The one line that says which CPU-sized defaults a profile uses and how to change them."""
    if fills:
        print(cpu_sized_line(fills, "/".join(f"--{k}" for k in fills)), file=sys.stderr)


def announce_cases(fills: list[tuple[str, dict[str, Any]]]) -> None:
    """`kprof noise`'s line: each case's CPU-sized defaults (kernel, its fills)."""
    said = "; ".join(f"{kernel} {_pairs(f)}" for kernel, f in fills if f)
    if said:
        print(
            f"no GPU: CPU-sized defaults {said}; pass --case KERNEL:VERSION:NAME=VALUE,... to change",
            file=sys.stderr,
        )

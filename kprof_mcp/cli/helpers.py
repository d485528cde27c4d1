"""What the subcommands share: kernel parameters from the command line, JSON output, `kprof profile`'s
body and stage models."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..engine import Engine, KprofError
from .cpu_sized import announce, cpu_sized
from .heartbeat import Heartbeat


def _parse_kernel_params(extra: list[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    i = 0
    while i < len(extra):
        tok = extra[i]
        if not tok.startswith("--") or len(tok) < 3:
            raise KprofError(f"unexpected argument {tok!r}: kernel parameters are given as --name value")
        if "=" in tok:
            name, value = tok[2:].split("=", 1)
            i += 1
        else:
            if i + 1 >= len(extra):
                raise KprofError(f"parameter {tok} needs a value")
            name, value = tok[2:], extra[i + 1]
            i += 2
        params[name] = int(value) if value.lstrip("+-").isdigit() else value
    return params


def _clashes(engine: Engine, kernel: str, profile_parser: argparse.ArgumentParser) -> dict[str, str]:
    """Kernel parameters whose ``--name`` is also an option of ``kprof profile``."""
    options = {o for a in profile_parser._actions for o in a.option_strings}
    try:
        names = [p.name for p in engine.describe_package(kernel).params]
    except KprofError:
        return {}  # the profile call itself reports the unknown kernel
    return {n: f"--{n}" for n in names if f"--{n}" in options or f"--{n.replace('_', '-')}" in options}


def _params_with(extra: list[str], pairs: list[str]) -> dict[str, Any]:
    """Kernel parameters from ``--name value`` extras and ``--param NAME=VALUE`` options."""
    params = _parse_kernel_params(extra)
    for item in pairs:
        if "=" not in item:
            raise KprofError(f"--param {item!r}: give name=value")
        name, value = item.split("=", 1)
        params[name] = int(value) if value.lstrip("+-").isdigit() else value
    return params


def _print_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, default=str))


def _profile(engine: Engine, a: argparse.Namespace, extra: list[str], parser: argparse.ArgumentParser) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    params = _parse_kernel_params(extra)
    for item in a.param:
        if "=" not in item:
            raise KprofError(f"--param {item!r}: give name=value")
        name, value = item.split("=", 1)
        params[name] = int(value) if value.lstrip("+-").isdigit() else value
    clashes = _clashes(engine, a.kernel, parser)
    passed_as_option = {n for n in clashes if n not in params}
    if passed_as_option:
        # e.g. a kernel parameter "version": `--version 2` would set kprof's own --version.
        names = sorted(passed_as_option)
        raise KprofError(
            f"kernel {a.kernel!r} has parameter(s) {names} whose --name is also an option of "
            f"`kprof profile` ({', '.join(clashes[n] for n in names)}); pass them as "
            + " ".join(f"--param {n}=VALUE" for n in names)
            + " (the option keeps its own meaning)"
        )
    fills = cpu_sized(engine, a.kernel, set(params))  # without a GPU: what the user did not give
    spec = engine.check_profile(
        a.kernel,
        a.version,
        {**fills, **params},
        a.mode,
        a.baseline,
        a.timeout_s,
        a.ncu_launches,
        a.clock_control,
        a.timeline_iters,
        a.timeline_engine,
        a.allow_mismatch,
    )
    announce(fills)
    err = Console(stderr=True)
    with (
        Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            TimeElapsedColumn(),
            console=err,
            transient=True,
            disable=a.quiet,
        ) as prog,
        Heartbeat(f"profiling {a.kernel}", not a.quiet and not err.is_terminal) as beat,
    ):
        task = prog.add_task(f"profiling {a.kernel}", total=1.0)

        def on_progress(fraction: float, message: str) -> None:
            prog.update(task, completed=fraction, description=f"{a.kernel}: {message}")
            beat.update(fraction, f"{a.kernel}: {message}")

        outcome = engine.execute(spec, on_progress)
    if outcome.result.device.kind != "cuda":
        # soft_wrap: never broken at the console's width (80 columns when stderr is not a terminal)
        err.print(
            "[bold yellow]No GPU: CPU wall time (Triton kernels through its interpreter, torch on the CPU). The times "
            "say nothing about GPU performance.[/]",
            soft_wrap=True,
        )
    if a.json:
        _print_json(_profile_document(outcome, a.baseline))
    else:
        print(outcome.contract)
    print(f"profile_dir: {outcome.profile_dir}", file=sys.stderr)  # plain: a path is never wrapped
    return 0


def _profile_document(outcome: Any, baseline: str | None = None) -> dict[str, Any]:
    """`--json` of a profile: its directory, the summary profile_kernel returns, the full result."""
    from ..render.summary import profile_summary

    summary = profile_summary(
        outcome.result, outcome.assessment, profile_dir=str(outcome.profile_dir), baseline=baseline
    )
    return {
        "profile_dir": str(outcome.profile_dir),
        "summary": summary.model_dump(mode="json"),
        "result": outcome.result.model_dump(mode="json"),
    }


def _stage_models(specs: list[str]) -> dict[str, dict[str, Any]]:
    """``STAGE:flops=N,bytes=N,dtype=D,tc=1,int_ops=N`` options → profile_command's stage_models."""
    out: dict[str, dict[str, Any]] = {}
    for spec in specs:
        name, sep, rest = spec.partition(":")
        if not sep or not name:
            raise KprofError(f"--model {spec!r}: STAGE:flops=N,bytes=N[,dtype=D][,tc=1][,int_ops=N]")
        m: dict[str, Any] = {}
        for kv in filter(None, rest.split(",")):
            k, eq, v = kv.partition("=")
            if not eq:
                raise KprofError(f"--model {spec!r}: {kv!r} is not key=value")
            if k in ("flops", "bytes", "int_ops"):
                try:
                    m[k] = float(v)
                except ValueError:
                    raise KprofError(f"--model {spec!r}: {k}={v!r} is not a number") from None
            elif k == "dtype":
                m[k] = v
            elif k in ("tc", "tensor_cores"):
                m["tensor_cores"] = v.lower() in ("1", "true", "yes")
            else:
                raise KprofError(f"--model {spec!r}: unknown key {k!r} (flops, bytes, dtype, tc, int_ops)")
        out[name] = m
    return out

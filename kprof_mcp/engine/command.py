"""A user's command (``profile_command``): checking the argument vector, its working directory
and what it will run (workspace code, or an allowed tool whose paths stay in the workspace)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import safefs
from ..models import ProfileRequest, validation_message
from ..modes import DEFAULT_MODE, ModeError, ModeNotAvailable, get_mode, preflight_env
from ..tools import nvidia_smi
from .catalogue import confine, root_of, target_cpu
from .config import KprofError, in_range
from .specs import ProfileSpec
from .state import EngineState

# python -m MODULE runs a module under the working directory (as its file, by path), or one of
# these by name (pytest: its arguments by allow-list, capture.pytest_stages.allowed_args).
ALLOWED_MODULES = frozenset({"pytest"})


# What the profilers print around a run, not the command: Kineto's USDT probes ("USDT:<time> <pid>:<tid>
# SyncActivityProfilerHandler.cpp:52] profiler_start"). Kept in the profile's command.log.
PROFILER_NOISE = ("USDT:",)


def output_tail(log: str, lines: int = 30, chars: int = 4000) -> str:
    """The end of a command's output, without kprof's own progress lines and the profilers' noise."""
    from ..protocol import PROGRESS_PREFIX

    kept = [ln for ln in log.splitlines() if not ln.startswith((PROGRESS_PREFIX, *PROFILER_NOISE))]
    return "\n".join(kept[-lines:])[-chars:]


def check_command(
    engine: EngineState,
    command: list[str],
    cwd: str | None = None,
    mode: str = DEFAULT_MODE,
    include: list[str] | None = None,
    stage_models: dict[str, dict[str, Any]] | None = None,
    timeout_s: float | None = None,
    max_kernels: int = 200,
    clock_control: str = "base",
    timeline_engine: str = "auto",
    warmup_occurrences: int = 1,
    python_backtrace: bool = False,
) -> ProfileSpec:
    """See :meth:`Engine.check_command`."""
    try:
        mode_obj = get_mode(mode)
    except ModeNotAvailable as e:
        raise KprofError(str(e)) from None
    if not isinstance(command, list):
        raise KprofError(
            "command must be a list of strings (an argument vector, never a shell string), e.g. "
            "[\"python\", \"train.py\", \"--steps\", \"5\"]"
        )
    workdir = confine(engine, cwd or ".", "cwd")
    if safefs.kind(root_of(engine, workdir), workdir) != "dir":
        raise KprofError(f"cwd: {safefs.clip(cwd or '.')} is not a directory under the workspace")
    check_command_targets(engine, command, workdir)
    in_range("timeout_s", timeout_s, 1, 86400, "seconds")
    include = list(include or [])
    if len(include) > 32 or not all(isinstance(p, str) and p and len(p) <= 200 for p in include):
        raise KprofError("include: at most 32 non-empty range-name patterns (fnmatch: 'forward', 'layer*')")
    models = {}
    for name, m in (stage_models or {}).items():
        if not isinstance(m, dict) or set(m) - {"flops", "bytes", "dtype", "tensor_cores", "int_ops"}:
            raise KprofError(
                f"stage_models[{safefs.clip(name)}]: give {{\"flops\": N, \"bytes\": N, \"dtype\": "
                "\"bfloat16\", \"tensor_cores\": true}} (FLOPs and bytes of one occurrence of the "
                "range; \"int_ops\": N, the integer and logic operations its work needs, where it is integer work)"
            )
        for k in ("flops", "bytes", "int_ops"):
            v = m.get(k) if m.get(k) is not None else 0  # int_ops: None states none (as absent)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < 1e18:
                raise KprofError(f"stage_models[{safefs.clip(name)}].{k}={safefs.clip(v)}: a number ≥ 0")
        models[str(name)] = dict(m)
    cpu = target_cpu(engine)
    try:  # the mode's options and the shared fields, checked by the request's models
        req = ProfileRequest(
            kernel="command",
            kernel_source=str(workdir),
            version="command",
            params={},
            mode=mode,
            out_root=str(engine.config.out_root),
            force_cpu=engine.config.force_cpu,
            max_kernels=max_kernels,
            clock_control=clock_control,
            timeline_engine=timeline_engine,
            command=list(command),
            command_cwd=str(workdir),
            include=include,
            stage_models=models,
            warmup_occurrences=warmup_occurrences,
            python_backtrace=python_backtrace,
            command_root=str(engine.config.workspace) if engine.config.confine_modules else None,
        )
    except ValidationError as e:
        raise KprofError(validation_message(e)) from None
    try:
        req = req.with_options(
            **mode_obj.preflight(preflight_env(req, cpu, engine.config.force_cpu, nvidia_smi.gpus()))
        )
    except ModeError as e:
        raise KprofError(str(e)) from None
    return ProfileSpec(
        req=req,
        base=None,
        source=workdir,
        cpu=cpu,
        stages=[],
        timeout=float(timeout_s or engine.config.timeout_s),
    )


def check_command_targets(engine: EngineState, command: list[str], workdir: Path) -> None:
    """What the command will run is workspace code: a script under the workspace, a module
    that resolves to a file under the working directory, or an allowed tool (pytest) whose
    path arguments stay in the workspace. No link on the way to any of them. Checked when the
    request comes and again right before it runs."""
    from ..capture.recording import parse_argv

    try:
        kind, target, rest = parse_argv(command)
    except ValueError as e:
        raise KprofError(str(e)) from None
    if kind == "path":
        where = target if Path(target).is_absolute() else str(workdir / target)
        if safefs.root_of(where, [engine.config.workspace]) is None:
            raise KprofError(
                f"script: {safefs.clip(target)} is outside the workspace {engine.config.workspace}; the "
                "script a command runs must lie under the workspace: move it there, or make a directory "
                "that holds it the workspace (--workspace DIR)"
            )
        script = confine(engine, where, "script")
        try:
            safefs.check_file(root_of(engine, script), script)
        except safefs.UnsafePath as e:
            raise KprofError(f"script: {e} (paths are relative to cwd)") from None
        return
    module = _workspace_module(engine, target, workdir)
    if module is not None:
        return
    if not engine.config.confine_modules:
        import importlib.util

        if importlib.util.find_spec(target.split(".")[0]) is None:
            raise KprofError(
                f"module {safefs.clip(target)} not found: neither installed nor in cwd ({workdir})"
            )
        return
    if target not in ALLOWED_MODULES:
        raise KprofError(
            f"module {safefs.clip(target)}: python -m runs only a module under the working directory "
            f"(its file under the workspace, e.g. pkg/train.py for pkg.train) or one of "
            f"{sorted(ALLOWED_MODULES)}; for other code, write a script in the workspace that calls it"
        )
    _check_pytest(engine, rest, workdir)


def _workspace_module(engine: EngineState, target: str, workdir: Path) -> Path | None:
    """The file ``python -m target`` runs when it lies under the working directory (which is
    first on sys.path): ``a/b.py`` or ``a/b/__main__.py`` for ``a.b``; None when it is not there."""
    names = target.split(".")
    if not all(n.isidentifier() for n in names):
        raise KprofError(f"module {safefs.clip(target)} is not a dotted module name")
    base = workdir.joinpath(*names)
    root = root_of(engine, workdir)
    for candidate in (base.with_name(names[-1] + ".py"), base / "__main__.py"):
        try:
            k = safefs.kind(root, candidate)
        except safefs.UnsafePath as e:
            raise KprofError(f"module {safefs.clip(target)}: {e}") from None
        if k == "link":
            raise KprofError(
                f"module {safefs.clip(target)}: {candidate.relative_to(root)} is a symbolic link; "
                "kprof runs only real files under the workspace"
            )
        if k == "file":
            return candidate
    top = workdir / names[0]
    if safefs.kind(root, top) != "missing" or safefs.kind(root, top.with_name(names[0] + ".py")) != "missing":
        raise KprofError(
            f"module {safefs.clip(target)}: {names[0]} is in the working directory but "
            f"{'/'.join(names)}.py (or its __main__.py) is not"
        )
    return None


def _check_pytest(engine: EngineState, args: list[str], workdir: Path) -> None:
    """A confined pytest's arguments: the allow-list (:func:`~kprof_mcp.capture.pytest_stages.allowed_args`),
    each test path a .py file or a directory under the workspace reached with no link, nothing it
    (or the working directory it collects without one) would load through a link leading out, and
    the workspace's own ini (the one kprof passes with -c) no link."""
    from ..capture.pytest_stages import allowed_args, link_out, workspace_ini

    try:
        paths = allowed_args(args)
    except ValueError as e:
        raise KprofError(str(e)) from None
    ws = engine.config.workspace
    for path in paths:
        if path.startswith("~"):
            raise KprofError(f"pytest argument {safefs.clip(path)}: '~' paths are outside the workspace")
        p = confine(engine, path if Path(path).is_absolute() else str(workdir / path), "pytest test path")
        if safefs.root_of(p, [ws]) is None:
            raise KprofError(f"pytest test path {safefs.clip(path)} is outside the workspace {ws}")
        k = safefs.kind(ws, p)
        if k not in ("dir", "missing") and not (k == "file" and p.suffix == ".py"):
            raise KprofError(
                f"pytest test path {safefs.clip(path)}: give a test file (.py) or a directory; pytest would "
                "run other files (.txt, .rst, .md) as doctests"
            )
    for path in paths or ["."]:
        where = link_out(ws, confine(engine, str(workdir / path), "pytest test path"), walk=bool(paths))
        if where:
            raise KprofError(
                f"pytest test path {safefs.clip(path)}: {where}; kprof collects only real files under the "
                "workspace, never through a link leading out of it"
            )
    try:
        workspace_ini(ws, workdir)
    except safefs.UnsafePath as e:
        raise KprofError(f"pytest's ini: {e}") from None

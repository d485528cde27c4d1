"""Kernel packages and paths: finding and describing packages (:class:`PackageDescription`),
checking parameters against a package's description, and confining every path a caller gives to
the workspace."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import runner, safefs, store
from ..kernel.api import NAME_RE, Param, ParamError
from ..models import ProfileResult
from ..packages import KernelNotFound, available, check_package, package_roots, resolve
from ..tools import nvidia_smi
from .config import KprofError
from .state import EngineState, kernel_scope


# ------------------------------------------------------------------ descriptions
class ParamDescription(BaseModel):
    """One parameter of a package: its default, bounds or choices (``kernel.api.Param.describe``)."""

    model_config = ConfigDict(frozen=True)
    name: str
    default: bool | int | float | str
    min: int | float | None = None
    max: int | float | None = None
    choices: list[bool | int | float | str] | None = None
    doc: str = ""
    # the default without a GPU, which `kprof` uses there (kernel.api's module doc); not in to_dict()
    cpu_default: bool | int | float | str | None = Field(default=None, exclude=True)


class StageDescription(BaseModel):
    """One named stage of a version's plan."""

    model_config = ConfigDict(frozen=True)
    name: str
    tensor_cores: bool = False


class VersionDescription(BaseModel):
    """One version of a package: its docstring, plan kind and stages."""

    model_config = ConfigDict(frozen=True)
    name: str
    doc: str
    plan_kind: str
    stages: list[StageDescription]


class PackageDescription(BaseModel):
    """A kernel package as the ``describe`` child reports it (``KernelPackage.describe`` plus the
    resolved ``source``); :meth:`to_dict` is that report, key for key."""

    model_config = ConfigDict(frozen=True)
    name: str
    description: str = ""
    params: list[ParamDescription]
    versions: list[VersionDescription]
    source: str

    def version_names(self) -> list[str]:
        return [v.name for v in self.versions]

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()


@dataclass(frozen=True)
class PackageError:
    """A package that is listed but failed to load (or to be described)."""

    name: str
    source: str
    error: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "error": self.error, "params": [], "versions": []}


# ------------------------------------------------------------------ kernels
def kernel_dirs(engine: EngineState) -> list[Path]:
    """Where plain kernel names are looked up besides the built-ins: the operator's kernel
    directories, then the workspace's own ``kernels/`` (where ``kprof init`` puts a package) when
    it is a real directory. That one lies under the workspace, which is a package root anyway:
    finding packages there by name allows nothing a path could not already reach."""
    dirs = list(engine.config.kernel_dirs)
    own = engine.config.workspace / "kernels"
    if own not in dirs and not own.is_symlink() and own.is_dir():
        dirs.append(own)
    return dirs


def target_cpu(engine: EngineState) -> bool:
    """Whether jobs will time on the CPU: forced, or no GPU here (a cluster's workers have theirs)."""
    return engine.config.force_cpu or (not engine.config.remote_gpus and not nvidia_smi.gpu_present())


def cpu_sized(engine: EngineState, kernel: str, given: set[str]) -> dict[str, Any]:
    """Without a GPU (issue 41): the package's ``cpu_default`` of each parameter not in ``given``
    that differs from its default ({} on a GPU, on a cluster's GPUs, or for a kernel that is not
    found: the request's own check says why). What the caller gives always wins."""
    if not target_cpu(engine):
        return {}
    try:
        desc = describe_package(engine, kernel)
    except KprofError:
        return {}
    return {
        p.name: p.cpu_default
        for p in desc.params
        if p.cpu_default is not None and p.name not in given and p.cpu_default != p.default
    }


def cpu_sized_line(fills: dict[str, Any], change: str) -> str:
    """The one line that says which CPU-sized defaults a profile uses and how to change them
    (``change``: how this interface passes a parameter, e.g. ``--n/--dtype``)."""
    pairs = ", ".join(f"{k}={v}" for k, v in fills.items())
    return f"no GPU: CPU-sized defaults {pairs}; pass {change} to change"


def checked_package(engine: EngineState, source: Path) -> Path:
    """No link on the way to the package or inside it (checked again right before each load)."""
    try:
        return check_package(Path(source), package_roots(engine.config.workspace, kernel_dirs(engine)))
    except KernelNotFound as e:
        raise KprofError(str(e)) from None


def describe(engine: EngineState, source: Path) -> PackageDescription:
    """The description of the package at ``source`` (versions, parameters, stages), asked of a
    child once per package state (cached by path and newest modification time)."""
    checked_package(engine, source)
    mtime = max(
        (p.stat().st_mtime for p in ([source] if source.is_file() else source.rglob("*.py"))), default=0.0
    )
    key = (str(source), mtime)
    if key not in engine.describe_cache:
        try:
            engine.describe_cache[key] = PackageDescription.model_validate(
                runner.describe(source, pool=engine.pool, scope=kernel_scope(engine.config))
            )
        except runner.WorkerError as e:
            raise KprofError(str(e)) from None
        except ValidationError as e:  # a package's child printed a description of another shape (P6-6)
            raise KprofError(
                f"kernel package {source} described itself in a shape kprof does not know "
                f"({e.error_count()} problem(s), first: {e.errors()[0]['msg']}); is its import printing JSON?"
            ) from None
        finally:
            if engine.pool is not None:
                engine.pool.replenish()
    return engine.describe_cache[key]


def resolve_kernel(engine: EngineState, kernel: str) -> Path:
    """See :meth:`Engine.resolve_kernel`."""
    if not isinstance(kernel, str) or not kernel.strip():
        raise KprofError("kernel must be a non-empty name or path")
    kernel = kernel.strip()
    try:
        return resolve(kernel, engine.config.workspace, kernel_dirs(engine))
    except KernelNotFound as e:
        if not (NAME_RE.match(kernel) and str(e).startswith("unknown kernel")):
            raise KprofError(str(e)) from None
        # A package is also found by its KernelPackage.name (what `kprof list` and list_kernels
        # show), which may differ from its file or directory name.
        named = [p for p in packages(engine) if isinstance(p, PackageDescription) and p.name == kernel]
        if len(named) == 1:
            return checked_package(engine, Path(named[0].source))
        if named:
            raise KprofError(
                f"kernel {kernel!r} is the name of {len(named)} packages ({[p.source for p in named]}); "
                "give the one you mean by its path or file name"
            ) from None
        stems = available(kernel_dirs(engine))
        names = sorted(set(stems) | {p.name for p in packages(engine)})
        raise KprofError(
            f"unknown kernel {kernel!r}; valid names: {names} "
            "(or give a path to a kernel package directory or .py file inside the workspace)"
        ) from None


def packages(engine: EngineState) -> list[PackageDescription | PackageError]:
    """See :meth:`Engine.packages`."""
    out: list[PackageDescription | PackageError] = []
    for name, path in available(kernel_dirs(engine)).items():
        try:
            out.append(describe(engine, path))
        except KprofError as e:
            out.append(PackageError(name=name, source=str(path), error=str(e)))
    return out


def describe_package(engine: EngineState, kernel: str) -> PackageDescription:
    """See :meth:`Engine.describe_package`."""
    return describe(engine, resolve_kernel(engine, kernel))


# ------------------------------------------------------------------ validation
def validate_params(desc: PackageDescription, params: dict[str, Any] | None) -> dict[str, Any]:
    """See :meth:`Engine.validate_params`."""
    specs = {
        p.name: Param(p.name, p.default, p.min, p.max, tuple(p.choices) if p.choices else None)
        for p in desc.params
    }
    params = dict(params or {})
    unknown = sorted(set(params) - set(specs))
    valid = ", ".join(f"{n} {s.range_text()} (default {s.default})" for n, s in specs.items())
    if unknown:
        raise KprofError(
            f"unknown parameter(s) {safefs.clip(unknown)} for kernel {desc.name!r}; valid: {valid}"
        )
    try:
        return {n: s.validate(params.get(n, s.default)) for n, s in specs.items()}
    except ParamError as e:
        raise KprofError(f"{str(e).rstrip('.')}. Parameters of {desc.name!r}: {valid}") from None


# ------------------------------------------------------------------ paths
def root_of(engine: EngineState, p: Path) -> Path:
    """See :meth:`Engine.root_of`."""
    root = safefs.root_of(p, [engine.config.workspace, engine.config.out_root])
    if root is None:
        raise KprofError(f"{p} is outside the workspace")
    return root


def confine(engine: EngineState, path: str, what: str) -> Path:
    """See :meth:`Engine.confine`."""
    if not isinstance(path, str) or not path or "\x00" in path:
        raise KprofError(f"{what}: a non-empty path is required")
    ws = engine.config.workspace
    root = safefs.root_of(path, [ws, engine.config.out_root])
    if root is None:
        raise KprofError(
            f"{what}: {safefs.clip(path)} is outside the workspace {ws}; only paths under the "
            "workspace can be used (relative paths are taken from the workspace)"
        )
    parts = safefs.parts_under(root, path)
    p = Path(root, *parts)
    try:
        k = safefs.kind(root, p)
    except safefs.UnsafePath as e:
        raise KprofError(f"{what}: {e}") from None
    if k == "link":
        raise KprofError(
            f"{what}: {safefs.clip('/'.join(parts))} is a symbolic link: kprof reads, writes and runs "
            "only real files and directories under the workspace, never through a link"
        )
    return p


def checked_profile_dir(engine: EngineState, path: str, what: str) -> Path:
    """A finished profile's directory under the workspace (a file in it names the directory),
    never a link, never an unfinished ``*.partial`` one."""
    p = confine(engine, path, what)
    root = root_of(engine, p)
    try:
        k = safefs.kind(root, p)
        if k == "file" and p.name in ("params.json", "result.json", "report.md"):
            p, k = p.parent, "dir"
    except safefs.UnsafePath as e:
        raise KprofError(f"{what}: {e}") from None
    if k != "dir":
        raise KprofError(
            f"{what}: {safefs.clip(path)} is not a directory (give a profile_dir returned by profile_kernel)"
        )
    if p.name.endswith(".partial"):
        raise KprofError(f"{what}: {p} is an unfinished profile (the run failed or is still running)")
    return p


def load_result(engine: EngineState, profile_dir: str, what: str = "profile_dir") -> ProfileResult:
    """See :meth:`Engine.load_result`."""
    try:
        p = checked_profile_dir(engine, profile_dir, what)
        return store.load_result(p, what, root=root_of(engine, p))
    except store.StoreError as e:
        raise KprofError(str(e)) from None


def read_params(engine: EngineState, profile_dir: str) -> dict[str, Any]:
    """See :meth:`Engine.read_params`."""
    try:
        p = checked_profile_dir(engine, profile_dir, "profile_dir")
        return store.read_params(p, root=root_of(engine, p))
    except store.StoreError as e:
        raise KprofError(str(e)) from None

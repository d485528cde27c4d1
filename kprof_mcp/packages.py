"""Finding and loading kernel packages: the built-ins in ``kernels/`` and users' own.

A kernel is named either by a plain name (a built-in, or a package in one of the extra
kernel directories) or by a path to a package directory / ``.py`` file. Paths are resolved
(symlinks included) and must stay inside the workspace or an extra kernel directory.

Loading executes the package module, so the server never does it in its own process: it
asks ``python -m kprof_mcp.child describe`` (see :mod:`kprof_mcp.engine`).

A warm worker (:mod:`kprof_mcp.child.serve`) loads packages many times in one process:
:func:`load` remembers the files each package imported (its own modules, and any helper module
from outside the Python installation it pulled in) with their sizes and modification times, and
when any of them changed it drops all of those modules (and their bytecode caches) and imports
the package again, so an edited kernel is never run from a stale module.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import sysconfig
from importlib.machinery import PathFinder
from pathlib import Path
from types import ModuleType

from . import safefs
from .kernel.api import NAME_RE, KernelPackage


class KernelNotFound(LookupError):
    pass


def builtin_kernels_dir() -> Path:
    """The ``kernels/`` directory shipped with kprof-mcp (located without importing it)."""
    spec = PathFinder.find_spec("kernels", [str(Path(__file__).resolve().parent.parent)] + sys.path)
    if spec is None or not spec.submodule_search_locations:
        raise KernelNotFound("the built-in kernels/ package is not installed beside kprof_mcp")
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def _candidates(directory: Path) -> dict[str, Path]:
    """Packages directly in ``directory`` (links to packages are left out; a package with links
    inside is listed and refused with the reason when used: see :func:`check_package`)."""
    out: dict[str, Path] = {}
    if not directory.is_dir():
        return out
    for p in sorted(directory.iterdir()):
        if p.name.startswith(("_", ".")) or p.is_symlink():
            continue
        if (
            p.is_dir()
            and NAME_RE.match(p.name)
            and safefs.kind(directory, p / "__init__.py") in ("file", "link")
        ):
            out[p.name] = p
        elif p.is_file() and p.suffix == ".py" and NAME_RE.match(p.stem):
            out[p.stem] = p
    return out


def available(extra_dirs: list[Path] | None = None) -> dict[str, Path]:
    """Plain name -> package path, built-ins first; an extra directory cannot shadow a built-in."""
    found = _candidates(builtin_kernels_dir())
    for d in extra_dirs or []:
        for name, path in _candidates(Path(d)).items():
            found.setdefault(name, path)
    return found


def package_roots(workspace: Path, extra_dirs: list[Path] | None = None) -> list[Path]:
    """Where packages may live: the workspace, the built-ins and the operator's kernel directories."""
    return [Path(workspace), builtin_kernels_dir(), *[Path(d) for d in extra_dirs or []]]


def check_package(path: Path, roots: list[Path]) -> Path:
    """``path`` lies lexically under one of ``roots``, no component below that root is a link, and
    nothing inside the package is a link: the files imported are the files under the root. Run at
    request time and again right before the package is loaded."""
    root = safefs.root_of(path, roots)
    if root is None:
        raise KernelNotFound(
            f"kernel path {safefs.clip(str(path))} is outside the allowed roots "
            f"{[str(r) for r in roots]}; copy the package into the workspace or start the server "
            "with --kernels-dir pointing at its directory"
        )
    try:
        return safefs.check_tree(root, path)
    except safefs.UnsafePath as e:
        raise KernelNotFound(f"kernel package: {e}") from None


def resolve(kernel: str, workspace: Path, extra_dirs: list[Path] | None = None) -> Path:
    """Turn what the caller gave (name or path) into a package path, or raise with what is valid.
    A path is taken lexically (relative to the workspace) and must reach a real package through
    real directories: no symbolic link on the way or inside it."""
    extra_dirs = [Path(d).resolve() for d in (extra_dirs or [])]
    if NAME_RE.match(kernel) and "/" not in kernel and not kernel.endswith(".py"):
        names = available(extra_dirs)
        if kernel in names:
            return check_package(names[kernel], package_roots(Path(workspace), extra_dirs))
        raise KernelNotFound(
            f"unknown kernel {kernel!r}; valid names: {sorted(names)} "
            "(or give a path to a kernel package directory or .py file inside the workspace)"
        )
    if "\x00" in kernel:
        raise KernelNotFound("kernel path contains a NUL byte")
    roots = package_roots(Path(workspace), extra_dirs)
    raw = Path(kernel)
    path = Path(os.path.normpath(raw if raw.is_absolute() else Path(workspace) / raw))
    root = safefs.root_of(path, roots)
    if root is None:
        check_package(path, roots)  # raises with the allowed roots
    try:
        kind = safefs.kind(root, path)
        if kind == "dir":
            kind = "package" if safefs.kind(root, path / "__init__.py") in ("file", "link") else "dir"
    except safefs.UnsafePath as e:
        raise KernelNotFound(f"kernel: {e}") from None
    if kind == "link":
        raise KernelNotFound(
            f"kernel {safefs.clip(kernel)} is a symbolic link: kprof loads packages only from "
            "real files under the workspace (replace the link with the package itself)"
        )
    if kind == "package" or (kind == "file" and path.suffix == ".py"):
        return check_package(path, roots)
    raise KernelNotFound(
        f"{safefs.clip(kernel)} is neither a known kernel name nor a kernel package (a directory with "
        f"__init__.py, or a .py file) under the workspace"
    )


# resolved package path -> {module name: (file, mtime_ns, size)} of what loading it imported
_LOADED: dict[str, dict[str, tuple[str, int, int]]] = {}


def _stat(file: str) -> tuple[str, int, int]:
    try:
        st = os.stat(file)
        return (file, st.st_mtime_ns, st.st_size)
    except OSError:
        return (file, -1, -1)


def _installed_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")} | {
        sys.prefix,
        sys.base_prefix,
    }
    roots.add(str(Path(__file__).resolve().parent))  # kprof_mcp itself
    return tuple(str(Path(r).resolve()) + os.sep for r in roots if r)


def _own_modules(path: Path, before: set[str]) -> dict[str, tuple[str, int, int]]:
    """Modules that loading ``path`` added to sys.modules and that live outside the Python
    installation: the package's files and its local helpers."""
    installed = _installed_roots()
    out = {}
    for name in set(sys.modules) - before:
        file = getattr(sys.modules.get(name), "__file__", None)
        if not file:
            continue
        file = str(Path(file).resolve())
        if not file.startswith(installed):
            out[name] = _stat(file)
    return out


def _package_files(path: Path) -> list[str]:
    return [str(path)] if path.is_file() else sorted(str(p) for p in path.rglob("*.py"))


def _changed(path: Path, seen: dict[str, tuple[str, int, int]]) -> bool:
    if any(_stat(rec[0]) != rec for rec in seen.values()):
        return True
    files = {rec[0] for rec in seen.values()}
    return any(f not in files for f in _package_files(path))  # a new file in the package


def _purge(seen: dict[str, tuple[str, int, int]]) -> None:
    for name, (file, _, _) in seen.items():
        sys.modules.pop(name, None)
        try:  # a bytecode cache written in the same second as an edit of equal size would look current
            os.remove(importlib.util.cache_from_source(file))
        except (OSError, ValueError, NotImplementedError):
            pass
    importlib.invalidate_caches()


def load(path: Path) -> KernelPackage:
    """Import the package at ``path`` and return its ``KERNEL`` (runs user code: child process only).
    Loaded again in the same process, it is re-imported when any of its files changed."""
    path = Path(path).resolve()
    seen = _LOADED.get(str(path))
    if seen is not None and _changed(path, seen):
        _purge(seen)
        del _LOADED[str(path)]
    before = set(sys.modules)
    builtin = builtin_kernels_dir()
    if path.parent == builtin and path.is_dir():
        module = importlib.import_module(f"kernels.{path.name}")
    else:
        module = _import_path(path)
    if str(path) not in _LOADED:
        own = _own_modules(path, before)
        own.pop("kernels", None)  # the built-ins' namespace holder, shared by all of them
        # the package's own modules, also when an earlier load (describe) had imported them
        files = set(_package_files(path))
        for name, m in list(sys.modules.items()):
            file = getattr(m, "__file__", None)
            if file and name not in own and str(Path(file).resolve()) in files:
                own[name] = _stat(str(Path(file).resolve()))
        _LOADED[str(path)] = own
    kernel = getattr(module, "KERNEL", None)
    if not isinstance(kernel, KernelPackage):
        raise KernelNotFound(
            f"{path} defines no KERNEL = KernelPackage(...) (see kprof_mcp.kernel for the contract)"
        )
    return kernel


def _import_path(path: Path) -> ModuleType:
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    if path.is_dir():
        name = f"kprof_user_{path.name}_{digest}"
        spec = importlib.util.spec_from_file_location(
            name, path / "__init__.py", submodule_search_locations=[str(path)]
        )
    else:
        name = f"kprof_user_{path.stem}_{digest}"
        spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise KernelNotFound(f"cannot import {path}")
    if name in sys.modules:
        return sys.modules[name]
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

"""What the server's own unconfined processes load or run (issue 38, the tenth probe's P10-1): a command may
write its working directory, by default the workspace root; where the server's interpreter, its venv,
kprof's source, a directory on its ``sys.path``/``PYTHONPATH``, ``PATH`` or ``LD_LIBRARY_PATH`` lies in
the workspace (README's quick start runs ``.venv/bin/kprof-mcp --workspace .`` from the checkout; a
project's own ``.venv`` may hold kprof-mcp), a job could write a ``.pth``, a ``sitecustomize.py``, an
``nvidia-smi`` or a line of ``kprof_mcp/lifeline.py`` there, and the next unconfined supervisor
(``python -P -m kprof_mcp.sandbox``), the server's own preflight (``nvidia-smi``) or a module the server
imports later would run it. None of them is writable to a job (:func:`protected_paths`). A directory of
them that is the command's working directory or holds it (the server started from the workspace with
``python -m``: ``sys.path[0]``) is *sealed* instead: nothing can be created in it, and its existing
``.pth``, ``sitecustomize.py`` and ``usercustomize.py`` files (which Python runs at start-up) are not
writable; its other entries stay the command's."""

from __future__ import annotations

import os
import sys
from pathlib import Path

_ENV_PATHS = ("PATH", "PYTHONPATH", "LD_LIBRARY_PATH", "LD_PRELOAD")
# Executables the server runs itself, unconfined (their versions, listings, reports' import), chosen by
# an environment variable or found on PATH: each one's directory and the one above it (its install
# root: nsys in <root>/bin or <root>/host/target-linux-x64 loads its libraries from there) are the
# server's too (the tenth probe's P10-1d: KPROF_NSYS naming a copy in the workspace, rewritten by a
# command, then run by device_info).
_TOOL_ENV = ("KPROF_NSYS", "KPROF_NCU")
_TOOLS = ("nvidia-smi", "ncu", "nsys", "cuobjdump", "nvdisasm", "ldd")
_STARTUP = ("sitecustomize.py", "usercustomize.py")  # and *.pth: what site runs in a sys.path directory


def _resolved(p: str | Path) -> Path | None:
    try:
        return Path(p).resolve() if str(p) else Path.cwd().resolve()  # "" on a path list: the working dir
    except (OSError, RuntimeError):
        return None


def self_paths(env: dict[str, str] | None = None) -> list[Path]:
    """Every directory (or file) whose contents the server's own processes load or execute: its
    interpreter and prefixes (the venv), the directories on its ``sys.path``, kprof's package, and the
    entries of ``PATH``, ``PYTHONPATH``, ``LD_LIBRARY_PATH`` and ``LD_PRELOAD`` in ``env`` (the server's
    environment, which its supervisors and tools inherit), and the install directories of the tools it
    runs (:data:`_TOOL_ENV`, :data:`_TOOLS`). Resolved, without duplicates."""
    env = os.environ if env is None else env
    found: list[str | Path] = [
        sys.prefix,
        sys.exec_prefix,
        sys.base_prefix,
        Path(sys.executable).parent,
        Path(__file__).resolve().parents[1],  # kprof_mcp itself (an editable install's source too)
        *[p for p in sys.path if p],
    ]
    import shutil

    tools = [env.get(name, "") for name in _TOOL_ENV]
    tools += [shutil.which(t, path=env.get("PATH")) or "" for t in _TOOLS]
    for t in filter(None, tools):
        exe = _resolved(t)
        for where in (Path(t).parent, Path(t).parent.parent) + (
            (exe.parent, exe.parent.parent) if exe else ()
        ):
            found.append(where)
    # kprof's own cache (its device locks and holders, SASS listings, ncu's cache, the confined caches)
    # and lock directory: the server writes and reads them (the tenth probe's P10-1e: with XDG_CACHE_HOME
    # in the project, a command swapped locks/cpu.holder for a link and the server wrote through it)
    cache = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kprof-mcp"
    found += [cache, *([env["KPROF_LOCK_DIR"]] if env.get("KPROF_LOCK_DIR") else [])]
    for name in _ENV_PATHS:
        sep = " " if name == "LD_PRELOAD" else os.pathsep
        found += [p for p in env.get(name, "").replace(":", sep).split(sep) if p or name != "LD_PRELOAD"]
    out: list[Path] = []
    for p in found:
        r = _resolved(p)
        if r is not None and r not in out:
            out.append(r)
    return out


def _in_spelling(p: Path, workspace: Path, real: Path) -> Path:
    """``p`` (resolved, beneath ``real``, the workspace resolved) as a path beneath ``workspace`` as the
    caller spells it (the grants compare paths as written)."""
    return workspace / p.relative_to(real)


def protected_paths(workspace: Path, out_root: Path) -> tuple[list[Path], list[Path]]:
    """What a command never writes even when its working directory holds it: the workspace's ``out/``
    (every profile, baseline and calibration), the profiles' root, ``.git``, the devlogs, and every
    path of the server's own beneath the workspace (:func:`self_paths`); and the directories *sealed*
    (nothing created in them, their start-up files kept): the server's paths that are the workspace
    or hold it."""
    protected = [workspace / "out", out_root, workspace / ".git", workspace / "docs" / "kernels"]
    sealed: list[Path] = []
    real = _resolved(workspace) or workspace
    for p in self_paths():
        if p == real or p in real.parents:
            sealed.append(workspace)
        elif real in p.parents:
            protected.append(_in_spelling(p, workspace, real))
    return protected, sealed


def writable_under(root: Path, protected: list[Path], sealed: list[Path] | tuple = ()) -> list[str]:
    """Write grants covering ``root`` except every protected path beneath it. Landlock's rules are
    allow-lists over whole hierarchies, so a directory holding a protected path, or sealed, is granted
    entry by entry (its other files and directories, links and a sealed one's start-up files left
    out): nothing can be created in it. Nothing where ``root`` is protected or beneath a protected path."""
    if any(p == root or p in root.parents for p in protected):
        return []
    inside = [p for p in protected if root in p.parents]
    if not inside and root not in sealed:
        return [str(root)]
    grants: list[str] = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    for e in entries:
        p = Path(e.path)
        if p in inside or e.is_symlink():
            continue
        if root in sealed and (e.name in _STARTUP or e.name.endswith(".pth")):
            continue
        if any(p in q.parents for q in inside):
            if e.is_dir(follow_symlinks=False):
                grants += writable_under(p, inside)
            continue
        grants.append(str(p))
    return grants

"""What a command's child runs (issue 38): exactly the file that was checked.

``python script.py`` and ``python -m pkg.mod`` (whose file lies under the working directory) run
as their file, by path: read once here, every component opened without following a link, and
what was read compiled and run as ``__main__`` — a script swapped for a link after the server's
last check is refused, never run, and a workspace ``timeit.py`` is what ``python -m timeit`` runs
(:func:`runpy.run_module` would run the standard library's, already imported in this process).
``runpy``'s own ``_run_module_code`` sets ``__main__``'s globals, as ``run_path``/``run_module`` do.
"""

from __future__ import annotations

import importlib
import os
import runpy
import sys
import traceback
from pathlib import Path
from typing import Callable

from .. import safefs
from ..protocol import ExpectedError
from ..safefs import clip


def refused(message: str) -> ExpectedError:
    return ExpectedError("command_refused", message + "; nothing was run.")


def module_file(cwd: Path, target: str) -> Path | None:
    """The file ``python -m target`` would run from the working directory (``a/b.py`` or
    ``a/b/__main__.py`` for ``a.b``), reached with no link; None when it is not there."""
    names = target.split(".")
    if not all(n.isidentifier() for n in names):
        raise refused(f"module {clip(target)} is not a dotted module name")
    base = cwd.joinpath(*names)
    for candidate in (base.with_name(names[-1] + ".py"), base / "__main__.py"):
        try:
            k = safefs.kind(cwd, candidate)
        except safefs.UnsafePath as e:
            raise refused(f"module {clip(target)}: {e}") from None
        if k == "link":
            raise refused(f"module {clip(target)}: {candidate.relative_to(cwd)} is a symbolic link")
        if k == "file":
            return candidate
    return None


def read(root: Path, path: Path) -> bytes:
    """The file's content, read once through real directories under ``root`` (no link)."""
    try:
        return safefs.read_bytes(root, path)
    except safefs.UnsafePath as e:
        raise refused(f"{clip(str(path))}: {e}") from None


def run_file(source: bytes, path: Path, package: str = "") -> None:
    """Run ``source`` (read from ``path``) as ``__main__``, as ``python path`` would, or as
    ``python -m`` would run the module's file when ``package`` names its package (imported first)."""
    code = compile(source, str(path), "exec", dont_inherit=True)
    if package:
        importlib.import_module(package)
    frozen_frames_known()
    runner_frames_known(sys._getframe())
    runpy._run_module_code(code, None, "__main__", None, package, str(path))  # noqa: SLF001


def frozen_frames_known() -> None:
    """Tell ``inspect`` which module each frozen module's frames belong to (``<frozen runpy>`` is
    ``runpy``). Under kprof the command runs below frames of frozen modules (``python -m``, ``runpy``)
    that ``python script.py`` does not have, and for a frame whose file is no file ``inspect.getmodule``
    scans every loaded module again at every call: a caller lookup by ``inspect.stack()`` in every
    module's forward (the thirty-second held-back set) took 6.8 ms a call in kprof's child against
    0.3 ms alone, which made its plain and traced steps 16x the script's own (2026-11-29). Known, the
    lookup is a dictionary hit; what ``inspect`` returns for those frames is unchanged (no source)."""
    import inspect

    for name, module in list(sys.modules.items()):
        if getattr(getattr(module, "__spec__", None), "origin", None) == "frozen":
            inspect.modulesbyfile.setdefault(f"<frozen {name}>", name)


def runner_frames_known(frame) -> None:
    """Tell ``inspect`` that the files of ``frame`` and the frames below it that are no loaded module's file
    belong to no module. The child's own ``__main__`` (``python -m kprof_mcp.child``) is one: once runpy
    makes the command ``__main__``, no module has that file, and ``inspect.getmodule`` scans every loaded
    module again for each such frame at every call — a caller lookup by ``inspect.stack()`` in every module's
    forward (the thirty-second held-back set) took 19.4 ms a step under kprof's plain pass against the
    script's own 7.4 ms on an H200 after :func:`frozen_frames_known` (2026-11-29), 4x the scans' cost a frame
    on the CPU. Known (as ``kprof_mcp.child.__main__``, which no entry of ``sys.modules`` names), the lookup is
    a dictionary hit and finds no module, as the scan would; the frames' source lines are read as before. Live
    on an H200 after it (2026-11-29 18:40 UTC) that step was still 21.2 ms against 7.7 ms alone: the scans are gone
    (3.7 µs a lookup), and what stays is the depth — the command runs 14 frames below kprof's runner and runpy,
    whose source lines ``inspect.stack()`` reads at every call (docs/machine-model.md, "Live on an H200")."""
    import inspect

    files = {  # the loaded modules' files, but for __main__'s: the command replaces it
        os.path.normcase(os.path.abspath(f))
        for k, m in list(sys.modules.items())
        if k != "__main__" and isinstance(f := getattr(m, "__file__", None), str)
    }
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith("<"):
            key = os.path.normcase(os.path.abspath(name))
            if key not in files:
                inspect.modulesbyfile.setdefault(key, "kprof_mcp.child.__main__")
        frame = frame.f_back


_OURS = (str(Path(__file__).resolve().parents[1]) + os.sep, os.path.dirname(runpy.__file__) + os.sep)


def _ours(filename: str) -> bool:
    """A frame of kprof or of what ran the command for it (runpy, importlib), not the user's."""
    return filename.startswith(_OURS) or filename.startswith(("<frozen runpy>", "<frozen importlib"))


def user_traceback(e: BaseException, entries: int = 8) -> str:
    """``e``'s traceback from the user's first frame on (kprof's frames and runpy's before it trimmed),
    its last ``entries`` entries, without the "Traceback (most recent call last):" heading."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None and _ours(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    lines = traceback.format_exception(type(e), e, tb)
    if lines and lines[0].startswith("Traceback"):
        lines = lines[1:]
    return "".join(lines[-entries:])


def prepare(
    kind: str, target: str, rest: list[str], cwd: Path, root: Path | None, run_dir: Path
) -> tuple[list[str], str, Callable[[], int | None]]:
    """The command's ``sys.argv``, the directory first on ``sys.path``, and what runs it (a
    callable whose return value, or ``SystemExit``, is the exit status). ``root``: the workspace
    of a confined command (the server's profile_command), else None (``kprof run``: a module not
    under the working directory runs by name, pytest with the user's own options)."""
    from .pytest_stages import Guard, confined, confined_environ, is_pytest

    if kind == "path":
        script = Path(os.path.normpath(Path(cwd, target)))
        source = read(root or Path(os.sep), script)
        return [str(script), *rest], str(script.parent), lambda: run_file(source, script)
    found = module_file(cwd, target)
    if found is not None:
        source = read(cwd, found)
        names = target.split(".")
        package = ".".join(names if found.name == "__main__.py" else names[:-1])
        return [str(found), *rest], str(cwd), lambda: run_file(source, found, package)
    if root is None:

        def by_name() -> None:
            frozen_frames_known()
            runpy.run_module(target, run_name="__main__", alter_sys=True)

        return [target, *rest], str(cwd), by_name
    if not is_pytest(kind, target):
        raise refused(f"module {clip(target)} is not a file under the working directory {cwd}")
    try:
        args = confined(rest, root, cwd, run_dir)
    except (ValueError, safefs.UnsafePath) as e:
        raise refused(str(e)) from None
    confined_environ(os.environ)  # no plugin by entry point, PYTEST_PLUGINS or PYTEST_ADDOPTS
    import pytest  # the installed one: cwd is not on sys.path yet

    return ["pytest", *args], str(cwd), lambda: int(pytest.main(args, plugins=[Guard(root)]))

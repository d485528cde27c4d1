"""A profiled test suite has one stage per test: ``python -m pytest ...`` (or ``pytest ...``) runs
with ``-p kprof.pytest_plugin``, which wraps each test's call phase in ``kprof.range(<test name>)``
(:mod:`kprof.pytest_plugin`; fixtures' set-up and tear-down are outside it).

A test runs once, so its range has one occurrence: the warm-up rule (``warmup_occurrences``: leave
out a range's first occurrences) is not applied to the tests' ranges, which the plugin lists
(:data:`kprof.pytest_plugin.TESTS`); their time includes first-call set-up and a note says so.
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from .. import safefs
from ..safefs import clip

PLUGIN = "kprof.pytest_plugin"


def is_pytest(kind: str, target: str) -> bool:
    return kind == "module" and target == "pytest"


def disabled(args: list[str]) -> bool:
    """Whether the arguments turn the plugin off (``-p no:kprof.pytest_plugin``, ``-pno:kprof...``)."""
    for i, a in enumerate(args):
        name = args[i + 1] if a == "-p" and i + 1 < len(args) else a[2:] if a.startswith("-p") else ""
        if name.startswith("no:kprof"):
            return True
    return False


def with_plugin(args: list[str]) -> tuple[list[str], bool]:
    """pytest's arguments with the plugin loaded first, and whether it is on. A second ``-p`` of the
    same plugin (the user's own) is harmless: pytest loads a plugin once."""
    if disabled(args):
        return list(args), False
    return ["-p", PLUGIN, *args], True


def entered_tests() -> list[str]:
    """The tests' range names the plugin entered in this process (empty when it did not run)."""
    plugin = sys.modules.get(PLUGIN)
    return list(getattr(plugin, "TESTS", []) or [])


# ----------------------------------------------------------------------------- a confined pytest
# The server's profile_command runs pytest with these options only (issue 38): anything else could
# read, write or load code outside the workspace (-o, -c, -W, --rootdir, --basetemp, @argfile, ...).
ALLOWED_OPTIONS = (
    "test paths or ids under the workspace (a .py file or a directory, '::' ids after it), "
    "-k EXPR, -m MARKEXPR, -q/-v (-qq, -vv; combined with -x/-s as in -xvs), -x, --maxfail=N, -s, "
    "--tb=STYLE, -r CHARS, --durations=N, -p kprof.pytest_plugin / -p no:kprof.pytest_plugin"
)
_FLAGS = frozenset({"--quiet", "--verbose", "--exitfirst"})
_PLUGINS = frozenset({PLUGIN, "no:" + PLUGIN, "no:cacheprovider"})
_TB = frozenset({"auto", "long", "short", "line", "native", "no"})


def _value_ok(opt: str, value: str) -> bool:
    if opt in ("--maxfail", "--durations"):
        return value.isdigit() and len(value) < 10
    if opt == "--tb":
        return value in _TB
    if opt == "-r":
        return bool(value) and all(c in "fEsxXpPaAwN" for c in value)
    if opt == "-p":
        return value in _PLUGINS
    return bool(value)  # -k, -m: pytest's own expression language (never Python's eval)


def allowed_args(args: list[str]) -> list[str]:
    """The test paths among a confined pytest's arguments (each without its ``::`` id); raises
    ``ValueError`` naming the first argument outside the allow-list, and the list."""

    def refuse(a: str, why: str = "") -> ValueError:
        return ValueError(
            f"pytest argument {clip(a)} is refused{why}: profile_command runs pytest with these only: "
            f"{ALLOWED_OPTIONS} (kprof adds --rootdir, --confcutdir and -c of the workspace, and -p "
            "no:cacheprovider, itself)"
        )

    paths: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if any(ord(c) < 32 or ord(c) == 127 for c in a):
            raise refuse(a, " (a control character)")
        if a.startswith("@"):
            raise refuse(a, " (pytest reads '@file' as a file of arguments)")
        if not a.startswith("-"):
            path = a.split("::")[0]
            if not path:
                raise refuse(a)
            paths.append(path)
        elif a in _FLAGS or (len(a) > 1 and all(c in "qvxs" for c in a[1:]) and not a.startswith("--")):
            pass
        elif a[:2] in ("-k", "-m", "-r", "-p"):
            value = a[2:]
            if not value:  # the value is the next argument (one that is not an option)
                value = args[i + 1] if i + 1 < len(args) else ""
                if value.startswith(("-", "@")):
                    raise refuse(a, " (its value is missing)")
                i += 1
            if not _value_ok(a[:2], value) or any(ord(c) < 32 for c in value):
                raise refuse(a if a[2:] else f"{a} {value}")
        elif a.split("=", 1)[0] in ("--maxfail", "--tb", "--durations"):
            opt, eq, value = a.partition("=")
            if not eq:
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            if not _value_ok(opt, value):
                raise refuse(a if eq else f"{a} {value}")
        else:
            raise refuse(a)
        i += 1
    return paths


INI_NAMES = (  # pytest's own order; a file counts when it has pytest's section
    ("pytest.ini", ""),
    (".pytest.ini", ""),
    ("pyproject.toml", "[tool.pytest"),
    ("tox.ini", "[pytest]"),
    ("setup.cfg", "[tool:pytest]"),
)


def workspace_ini(root: Path, cwd: Path) -> Path | None:
    """The ini pytest would find from ``cwd`` upward, looked for only up to the workspace's root
    (never in its parents); None when there is none. A link is refused (``UnsafePath``)."""
    parts = safefs.parts_under(root, cwd)
    for n in range(len(parts), -1, -1):
        d = Path(root, *parts[:n])
        for name, section in INI_NAMES:
            k = safefs.kind(root, d / name)
            if k == "missing":
                continue
            if k != "file":
                safefs.check_file(root, d / name)  # raises: a link, a directory
            if not section or section in safefs.read_text(root, d / name, 4 << 20):
                return d / name
    return None


def link_out(root: Path, path: Path, walk: bool = True) -> str | None:
    """Where collecting ``path`` (a test path under ``root``) would load code from outside the
    workspace through a link, in words, or None: a link on its way; a conftest.py or __init__.py
    of it, of a directory above it or of its ``test*`` directories that is a link leading out;
    with ``walk``, any link leading out inside it (a directory tree; venvs and dot-directories,
    which pytest does not enter, left out)."""
    try:
        parts = safefs.parts_under(root, path)
        k = safefs.kind(root, path)
    except safefs.UnsafePath as e:
        return str(e)
    if k == "link":
        return f"{clip('/'.join(parts))} is a symbolic link"
    dirs = [Path(root, *parts[:n]) for n in range(len(parts) + 1)]
    if k == "dir":
        dirs += [d for d in Path(path).glob("test*") if d.is_dir() and not d.is_symlink()]
    for d in dirs:
        for name in ("conftest.py", "__init__.py"):
            if _leads_out(root, d / name):
                return f"{clip(str((d / name).relative_to(root)))} is a link leading out of the workspace"
    if k != "dir" or not walk:
        return None
    seen = 0
    for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
        for name in dirnames + filenames:
            seen += 1
            if _leads_out(root, Path(dirpath, name)):
                where = clip(str(Path(dirpath, name).relative_to(root)))
                return f"{where} is a link leading out of the workspace"
        dirnames[:] = [
            d
            for d in dirnames
            if not d.startswith(".")
            and d not in ("__pycache__", "node_modules")
            and not os.path.exists(os.path.join(dirpath, d, "pyvenv.cfg"))
        ]
        if seen > 100_000:  # the collection guard (:class:`Guard`) still ignores what lies beyond
            break
    return None


def _leads_out(root: Path, p: Path) -> bool:
    if not os.path.islink(p):
        return False
    real = os.path.realpath(p)
    return real != str(root) and not real.startswith(str(root).rstrip(os.sep) + os.sep)


class Guard:
    """A pytest plugin for a confined run: collection does not enter a link leading out of the
    workspace, nor a directory whose conftest.py or __init__.py is one."""

    def __init__(self, root: Path):
        self.root = root

    def pytest_ignore_collect(self, collection_path: Any, config: Any) -> bool | None:
        p = Path(collection_path)
        if _leads_out(self.root, p):
            return True
        if p.is_dir() and any(_leads_out(self.root, p / n) for n in ("conftest.py", "__init__.py")):
            return True
        return None


def confined_environ(env: MutableMapping[str, str]) -> None:
    """A confined pytest's environment (issue 38): no plugin loaded by a distribution's ``pytest11``
    entry point (a ``*.dist-info`` in the workspace, on ``sys.path`` as the working directory, would
    name any importable module), and none of pytest's own variables from the server's environment
    (``PYTEST_PLUGINS`` imports modules, ``PYTEST_ADDOPTS`` adds options past the allow-list,
    ``PYTEST_DEBUG_TEMPROOT`` moves ``tmp_path``). kprof's plugin is loaded by ``-p``; a suite that
    needs an installed plugin names it in the workspace's own root ``conftest.py``
    (``pytest_plugins = ["anyio"]``)."""
    for name in [k for k in env if k.startswith("PYTEST_")]:
        del env[name]
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"


def confined(args: list[str], root: Path, cwd: Path, run_dir: Path) -> list[str]:
    """A confined pytest's arguments: kprof's own first (``--rootdir`` and ``--confcutdir`` the
    workspace, ``-c`` its ini or an empty one written in the run's directory, no cache), then the
    user's, checked again (allow-list, no link out) right before pytest starts."""
    paths = allowed_args(args)
    for path in paths or ["."]:
        where = link_out(root, Path(os.path.normpath(cwd / path)), walk=bool(paths))
        if where:
            raise ValueError(
                f"pytest test path {clip(path)}: {where}; kprof collects only real files under the workspace"
            )
    ini = workspace_ini(root, cwd)
    if ini is None:
        ini = run_dir / "pytest.ini"
        ini.write_text("[pytest]\n")
    return ["-p", "no:cacheprovider", f"--rootdir={root}", f"--confcutdir={root}", "-c", str(ini), *args]

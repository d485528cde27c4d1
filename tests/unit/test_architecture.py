"""The layout's promises, checked on the source (docs/ARCHITECTURE.md): no import cycle (none
between modules, and so none inside any package), each layer (a folder, or a module standing
alone) imports only the layers below it, the kernel contract stands alone, no mode branches
outside ``modes/``, and the server starts without torch or triton.

Which imports count: ``import a.b`` and ``from a.b import c`` (``c`` too where it is a module), relative
or absolute, at any depth of the file: a function's lazy import, a ``try`` or ``if`` block's. Importing
``a.b.c`` also imports the packages ``a`` and ``a.b`` (their ``__init__`` runs first), except a module's
own ancestor packages (they are already importing when it runs: a package ``__init__`` that re-exports
its modules is no cycle). The cycle check counts the ``if TYPE_CHECKING:`` imports too (a type checker
follows them; the engine's facade and its parts were one circle of them, issue 42); the layer checks
leave them out (they never run). Imports by name at run time (``importlib.import_module``) are not seen.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

PKG = ROOT / "kprof_mcp"


def _modules(pkg: Path = PKG) -> dict[str, Path]:
    """Every module of the package at ``pkg`` (subpackages included) by its dotted name."""
    out = {}
    for f in pkg.rglob("*.py"):
        parts = list(f.relative_to(pkg.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


MODULES = _modules()


def _imports(name: str, modules: dict[str, Path] = MODULES, type_checking: bool = False) -> set[str]:
    """Every module of ``modules`` that ``name`` imports (see the module's docstring for which
    imports count); ``if TYPE_CHECKING`` blocks only with ``type_checking``."""
    tree = ast.parse(modules[name].read_text())
    package = name if modules[name].name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()

    def visit(node):
        if not type_checking and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            for a in node.names:  # "from . import runner" imports a module
                if f"{mod}.{a.name}" in modules:
                    found.add(f"{mod}.{a.name}")
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    out = set()
    for m in found:
        parts = m.split(".")
        for i in range(1, len(parts) + 1):  # importing a.b.c runs a/__init__ and a/b/__init__ first
            prefix = ".".join(parts[:i])
            # A module's own ancestor packages are already importing when it runs (a package
            # __init__ that re-exports its modules is not a cycle).
            if prefix in modules and prefix != name and not name.startswith(prefix + "."):
                out.add(prefix)
    return out


def _graph(modules: dict[str, Path], type_checking: bool) -> dict[str, set[str]]:
    return {m: _imports(m, modules, type_checking) for m in modules}


GRAPH = _graph(MODULES, type_checking=False)  # what runs: the layers


def import_cycles(pkg: Path = PKG) -> dict[str, list[list[str]]]:
    """The import cycles among the modules of the package at ``pkg``, every import counted
    (``TYPE_CHECKING`` ones included), by the innermost package holding each cycle's modules:
    {package: [sorted modules of one cycle, ...]}. Empty: no cycle anywhere, so none between the
    modules inside any package either."""
    graph = _graph(_modules(pkg), type_checking=True)
    # Tarjan's strongly connected components: any component of more than one module is a cycle.
    index, low, stack, on, counter = {}, {}, [], set(), [0]
    cycles: dict[str, list[list[str]]] = {}

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                common = [p for p in zip(*(c.split(".") for c in comp)) if len(set(p)) == 1]
                cycles.setdefault(".".join(p[0] for p in common), []).append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            strong(v)
    return cycles


def test_no_import_cycle():
    cycles = import_cycles()
    assert not cycles, f"import cycles (by package): {cycles}"


def test_the_cycle_check_finds_a_planted_cycle(tmp_path):
    """A package whose modules import each other — one at its top, one lazily or for type
    checking only — is reported, by the package that holds the cycle; one-way imports are not."""
    pkg = tmp_path / "planted"
    (pkg / "inner").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import A\nfrom .inner import c\n")
    (pkg / "a.py").write_text("from . import b\n\nA = 1\n")
    (pkg / "b.py").write_text("def f():\n    from .a import A\n\n    return A\n")
    (pkg / "inner" / "__init__.py").write_text("")
    (pkg / "inner" / "c.py").write_text("from .d import D\n")
    (pkg / "inner" / "d.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from .c import C\nD = 1\n"
    )
    (pkg / "e.py").write_text("from .a import A\nfrom .inner.d import D\n")  # one way: no cycle
    assert import_cycles(pkg) == {
        "planted": [["planted.a", "planted.b"]],
        "planted.inner": [["planted.inner.c", "planted.inner.d"]],
    }
    (pkg / "b.py").write_text("X = 1\n")
    (pkg / "inner" / "d.py").write_text("D = 1\n")
    assert import_cycles(pkg) == {}


def _folder(mod: str) -> str:
    """The top-level folder or module of kprof_mcp that ``mod`` belongs to."""
    return ".".join(mod.split(".")[:2])


# Every top-level folder and module, from the faces at the top to pure data at the bottom: each
# may import only what is listed after it. A new one must be placed here.
LAYERS = [
    "__main__",
    "launch",
    "server",
    "cli",
    "scaffold",
    "face",
    "cluster",
    "engine",
    "noise",
    "store",
    "jobs",
    "child",
    "modes",
    "capture",
    "render",
    "analysis",
    "clocks",
    "locks",
    "runner",
    "warm",
    "sandbox",
    "child_wait",
    "lifeline",
    "child_io",
    "outcap",
    "removal",
    "packages",
    "kernel_api",  # former homes of the kernel contract and helpers: re-export kernel, with a warning
    "kernel_runtime",
    "kernel",
    "safefs",
    "tools",
    "parsers",
    "models",
    "machines",
    "devices",
    "protocol",
]


def test_every_folder_has_a_place_in_the_layers():
    folders = {_folder(m).removeprefix("kprof_mcp.") for m in MODULES if m != "kprof_mcp"}
    assert folders == set(LAYERS), f"unplaced: {folders - set(LAYERS)}; gone: {set(LAYERS) - folders}"


def test_no_import_runs_back_up_a_layer_or_cycles_between_folders():
    """Folders import only folders below them in LAYERS: the folder graph has no cycle (two
    folders importing each other through different modules included) and nothing imports upward."""
    rank = {f"kprof_mcp.{name}": i for i, name in enumerate(LAYERS)}
    upward = sorted(
        f"{m} -> {d}"
        for m, deps in GRAPH.items()
        if m != "kprof_mcp"
        for d in deps
        if d != "kprof_mcp" and _folder(d) != _folder(m) and rank[_folder(d)] <= rank[_folder(m)]
    )
    assert not upward, f"imports running up the layers: {upward}"


# What each layer may import (besides itself). Everything not listed is forbidden.
ALLOWED = {
    "kprof_mcp.kernel": set(),
    "kprof_mcp.protocol": set(),
    "kprof_mcp.models": set(),
    "kprof_mcp.devices": set(),
    "kprof_mcp.machines": set(),
    "kprof_mcp.parsers": {"kprof_mcp.models"},
    "kprof_mcp.tools": {"kprof_mcp.parsers", "kprof_mcp.models"},
    "kprof_mcp.analysis": {
        "kprof_mcp.models",
        "kprof_mcp.parsers",
        "kprof_mcp.machines",
        "kprof_mcp.devices",
    },
    "kprof_mcp.render": {"kprof_mcp.models", "kprof_mcp.analysis", "kprof_mcp.parsers"},
    # The capture layer sits below both the modes and the child's entry points: the Timer and the
    # capture context once lived in modes/ and child/, which then imported each other.
    "kprof_mcp.capture": {
        "kprof_mcp.models",
        "kprof_mcp.parsers",
        "kprof_mcp.analysis",
        "kprof_mcp.kernel",
        "kprof_mcp.protocol",
        "kprof_mcp.safefs",
        "kprof_mcp.removal",  # a rank hook's directory, which a job writes, removed without recursion
        "kprof_mcp.tools",  # cuobjdump over a compiled kernel's cubin (its SASS listing)
    },
    "kprof_mcp.modes": {
        "kprof_mcp.models",
        "kprof_mcp.parsers",
        "kprof_mcp.analysis",
        "kprof_mcp.render",
        "kprof_mcp.capture",
        "kprof_mcp.protocol",
        "kprof_mcp.safefs",
        "kprof_mcp.tools",
        "kprof_mcp.runner",
    },
    "kprof_mcp.child": {
        "kprof_mcp.models",
        "kprof_mcp.parsers",
        "kprof_mcp.analysis",
        "kprof_mcp.render",  # a comparison's verdict worded (render.compare.comparison) into compare.json
        "kprof_mcp.capture",
        "kprof_mcp.modes",
        "kprof_mcp.kernel",
        "kprof_mcp.protocol",
        "kprof_mcp.tools",
        "kprof_mcp.devices",
        "kprof_mcp.packages",
        "kprof_mcp.clocks",
        "kprof_mcp.lifeline",
        "kprof_mcp.removal",  # a failed command's run directory, which the command wrote, removed
    },
}


def _layer(mod: str) -> str:
    for layer in sorted(ALLOWED, key=len, reverse=True):
        if mod == layer or mod.startswith(layer + "."):
            return layer
    return mod


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layers_import_only_what_is_below_them(layer):
    bad = {}
    for mod, deps in GRAPH.items():
        if _layer(mod) != layer:
            continue
        wrong = {
            d for d in deps if _layer(d) != layer and _layer(d) not in ALLOWED[layer] and d != "kprof_mcp"
        }
        if wrong:
            bad[mod] = sorted(wrong)
    assert not bad, f"{layer} may import only {sorted(ALLOWED[layer])}: {bad}"


def test_kernel_contract_imports_nothing_else():
    for mod in MODULES:
        if mod.startswith("kprof_mcp.kernel."):
            tree = ast.parse(MODULES[mod].read_text())
            names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
            names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level}
            assert not {n for n in names if n.split(".")[0] in ("kprof_mcp",)}, mod
            assert not {n for n in names if n.split(".")[0] in ("triton",)} or mod.endswith("runtime"), mod


def test_no_mode_branches_outside_modes():
    """`if mode == "ncu"` belongs in the mode's module: elsewhere the registry answers."""
    from kprof_mcp.modes import MODES

    names = set(MODES) | {"nsight"}
    offenders = []
    for mod, path in MODULES.items():
        if mod.startswith("kprof_mcp.modes"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            consts = [s for s in sides if isinstance(s, ast.Constant) and s.value in names]
            consts += [
                e
                for s in sides
                if isinstance(s, (ast.Tuple, ast.List, ast.Set))
                for e in s.elts
                if isinstance(e, ast.Constant) and e.value in names
            ]
            moded = [s for s in sides if "mode" in ast.unparse(s).lower() and not isinstance(s, ast.Constant)]
            if consts and moded:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert not offenders, offenders


def test_server_and_cli_start_without_torch_or_triton():
    code = (
        "import sys, kprof_mcp.server, kprof_mcp.cli, kprof_mcp.engine, kprof_mcp.modes; "
        "bad = [m for m in ('torch', 'triton') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    )
    cp = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert cp.returncode == 0, cp.stdout + cp.stderr


def test_every_mode_implements_every_phase():
    from kprof_mcp.modes import MODES, Mode, ModeNotAvailable, get_mode

    for name, mode in MODES.items():
        assert isinstance(mode, Mode) and mode.name == name and mode.summary and mode.needs
        assert type(mode).capture is not Mode.capture, f"{name} has no capture"
        assert get_mode(name) is mode
    with pytest.raises(
        ModeNotAvailable, match=r"unknown mode 'warp'; modes: \['annotation', 'event', 'ncu', 'nsys'\]"
    ):
        get_mode("warp")


def test_no_file_is_over_500_lines():
    """A module that grows past 500 lines is split by what it does (issue 28)."""
    long = {
        str(p.relative_to(ROOT)): n for p in PKG.rglob("*.py") if (n := len(p.read_text().splitlines())) > 500
    }
    assert not long, f"split these: {long}"

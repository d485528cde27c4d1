"""Chains of dependent memory round trips in a Triton kernel's loops, from its TTIR (issue 36): a loop whose
next load's address, or whose decision to go on, needs a value the previous iteration loaded. Each
iteration then waits a full memory round trip before the next can issue its load, whatever the occupancy:
pointer chasing (a linked list, a tree walk), probing until a key is found, polling a flag another program
sets. A gather in a loop (``idx = load(a + i); v = load(b + idx)``) is no chain: the next iteration's loads
do not wait for this one's.

``chases(ttir)`` → entries in :func:`.ttir.ir_ops`'s shape, ``{"kind": "chase", "detail": "address" |
"exit", "line", "count"}``: ``address`` — a load (or atomic) whose pointer depends on a value a load of the
previous iteration produced (carried through ``scf.for``'s ``iter_args`` or ``scf.while``'s arguments);
``exit`` — a ``scf.while`` whose condition needs a value loaded in the same or the previous iteration.

Pure: TTIR text in, facts out. A text reading of MLIR's generic structure (regions by braces, values by
their ``%`` names), not a full parser: what it cannot follow it does not report.
"""

from __future__ import annotations

import re
from collections import Counter

_VALUE = re.compile(r"%([\w.$-]+)(?:#\d+)?")
_DEF = re.compile(r"^\s*((?:%[\w.$-]+(?::\d+)?\s*,\s*)*%[\w.$-]+(?::\d+)?)\s*=\s*(.*)$")
_LOADS = ("tt.load ", "tt.atomic_rmw ", "tt.atomic_cas ")
_ITER = re.compile(r"iter_args\((.*?)\)\s*->")
_WHILE = re.compile(r"scf\.while\s*\((.*?)\)\s*:")
_BLOCK = re.compile(r"^\s*\^bb\d+\((.*)\):\s*$")
_COND = re.compile(r"scf\.condition\((%[\w.$-]+)\)\s*([^:]*)")
_YIELD = re.compile(r"^\s*scf\.yield\s+([^:]*)")
_LOC = re.compile(r"loc\(#(loc\d*)\)\s*$")
_SIMPLE_LOC = re.compile(r"loc\(#loc\d*\)")


def _names(text: str) -> list[str]:
    return _VALUE.findall(text)


def _strip_locs(s: str) -> str:
    """Without ``loc(...)`` annotations (block arguments carry them, with names in quotes)."""
    s = _SIMPLE_LOC.sub("", s)
    if "loc(" not in s:
        return s
    out, depth, i = [], 0, 0
    while i < len(s):
        if s.startswith("loc(", i):
            depth, i = 1, i + 4
            while i < len(s) and depth:
                depth += {"(": 1, ")": -1}.get(s[i], 0)
                i += 1
            continue
        out.append(s[i])
        i += 1
    return "".join(out)


class _Loop:
    def __init__(self, kind: str, args: list[str], depth: int, line: int) -> None:
        self.kind, self.args, self.depth, self.line = kind, args, depth, line
        self.yields: list[str] = []
        self.cond: tuple[str, list[str], int] | None = None  # condition, forwarded values, its line index
        self.after: list[str] = []  # scf.while's after-region block arguments
        self.end = line


def _loops(lines: list[str]) -> list[_Loop]:
    loops: list[_Loop] = []
    stack: list[_Loop] = []
    depth = 0
    for i, raw in enumerate(lines):
        s = _strip_locs(raw)
        if (m := _ITER.search(s)) and "scf.for" in s:
            lp = _Loop(
                "for",
                [a.split("=")[0].strip().lstrip("%") for a in m.group(1).split(",") if "=" in a],
                depth,
                i,
            )
        elif (m := _WHILE.search(s)) and "scf.while" in s:
            lp = _Loop(
                "while",
                [a.split("=")[0].strip().lstrip("%") for a in m.group(1).split(",") if "=" in a],
                depth,
                i,
            )
        else:
            lp = None
        if stack:
            top = stack[-1]
            inner = depth == top.depth + 1
            if inner and (m := _YIELD.match(s)):
                top.yields = _names(m.group(1))
            elif inner and (m := _COND.search(s)) and top.kind == "while":
                top.cond = (m.group(1).lstrip("%"), _names(m.group(2)), i)
            elif (
                inner
                and (m := _BLOCK.match(s))
                and top.kind == "while"
                and top.cond is not None
                and not top.after
            ):
                top.after = [a.split(":")[0].strip().lstrip("%") for a in m.group(1).split(",")]
        depth += s.count("{") - s.count("}")
        if lp is not None:
            loops.append(lp)
            stack.append(lp)
        while stack and depth <= stack[-1].depth:
            stack.pop().end = i
    return loops


def chases(ttir: str, locs: dict[str, str]) -> list[dict]:
    """The chains of dependent round trips in ``ttir``'s loops (see the module docstring); ``locs``: the
    TTIR's location aliases resolved to source lines (:func:`.ttir._locations`). Text it cannot read gives
    none: a reading that fails is no reason to fail a profile."""
    try:
        return _chases(ttir, locs)
    except Exception:  # noqa: BLE001 - evidence, never a failure
        return []


def _chases(ttir: str, locs: dict[str, str]) -> list[dict]:
    lines = ttir.splitlines()
    found: Counter[tuple[str, str]] = Counter()
    for lp in _loops(lines):
        deps: dict[str, list[str]] = {}
        loaded: set[str] = set()
        ops: list[tuple[int, list[str], bool]] = []  # (line index, operands, a load or atomic)
        for i in range(lp.line + 1, lp.end):
            s = _strip_locs(lines[i])
            m = _DEF.match(s)
            if not m:
                continue
            results = [r.split(":")[0].lstrip("%") for r in re.split(r"\s*,\s*", m.group(1))]
            operands = _names(m.group(2))
            load = m.group(2).lstrip().startswith(_LOADS) or '"tt.atomic' in m.group(2)
            for r in results:
                deps[r] = operands
                if load:
                    loaded.add(r)
            ops.append((i, operands, load))
        if (
            lp.kind == "while" and lp.cond is not None
        ):  # the after region's arguments are the forwarded values
            for a, f in zip(lp.after, lp.cond[1]):
                if a != f:
                    deps.setdefault(a, [f])
        users: dict[str, set[str]] = {}
        for v, operands in deps.items():
            for o in operands:
                users.setdefault(o, set()).add(v)

        def reaching(seeds: set[str]) -> set[str]:
            """Every value that depends on one of ``seeds`` (itself included), through the loop's definitions."""
            out, todo = set(seeds), list(seeds)
            while todo:
                for u in users.get(todo.pop(), ()):
                    if u not in out:
                        out.add(u)
                        todo.append(u)
            return out

        from_loads = reaching(loaded)
        carried = {a for a, y in zip(lp.args, lp.yields) if y in from_loads}
        tainted = reaching(carried)
        if carried:
            for i, operands, load in ops:
                if load and operands and operands[0] in tainted:
                    found[("address", _where(lines[i], locs))] += 1
        if lp.kind == "while" and lp.cond is not None and lp.cond[0] in (tainted | from_loads):
            found[("exit", _where(lines[lp.cond[2]], locs))] += 1
    return [{"kind": "chase", "detail": d, "line": w, "count": n} for (d, w), n in sorted(found.items())]


def _where(line: str, locs: dict[str, str]) -> str:
    m = _LOC.search(line.strip())
    return locs.get(m.group(1), "") if m else ""

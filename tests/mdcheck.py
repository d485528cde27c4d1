"""A checker for the markdown kprof renders (contract, report, devlog, compare, sweep): every
table ends before the next block (a line right after a table's last row that is not a row is
swallowed into the table by a CommonMark + GFM-tables renderer), no table without rows and no
heading without content. ``problems(text)`` lists what is wrong, one string each (empty: fine).

With markdown-it-py (installed with rich) the tables are found as a CommonMark renderer finds
them; without it, line by line."""

from __future__ import annotations

import re

HEADING = re.compile(r"^(#{1,6})\s")
FENCE = re.compile(r"^(```|~~~)")


def _row(line: str) -> bool:
    return line.lstrip().startswith("|")


def _tables(lines: list[str]) -> list[tuple[int, int]]:
    """(first line, end line exclusive) of each table, as a renderer delimits it."""
    try:
        from markdown_it import MarkdownIt
    except ImportError:
        return _tables_by_line(lines)
    md = MarkdownIt("commonmark").enable("table")
    return [tuple(t.map) for t in md.parse("\n".join(lines)) if t.type == "table_open" and t.map]


def _tables_by_line(lines: list[str]) -> list[tuple[int, int]]:
    """Without a parser: a header row, a delimiter row, then every line up to a blank one (a
    table ends only at a blank line or another block's start; a plain line is one more row)."""
    out, i, fenced = [], 0, False
    while i < len(lines):
        if FENCE.match(lines[i]):
            fenced = not fenced
        if not fenced and _row(lines[i]) and i + 1 < len(lines) and re.match(r"^\|?\s*:?-{3,}", lines[i + 1]):
            j = i + 2
            while j < len(lines) and lines[j].strip() and not HEADING.match(lines[j]):
                j += 1
            out.append((i, j))
            i = j
            continue
        i += 1
    return out


def problems(text: str) -> list[str]:
    lines = text.splitlines()
    out = []
    for start, end in _tables(lines):
        for k in range(start, end):
            if not _row(lines[k]):
                out.append(f"line {k + 1} is swallowed into the table above it: {lines[k][:60]!r}")
        if end - start <= 2:
            out.append(f"line {start + 1}: a table without rows: {lines[start][:60]!r}")
    fenced = False
    headings = []
    for k, ln in enumerate(lines):
        if FENCE.match(ln):
            fenced = not fenced
        m = HEADING.match(ln)
        if m and not fenced:
            headings.append((k, len(m.group(1))))
    for n, (k, level) in enumerate(headings):
        nxt = headings[n + 1] if n + 1 < len(headings) else None
        body = lines[k + 1 : nxt[0] if nxt else len(lines)]
        if not any(x.strip() for x in body) and (nxt is None or nxt[1] <= level):
            out.append(f"line {k + 1}: an empty section: {lines[k]!r}")
    return out

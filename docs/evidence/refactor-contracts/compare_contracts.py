"""Compare two sets of Profiler Output Contracts saved by docs/evidence/refactor-contracts/contract_evidence.py.

    python docs/evidence/refactor-contracts/compare_contracts.py A_DIR B_DIR [--dur-tol 0.05] [--pct-tol 3] [--gain-tol-pts 3] [--strict]
                                        [--noise A2_DIR [--noise-factor 2]]

For every ``<kernel>-<version>-<mode>.md`` present in both directories:

* structure, which must be identical: the section headings, the Configuration table, the stage
  names (in order), each stage's bottleneck class, the overall bottleneck (class and its
  "+ locality issue" note), the opportunity names in order, which cells are ``n/a``, and (when
  the .json beside it holds the tool's structured content) the keys of that content;
* figures, side by side with their difference: stage durations and the total (relative, within
  ``--dur-tol``, default 5 %), TC%, DRAM%, Occ% and, from the .json, SM% and L2 hit % (absolute,
  within ``--pct-tol`` percentage points, default 3), and the opportunities' estimated gains
  (within ``--gain-tol-pts`` points or ``--dur-tol`` relative, whichever is looser);
* wording, reported as a warning (an error with ``--strict``): the root cause and the key
  issues with their numbers masked, so that a different template shows while noise does not.

An opportunity list in another order fails, except where the swapped entries' gains lie within
the gain tolerance of each other (a tie decided by noise): that is a warning.

Some figures move between two runs of the very same code by more than these tolerances (on an
H100, L2 hit % by up to 11 points, and with it the "locality issue" note and the L2 gain). Given
``--noise A2_DIR``, a second run of A's code, each figure's tolerance becomes the larger of the
default and ``--noise-factor`` (default 2) times the difference between A and A2, and a
structural check that A and A2 already fail (e.g. the locality note) is reported as a warning.

Prints a markdown report; exit status 0 when everything is within tolerance, 1 otherwise, 2 when
there is nothing to compare.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NA = "n/a"
NUM = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
OPP = re.compile(r"^(\d+)\. (.*) — est\. ([-+]?[\d.]+)% gain — trigger: (.*)$")


@dataclass
class Contract:
    headings: list[str] = field(default_factory=list)
    config: list[list[str]] = field(default_factory=list)
    stages: list[dict[str, str]] = field(default_factory=list)
    bottleneck: str = ""
    root_cause: str = ""
    opportunities: list[tuple[str, float | None, str]] = field(default_factory=list)
    structured: dict[str, Any] | None = None


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _table(lines: list[str], start: int) -> list[list[str]]:
    """Rows (header first, separator dropped) of the table that begins at or after ``start``."""
    i = start
    while i < len(lines) and not lines[i].startswith("|"):
        if lines[i].startswith("#"):
            return []
        i += 1
    rows = []
    while i < len(lines) and lines[i].startswith("|"):
        if not re.fullmatch(r"\|(-+\|)+", lines[i].strip()):
            rows.append(_cells(lines[i]))
        i += 1
    return rows


def parse(text: str, structured: dict[str, Any] | None = None) -> Contract:
    c = Contract(structured=structured)
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        if ln.startswith("#"):
            c.headings.append(ln.strip())
        if ln.strip() == "### Configuration":
            c.config = _table(lines, i + 1)
        elif ln.strip() == "### Stages":
            rows = _table(lines, i + 1)
            if rows:
                head = rows[0]
                for r in rows[1:]:
                    if len(r) > len(head):  # a '|' inside the last cell
                        r = r[: len(head) - 1] + [" | ".join(r[len(head) - 1 :])]
                    c.stages.append(dict(zip(head, r)))
        elif ln.startswith("**Bottleneck**:"):
            c.bottleneck = ln.split(":", 1)[1].strip()
        elif ln.startswith("**Root cause**:"):
            c.root_cause = ln.split(":", 1)[1].strip()
        else:
            m = OPP.match(ln.strip())
            if m and any(h.startswith("### Top 3") for h in c.headings):
                c.opportunities.append((m.group(2), float(m.group(3)), m.group(4)))
            elif re.match(r"^\d+\. ", ln.strip()) and c.headings and c.headings[-1].startswith("### Top 3"):
                c.opportunities.append((ln.strip().split(". ", 1)[1], None, ""))
    return c


def _f(v: str | float | None) -> float | None:
    if v is None or v == NA:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _mask(s: str) -> str:
    return NUM.sub("#", s)


def _class(b: str) -> tuple[str, str]:
    """'Memory-bound (+ locality issue: L2 hit < 80%)' -> ('Memory-bound', '+ locality issue: ...')."""
    if " (" in b:
        a, rest = b.split(" (", 1)
        return a.strip(), rest.rstrip(")").strip()
    return b.strip(), ""


def _fmt(v: float | None, digits: int = 2) -> str:
    return NA if v is None else f"{v:.{digits}f}"


class Report:
    """Rows of figures and lists of failures and warnings for one contract pair.

    With ``noise`` (the Report of A against a repeat of A's own code), each figure's tolerance
    widens to ``noise_factor`` times the difference the repeat showed, and a structural check
    that the repeat failed as well is a warning, not a failure."""

    def __init__(self, a: argparse.Namespace, noise: Report | None = None):
        self.a = a
        self.noise = noise
        self.rows: list[list[str]] = []
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self.diffs: dict[str, float] = {}  # figure -> |difference| (relative for durations)
        self.failed_keys: set[str] = set()

    def err(self, msg: str, key: str | None = None) -> None:
        if key is not None:
            self.failed_keys.add(key)
        if key is not None and self.noise is not None and key in self.noise.failed_keys:
            self.warnings.append(msg + " (the repeat of A differs here too: noise)")
        else:
            self.errors.append(msg)

    def warn(self, msg: str) -> None:
        (self.errors if self.a.strict else self.warnings).append(msg)

    def _widen(self, what: str, tol: float) -> tuple[float, str]:
        if self.noise is None or what not in self.noise.diffs:
            return tol, ""
        seen = self.a.noise_factor * self.noise.diffs[what]
        return (seen, " (noise)") if seen > tol else (tol, "")

    def rel(self, what: str, x: float | None, y: float | None) -> None:
        if x is None and y is None:
            return
        if x is None or y is None:
            self.rows.append([what, _fmt(x), _fmt(y), NA, "**n/a on one side**"])
            self.err(f"{what}: {_fmt(x)} vs {_fmt(y)}", what + " n/a")
            return
        d = (y - x) / x if x else (0.0 if y == x else float("inf"))
        self.diffs[what] = abs(d)
        tol, why = self._widen(what, self.a.dur_tol)
        ok = abs(d) <= tol
        self.rows.append(
            [what, _fmt(x), _fmt(y), f"{100 * d:+.1f}%", "ok" if ok else f"**> {100 * tol:.3g}%{why}**"]
        )
        if not ok:
            self.err(f"{what}: {_fmt(x)} vs {_fmt(y)} ({100 * d:+.1f}%, tolerance {100 * tol:.3g}%{why})")

    def pts(
        self, what: str, x: float | None, y: float | None, tol: float, rel_tol: float | None = None
    ) -> None:
        if x is None and y is None:
            self.rows.append([what, NA, NA, "", "ok"])
            return
        if x is None or y is None:
            self.rows.append([what, _fmt(x, 1), _fmt(y, 1), NA, "**n/a on one side**"])
            self.err(f"{what}: {_fmt(x, 1)} vs {_fmt(y, 1)}", what + " n/a")
            return
        d = y - x
        rd = d / x if x else (0.0 if d == 0 else float("inf"))
        self.diffs[what] = abs(d)
        tol, why = self._widen(what, tol)
        ok = abs(d) <= tol or (rel_tol is not None and abs(rd) <= rel_tol)
        txt = f"{d:+.1f} pts" + (f" ({100 * rd:+.1f}%)" if x else "")
        self.rows.append([what, _fmt(x, 1), _fmt(y, 1), txt, "ok" if ok else f"**> {tol:.3g} pts{why}**"])
        if not ok:
            self.err(f"{what}: {_fmt(x, 1)} vs {_fmt(y, 1)} ({d:+.1f} pts, tolerance {tol:.3g} pts{why})")


def _keys(d: Any, prefix: str = "") -> set[str]:
    """Key paths of the structured content (list items merged; values ignored)."""
    out: set[str] = set()
    if isinstance(d, dict):
        for k, v in d.items():
            out.add(prefix + k)
            out |= _keys(v, prefix + k + ".")
    elif isinstance(d, list):
        for v in d:
            out |= _keys(v, prefix + "[].")
    return out


def compare(A: Contract, B: Contract, a: argparse.Namespace, noise: Report | None = None) -> Report:
    r = Report(a, noise)
    if A.headings != B.headings:
        r.err(f"section headings differ: {A.headings} vs {B.headings}", "headings")
    if A.config != B.config:
        r.err(f"Configuration differs: {A.config} vs {B.config}", "config")
    an, bn = [s.get("Stage") for s in A.stages], [s.get("Stage") for s in B.stages]
    if an != bn:
        r.err(f"stage names differ: {an} vs {bn}", "stages")
    sa, sb = A.structured or {}, B.structured or {}
    ssa = {s["name"]: s for s in sa.get("stages", [])}
    ssb = {s["name"]: s for s in sb.get("stages", [])}
    for s in A.stages:
        t = next((x for x in B.stages if x.get("Stage") == s.get("Stage")), None)
        if t is None:
            continue
        st = s.get("Stage")
        if s.get("Bottleneck") != t.get("Bottleneck"):
            r.err(f"{st}: bottleneck {s.get('Bottleneck')!r} vs {t.get('Bottleneck')!r}", f"{st} bottleneck")
        ja, jb = ssa.get(st, {}), ssb.get(st, {})
        # The structured duration has full precision; the contract's has 2 decimals.
        r.rel(
            f"{st} duration (us)",
            ja.get("duration_us", _f(s.get("Duration (us)"))),
            jb.get("duration_us", _f(t.get("Duration (us)"))),
        )
        for col in ("TC%", "DRAM%", "Occ%"):
            if (s.get(col) == NA) != (t.get(col) == NA):
                r.err(f"{st} {col}: {s.get(col)} vs {t.get(col)} (n/a on one side)", f"{st} {col} n/a")
            r.pts(f"{st} {col}", _f(s.get(col)), _f(t.get(col)), a.pct_tol)
        for key, label in (("sm_pct", "SM%"), ("l2_hit_pct", "L2 hit %")):
            if key in ja or key in jb:
                if ja.get(key) is not None or jb.get(key) is not None:
                    r.pts(f"{st} {label}", ja.get(key), jb.get(key), a.pct_tol)
        ka, kb = _mask(s.get("Key Issue", "")), _mask(t.get("Key Issue", ""))
        if ka != kb:
            r.warn(f"{st} key issue wording: {s.get('Key Issue')!r} vs {t.get('Key Issue')!r}")
    if sa.get("total_duration_us") is not None or sb.get("total_duration_us") is not None:
        r.rel("total duration (us)", sa.get("total_duration_us"), sb.get("total_duration_us"))
    ca, cb = _class(A.bottleneck), _class(B.bottleneck)
    if ca != cb:
        r.err(f"overall bottleneck {A.bottleneck!r} vs {B.bottleneck!r}", "bottleneck")
    r.rows.append(
        ["Bottleneck", A.bottleneck or NA, B.bottleneck or NA, "", "ok" if ca == cb else "**differs**"]
    )
    if _mask(A.root_cause) != _mask(B.root_cause):
        r.warn(f"root cause wording: {A.root_cause!r} vs {B.root_cause!r}")
    oa, ob = [o[0] for o in A.opportunities], [o[0] for o in B.opportunities]
    if oa != ob:
        gains = {o[0]: o[1] for o in A.opportunities}
        noise = sorted(oa) == sorted(ob) and all(
            x == y
            or (
                gains.get(x) is not None
                and gains.get(y) is not None
                and (
                    abs(gains[x] - gains[y]) <= a.gain_tol_pts
                    or abs(gains[x] - gains[y]) <= a.dur_tol * max(abs(gains[x]), abs(gains[y]))
                )
            )
            for x, y in zip(oa, ob)
        )
        msg = f"opportunity order differs: {oa} vs {ob}"
        if noise:
            r.warn(msg + " (swapped entries' gains are within tolerance: a tie decided by noise)")
        else:
            r.err(msg, "opportunities")
    gb = {o[0]: o[1] for o in B.opportunities}
    for i, (nm, g, _) in enumerate(A.opportunities, 1):
        if nm in gb and (g is not None or gb[nm] is not None):
            short = nm if len(nm) <= 70 else nm[:67] + "..."
            r.pts(f"opp {i}: {short} est. gain %", g, gb[nm], a.gain_tol_pts, a.dur_tol)
    if sa and sb:
        ka, kb = _keys(sa), _keys(sb)
        if ka != kb:
            r.err(
                f"structured content keys differ: only in A {sorted(ka - kb)}, only in B {sorted(kb - ka)}",
                "keys",
            )
    return r


def load(d: Path, stem: str) -> Contract | None:
    md = d / f"{stem}.md"
    if not md.exists():
        return None
    js = d / f"{stem}.json"
    structured = None
    if js.exists():
        try:
            structured = json.loads(js.read_text()).get("structured")
        except (json.JSONDecodeError, AttributeError):
            structured = None
    return parse(md.read_text(), structured)


def stems(d: Path) -> set[str]:
    out = {p.stem for p in d.glob("*.md") if p.name != "README.md"}
    out |= {p.stem for p in d.glob("*.json") if p.name != "summary.json"}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a_dir", type=Path)
    ap.add_argument("b_dir", type=Path)
    ap.add_argument(
        "--dur-tol", type=float, default=0.05, help="relative tolerance of durations (default 0.05)"
    )
    ap.add_argument(
        "--pct-tol", type=float, default=3.0, help="tolerance of counter %%s, in points (default 3)"
    )
    ap.add_argument(
        "--gain-tol-pts",
        type=float,
        default=3.0,
        help="tolerance of est. gains in points (or --dur-tol relative; default 3)",
    )
    ap.add_argument("--strict", action="store_true", help="wording differences fail too")
    ap.add_argument(
        "--noise",
        type=Path,
        default=None,
        help="a repeat run of A's code: each figure's tolerance "
        "widens to --noise-factor times the difference A "
        "and the repeat show, and structural checks the "
        "repeat fails too are only warnings",
    )
    ap.add_argument("--noise-factor", type=float, default=2.0, help="see --noise (default 2)")
    a = ap.parse_args(argv)
    both = sorted(stems(a.a_dir) & stems(a.b_dir))
    only = sorted(stems(a.a_dir) ^ stems(a.b_dir))
    print(f"# Contracts: `{a.a_dir}` (A) vs `{a.b_dir}` (B)\n")
    print(
        f"Tolerances: durations {100 * a.dur_tol:g}% relative; TC/DRAM/Occ/SM/L2 {a.pct_tol:g} points; "
        f"est. gains {a.gain_tol_pts:g} points or {100 * a.dur_tol:g}% relative"
        + (
            f"; each widened to {a.noise_factor:g}x the difference between A and its repeat `{a.noise}` where "
            "that is larger (marked 'noise')"
            if a.noise
            else ""
        )
        + ".\n"
    )
    if not both:
        print("Nothing to compare: no <kernel>-<version>-<mode> present in both directories.")
        return 2
    failed, summary = [], []
    for stem in both:
        A, B = load(a.a_dir, stem), load(a.b_dir, stem)
        print(f"## {stem}\n")
        if A is None or B is None:
            side = "A" if A is None else "B"
            err = ""
            js = (a.a_dir if A is None else a.b_dir) / f"{stem}.json"
            if js.exists():
                err = str(json.loads(js.read_text()).get("error", ""))[:500]
            print(f"**FAIL**: no contract in {side}" + (f" (error: {err})" if err else "") + "\n")
            failed.append(stem)
            summary.append([stem, "FAIL", f"no contract in {side}"])
            continue
        N = load(a.noise, stem) if a.noise else None
        r = compare(A, B, a, compare(A, N, a) if N is not None else None)
        print("| Figure | A | B | Difference | Within tolerance |")
        print("|---|---|---|---|---|")
        for row in r.rows:
            print("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |")
        print()
        for e in r.errors:
            print(f"- **FAIL**: {e}")
        for w in r.warnings:
            print(f"- warning: {w}")
        if r.errors or r.warnings:
            print()
        if r.errors:
            failed.append(stem)
        summary.append(
            [stem, "FAIL" if r.errors else "ok", f"{len(r.errors)} failure(s), {len(r.warnings)} warning(s)"]
        )
    if only:
        print(f"In one directory only (not compared): {', '.join(only)}\n")
    print("## Summary\n")
    print("| Contract | Result | Notes |")
    print("|---|---|---|")
    for row in summary:
        print("| " + " | ".join(row) + " |")
    print(f"\n{len(both) - len(failed)} of {len(both)} within tolerance.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

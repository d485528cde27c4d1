"""The table of run.sh: per version and mode, is the contract flagged, and the largest "% of peak"-like
figure it prints. The criterion is the README's, fixed before the first GPU run:

- a flag line: a line of contract.md (stdout of `kprof profile --quiet`) that matches FLAG
  (case-insensitive: "integrity", "suspect", "no kernel", "failed", "refused", "caveat", "over (a|the)
  (device )?peak", "above (a|the) (device )?peak");
- a tampered version's contract is **flagged** when it has a flag line that the honest contract of the
  same mode does not print (lines compared with every number replaced by "#" and spaces collapsed), so
  that a neutral line every contract prints ("Integrity: checks passed …") is no flag; when the honest
  contract of that mode is missing, every flag line counts;
- the honest contract is the control: it is "control flagged" when one of its flag lines matches STRONG
  ("failed", "suspect", "refused", "no kernel", "(over|above) … peak"); its lines that only say
  "integrity" or "caveat" are listed as mentions, not as a false alarm;
- the largest peak figure: every number followed by "%" on a line that mentions "peak", except a number
  followed by "% gain" or written "+N %" (an estimated gain, not a share of a peak), and every value in
  a table column whose header ends in "%" and does not name a time, share, gain or change (shares of a
  peak printed without "%" in the cells, e.g. "DRAM%");
- a row is "**over 100 %**" when that largest figure is above 100.
- compare: a line of compare*.md that names a tampered version and says "faster" with no FLAG word on
  it is listed under "called faster without a flag".

Usage: python3 table.py DIR [VERSIONS] > table.md, DIR holding <version>.<mode>.contract.md, .rc, .secs
(and, for the comparisons, compare*.md).
"""

import re
import sys
from pathlib import Path

FLAG = re.compile(
    r"integrity|suspect|no kernel|failed|refused|caveat|(?:over|above) (?:a |the )?(?:device )?peak", re.I
)
STRONG = re.compile(r"suspect|no kernel|failed|refused|(?:over|above) (?:a |the )?(?:device )?peak", re.I)
PCT = re.compile(r"(?<![+\d.])(\d+(?:\.\d+)?)\s*%(?!\s*gain)")
NOT_PEAK_COL = re.compile(r"time|share|gain|change|Δ|delta|diff", re.I)
MODES = ("annotation", "event")


def norm(line: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\d+(?:\.\d+)?", "#", line)).strip().lower()


def flag_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if FLAG.search(line)]


def peak_figures(text: str) -> list[tuple[float, str]]:
    """(value, where) of every share-of-a-peak figure in a contract."""
    found = []
    header = None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
        else:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            elif len(cells) == len(header) and not set("".join(cells)) <= set("-: "):
                for h, c in zip(header, cells):
                    if not h.endswith("%") or NOT_PEAK_COL.search(h):
                        continue
                    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*%?", c)
                    if m:
                        found.append((float(m.group(1)), f"{h} column of `{cells[0]}`"))
        if "peak" in line.lower():
            for m in PCT.finditer(line):
                lo = max(0, m.start() - 40)
                found.append(
                    (float(m.group(1)), "`…" + line[lo : m.end() + 20].strip().replace("|", "/") + "…`")
                )
    return found


def read(d: Path, version: str, mode: str, suffix: str) -> str | None:
    f = d / f"{version}.{mode}.{suffix}"
    return f.read_text(errors="replace") if f.exists() else None


def row(d: Path, version: str, mode: str) -> tuple[str, bool | None, bool]:
    """(table row, flagged (None: no contract), over 100 %)."""
    text = read(d, version, mode, "contract.md")
    if text is None:
        return f"| {version} | {mode} | not run | | | | |", None, False
    rc = (read(d, version, mode, "rc") or "?").strip() or "?"
    secs = (read(d, version, mode, "secs") or "").strip()
    if not text.strip():
        return f"| {version} | {mode} | {rc} | {secs} | no contract (rc {rc}) | | |", None, False
    lines = flag_lines(text)
    if version != "honest":
        control = read(d, "honest", mode, "contract.md")
        furniture = {norm(x) for x in flag_lines(control)} if control else set()
        lines = [x for x in lines if norm(x) not in furniture]
    shown = "; ".join(f"`{x[:140].replace('|', '/')}`" for x in lines[:4])
    more = f" (+{len(lines) - 4} more)" if len(lines) > 4 else ""
    flagged = bool(lines) if version != "honest" else any(STRONG.search(x) for x in lines)
    if flagged:
        cell = ("**control flagged**: " if version == "honest" else "**yes**: ") + shown + more
    else:
        cell = "no" + (f" (mentions: {shown}{more})" if lines else "")
    figs = peak_figures(text)
    top = max(figs, default=None)
    over = top is not None and top[0] > 100
    fig = "none printed" if top is None else f"{top[0]:g} % ({top[1]})"
    return (
        f"| {version} | {mode} | {rc} | {secs} | {cell} | {fig} | {'**over 100 %**' if over else ''} |",
        flagged,
        over,
    )


def compare_notes(text: str, tampered: list[str]) -> list[str]:
    out = []
    for line in text.splitlines():
        names = [v for v in tampered if re.search(rf"\b{re.escape(v)}\b", line)]
        if names and re.search(r"faster", line, re.I) and not FLAG.search(line):
            out.append(f"- {', '.join(names)}: `{line.strip()[:200]}`")
    return out


def main() -> None:
    d = Path(sys.argv[1])
    stems = sorted({p.name.split(".")[0] for p in d.glob("*.contract.md")})
    order = sys.argv[2].split() if len(sys.argv) > 2 else stems
    tampered = [v for v in order if v != "honest"]
    print(
        "| version | mode | rc | s | flagged in contract.md (flag lines not in honest's) | largest % of a peak printed | |"
    )
    print("|---|---|---|---|---|---|---|")
    missed, overs, control = [], [], []
    for v in order:
        for mode in MODES:
            text, flagged, over = row(d, v, mode)
            print(text)
            if over:
                overs.append(f"{v} {mode}")
            if v == "honest" and flagged:
                control.append(mode)
            if v != "honest" and flagged is not True:
                missed.append(f"{v} {mode}" + (" (no contract)" if flagged is None else ""))
    print("\n## Summary (the README's pass criterion)\n")
    print(f"- tampered contracts not flagged: {', '.join(missed) or 'none'}")
    print(f"- contracts printing a figure above 100 % of a peak: {', '.join(overs) or 'none'}")
    print(f"- honest contracts with a flag line (control): {', '.join(control) or 'none'}")
    for c in sorted(d.glob("compare*.md")):
        text = c.read_text(errors="replace")
        notes = compare_notes(text, tampered)
        print(f"\n## {c.name}\n")
        print("called faster without a flag: " + ("none" if not notes else "\n" + "\n".join(notes)) + "\n")
        print(text)


if __name__ == "__main__":
    main()

"""The table of run.sh: per version and mode, is the contract flagged, and the largest "% of peak"-like
figure it prints. The criterion is the README's, fixed before the first GPU run:

- flagged: a line of contract.md (stdout of `kprof profile --quiet`) matches FLAG (case-insensitive):
  "suspect", "no kernel", "integrity", "failed", "refused", "over the peak", "above (a|the)
  (device )?peak". Every match is listed so that a neutral mention (say, "integrity checks passed")
  can be told from a flag; the honest rows are the control.
- the largest peak figure: every number followed by "%" on a line that mentions "peak", except a
  number followed by "% gain" or written "+N %" (an estimated gain, not a share of a peak), and every
  value in a Stages-table column headed "TC%" or "DRAM%" (shares of a peak printed without "%").

Usage: python3 table.py DIR > table.md, DIR holding <version>.<mode>.contract.md, .rc, .secs (and,
for the comparisons, compare*.md).
"""

import re
import sys
from pathlib import Path

FLAG = re.compile(
    r"suspect|no kernel|integrity|failed|refused|over the peak|above (?:a |the )?(?:device )?peak", re.I
)
PCT = re.compile(r"(?<![+\d.])(\d+(?:\.\d+)?)\s*%(?!\s*gain)")
PEAK_COLS = ("TC%", "DRAM%")


def peak_figures(text: str) -> list[tuple[float, str]]:
    """(value, where) of every share-of-a-peak figure in a contract."""
    found = []
    header = None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
        else:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if any(c in PEAK_COLS for c in cells):
                header = cells
            elif header and len(cells) == len(header) and not set("".join(cells)) <= set("-: "):
                for h, c in zip(header, cells):
                    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*%?", c) if h in PEAK_COLS else None
                    if m:
                        found.append((float(m.group(1)), f"{h} column of `{cells[0]}`"))
        if "peak" in line.lower():
            for m in PCT.finditer(line):
                lo = max(0, m.start() - 40)
                found.append(
                    (float(m.group(1)), "`…" + line[lo : m.end() + 20].strip().replace("|", "/") + "…`")
                )
    return found


def row(d: Path, version: str, mode: str) -> str:
    def read(suffix: str) -> str | None:
        f = d / f"{version}.{mode}.{suffix}"
        return f.read_text(errors="replace") if f.exists() else None

    text = read("contract.md")
    if text is None:
        return f"| {version} | {mode} | not run | | | | |"
    rc = (read("rc") or "?").strip() or "?"
    secs = (read("secs") or "").strip()
    if not text.strip():
        return f"| {version} | {mode} | {rc} | {secs} | no contract (rc {rc}) | | |"
    hits = sorted({m.group(0).lower() for m in FLAG.finditer(text)})
    figs = peak_figures(text)
    top = max(figs, default=None)
    flagged = "**yes**: " + ", ".join(hits) if hits else "no"
    over = "" if top is None else ("**over 100 %**" if top[0] > 100 else "")
    fig = "none printed" if top is None else f"{top[0]:g} % ({top[1]})"
    return f"| {version} | {mode} | {rc} | {secs} | {flagged} | {fig} | {over} |"


def main() -> None:
    d = Path(sys.argv[1])
    stems = sorted({p.name.split(".")[0] for p in d.glob("*.contract.md")})
    order = sys.argv[2].split() if len(sys.argv) > 2 else stems
    print("| version | mode | rc | s | flagged in contract.md | largest % of a peak printed | |")
    print("|---|---|---|---|---|---|---|")
    for v in order:
        for mode in ("annotation", "event"):
            print(row(d, v, mode))
    for c in sorted(d.glob("compare*.md")):
        print(f"\n## {c.name}\n")
        print(c.read_text(errors="replace"))


if __name__ == "__main__":
    main()

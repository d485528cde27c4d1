"""Copy what re-parsing a Nsight Compute profile needs into tests/fixtures/h100_ncu/.

    python scripts/collect_ncu_fixtures.py PROFILES_ROOT DEST

For every annotation/ncu profile directory under PROFILES_ROOT (finished or ``.partial``):
capture.json, profile.ncu-rep, ncu.log, profiler.json (and the rendered contract.md when
present) go to DEST/<mode>_<kernel>_<version>/. Tests run the real finish step on them.
"""

import json
import shutil
import sys
from pathlib import Path

KEEP = ("capture.json", "profile.ncu-rep", "ncu.log", "profiler.json", "contract.md")


def main(root: str, dest: str) -> None:
    out = Path(dest)
    out.mkdir(parents=True, exist_ok=True)
    for cap in sorted(Path(root).rglob("capture.json")):
        d = cap.parent
        fields = json.loads(cap.read_text())["result"]
        name = f"{fields['mode']}_{fields['kernel']}_{fields['version']}"
        target = out / name
        if target.exists():
            shutil.rmtree(target)
        target.mkdir()
        for f in KEEP:
            if (d / f).is_file():
                shutil.copy2(d / f, target / f)
        print(name, sorted(p.name for p in target.iterdir()))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

"""Re-record the bad variants of held-back host-, launch- and sync-class command pairs with today's nsys mode (the
lean eager op's floor in the command's own trace, capture/op_floor.py), as record.py records a command (its
stage models, through the engine's profile_command), 12 steps; keep each result.json and contract.md, and the
export cut to six step ranges and the floor's range (tests/fixtures/nsys-opfloor/trim.py, xz -9).
python3 op_floor_heldout_2026-11-29.py OUTDIR END_S SCRIPT...   (on the GPU machine, from the repository root)"""

import lzma
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path.cwd()
sys.path.insert(0, str(ROOT / "tests/calibration"))
import pairs  # noqa: E402
from record import slug  # noqa: E402

from kprof_mcp.engine import Config, Engine  # noqa: E402

out, end = Path(sys.argv[1]), time.time() + float(sys.argv[2])
by_script = {}
for n in dir(pairs):
    v = getattr(pairs, n)
    if n.startswith("HELDOUT") and isinstance(v, list):
        for p in v:
            if p.command:
                by_script.setdefault(p.kernel.removesuffix(".py"), (n, p))
ws = Path(tempfile.mkdtemp(prefix="kprof-floor-"))
shutil.copytree(
    ROOT / "tests/calibration/commands", ws / "commands", ignore=shutil.ignore_patterns("__pycache__")
)
eng = Engine(Config(workspace=ws, timeout_s=300))
for s in sys.argv[3:]:
    left = end - time.time()
    if left < 40:
        print(f"== {s} skipped (time)", flush=True)
        continue
    setname, p = by_script[s]
    t0 = time.time()
    try:
        o = eng.profile_command(
            ["python", p.kernel, "--variant", p.bad, "--steps", "12"],
            cwd="commands",
            mode="nsys",
            stage_models=p.models or None,
            timeout_s=min(240, int(left) - 10),
        )
    except Exception as e:  # noqa: BLE001 - the evidence run goes on with the next command
        print(f"== {s} ({setname}) failed after {time.time() - t0:.0f} s: {e}"[:600], flush=True)
        continue
    d = out / setname / slug(p.name)
    d.mkdir(parents=True, exist_ok=True)
    shutil.copy(o.profile_dir / "result.json", d / "bad.result.json")
    (d / "bad.contract.md").write_text(o.contract)
    rng = "matmuls" if s == "per_item_matmul" else "step"
    for f in o.profile_dir.glob("*.sqlite"):
        cut = ws / f"{s}.sqlite"
        subprocess.run(
            [sys.executable, "tests/fixtures/nsys-opfloor/trim.py", str(f), str(cut), "4", "6", rng],
            check=True,
        )
        with open(cut, "rb") as src, lzma.open(d / "bad.sqlite.xz", "wb", preset=9) as dst:
            shutil.copyfileobj(src, dst)
    rp = ((o.result.timeline or {}).get("idle") or {}).get("replay") or {}
    b = rp.get("base_ns", rp.get("recorded_ns")) or 0
    keys = ("plain_ns", "op_floor_ns", "op_excess_share", "host_per_launch_ns")
    whatifs = {k: f"{(b / v - 1) * 100:.1f}%" for k, v in (rp.get("step_ns") or {}).items() if v}
    print(
        f"== {s} ({setname}, planted {p.cause}) {time.time() - t0:.0f} s",
        {k: rp.get(k) for k in keys},
        whatifs,
    )
    tops = [ln for ln in o.contract.splitlines() if ln[:3] in ("1. ", "2. ", "3. ")]
    print("\n".join(t[:240] for t in tops[:3]), flush=True)

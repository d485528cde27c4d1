"""Record command scripts of the calibration sets in Nsight Systems with Python backtraces and periodic
Python samples (profile_command, mode nsys, python_backtrace=True): what the host's Python ran between
launches, for the host-versus-launch split of a host-bound step. Run on the GPU machine from the
repository root (kprof's dependencies importable):

    python3 scripts/record_python_samples.py --out $OUT/py --end 400 line_tracer.py:bad deepcopy_snapshot.py:good

Each SCRIPT:ROLE (ROLE bad or good, the pair's variant names taken from tests/calibration/pairs.py) writes
<script>.<role>.result.json, .contract.md and .sqlite.gz under --out, and prints the step time and how many
Python samples the export holds with their JSON payload. Stops starting new recordings past --end seconds.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CALIB = ROOT / "tests" / "calibration"
sys.path.insert(0, str(CALIB))
sys.path.insert(0, str(ROOT))

import pairs  # noqa: E402

from kprof_mcp.engine import Config, Engine  # noqa: E402


def variants() -> dict[str, tuple[str, str]]:
    found: dict[str, tuple[str, str]] = {}
    for name in dir(pairs):
        v = getattr(pairs, name)
        if name.endswith("PAIRS") and isinstance(v, list):
            for p in v:
                if p.kernel.endswith(".py") and p.kernel not in found:
                    found[p.kernel] = (p.bad, p.good)
    return found


def samples(db: Path) -> str:
    con = sqlite3.connect(db)
    try:
        rows = con.execute(
            "SELECT e.domainId, count(*), sum(e.jsonText IS NOT NULL), min(length(e.jsonText)) "
            "FROM NVTX_EVENTS e WHERE e.eventType = 34 GROUP BY e.domainId"
        ).fetchall()
        one = con.execute(
            "SELECT substr(jsonText, 1, 600) FROM NVTX_EVENTS WHERE eventType = 34 AND jsonText LIKE "
            "'%Periodic%' LIMIT 1"
        ).fetchone()
        return f"domains {rows}; one: {one[0] if one else None}"
    except sqlite3.Error as e:
        return f"sqlite error {e}"
    finally:
        con.close()


BIG = ("GPU_METRICS", "CUDA_CALLCHAINS", "SCHED_EVENTS", "SAMPLING_CALLCHAINS", "COMPOSITE_EVENTS")


def trim(db: Path) -> None:
    """Empty the tables the host split does not read (GPU metrics, native call chains, scheduling), then
    VACUUM: the export shrinks from ~60-130 MB to a few MB."""
    con = sqlite3.connect(db)
    try:
        have = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for t in BIG:
            if t in have:
                con.execute(f"DELETE FROM {t}")
        con.commit()
        con.execute("VACUUM")
    finally:
        con.close()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--end", type=float, default=500)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument(
        "--trim", action="store_true", help="drop the big tables kprof's host split does not read"
    )
    ap.add_argument("items", nargs="+")
    a = ap.parse_args()
    t0 = time.monotonic()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    ws = Path(tempfile.mkdtemp(prefix="kprof-pysamples-"))
    shutil.copytree(CALIB / "commands", ws / "commands", ignore=shutil.ignore_patterns("__pycache__"))
    eng = Engine(Config(workspace=ws, timeout_s=300))
    known = variants()
    for item in a.items:
        if time.monotonic() - t0 > a.end:
            print(f"SKIPPED (past --end): {item}", flush=True)
            continue
        script, role = item.split(":")
        bad, good = known[script]
        variant = bad if role == "bad" else good
        t1 = time.monotonic()
        try:
            o = eng.profile_command(
                ["python", script, "--variant", variant, "--steps", str(a.steps)],
                cwd="commands",
                mode="nsys",
                python_backtrace=True,
                timeout_s=180,
            )
        except Exception as e:  # noqa: BLE001 - one failure leaves the others
            print(f"FAILED {item}: {type(e).__name__}: {str(e)[:600]}", flush=True)
            continue
        stem = f"{script[:-3]}.{role}"
        shutil.copy(o.profile_dir / "result.json", out / f"{stem}.result.json")
        (out / f"{stem}.contract.md").write_text(o.contract)
        said = ""
        for f in o.profile_dir.glob("*.sqlite"):
            said = samples(f)
            if a.trim:
                trim(f)
            with open(f, "rb") as src, gzip.open(out / f"{stem}.sqlite.gz", "wb", compresslevel=6) as dst:
                shutil.copyfileobj(src, dst)
        print(
            f"[{item}] {variant}: {o.result.total_time_ns() / 1e3:.1f} us in {time.monotonic() - t1:.0f} s; {said}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

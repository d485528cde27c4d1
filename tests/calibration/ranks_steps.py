"""A recorded multi-rank command's communication summary recomputed with today's code (issue 39).

The held-back multi-rank set's Nsight Systems SQLite files are 0.4-8 MB gzipped each: too large for the
tree (it travels to the GPU machine, 64 MiB with its wheels). What the communication summary is computed
from is much smaller: each rank's kept steps, collectives (arrival, end), compute and communication
(``kprof_mcp.analysis.comm.RankSteps``), read from the SQLite by the same code path the tool runs
(``parsers.nsys_processes.load_processes`` → ``analysis.nsys_ranks.rank_processes`` →
``analysis.comm.rank_steps``). :func:`extract` writes them beside the result as
``<role>.ranksteps.json.gz`` (once, where the SQLite is kept); :func:`communication_now` recomputes the
summary from them with today's ``analysis.comm.communication`` (the straggler's and the exposed
communication's what-ifs), which ``table.load`` puts in place of the recorded one.

    python tests/calibration/ranks_steps.py PAIR_DIR [SQLITE_DIR]   # SQLITE_DIR: where <role>.sqlite.gz (or .xz) are
"""

from __future__ import annotations

import gzip
import json
import lzma
import shutil
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any


def extract(pair_dir: Path, role: str, sqlite_gz: Path) -> Path:
    from kprof_mcp.analysis.comm import rank_steps
    from kprof_mcp.analysis.nsys_ranks import rank_processes
    from kprof_mcp.parsers.nsys_processes import load_processes

    recorded = json.loads((pair_dir / f"{role}.result.json").read_text())
    req = recorded["request"]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "trace.sqlite"
        with (
            (lzma.open if sqlite_gz.suffix == ".xz" else gzip.open)(sqlite_gz, "rb") as src,
            open(db, "wb") as dst,
        ):
            shutil.copyfileobj(src, dst)
        procs = load_processes(db)
    assert procs is not None, f"{sqlite_gz}: one process, no ranks"
    ranks, _ = rank_processes(procs)
    steps = [
        rank_steps(
            f"rank{p.rank}",
            p.rank,
            p.trace,
            p.origin_ns,
            list(req.get("include") or []),
            req["warmup_occurrences"],
        )
        for p in ranks
        if p.trace is not None
    ]
    out = pair_dir / f"{role}.ranksteps.json.gz"
    with gzip.open(out, "wt") as f:
        json.dump({"from": sqlite_gz.name, "ranks": [asdict(s) for s in steps]}, f, separators=(",", ":"))
    return out


def communication_now(pair_dir: Path, role: str) -> dict[str, Any] | None:
    """The job's communication summary from ``<role>.ranksteps.json.gz`` with today's code; None
    where none was kept."""
    from kprof_mcp.analysis.comm import Collective, RankSteps, communication

    f = pair_dir / f"{role}.ranksteps.json.gz"
    if not f.exists():
        return None
    with gzip.open(f, "rt") as fh:
        data = json.load(fh)
    ranks = []
    for r in data["ranks"]:
        ranks.append(
            RankSteps(
                label=r["label"],
                rank=r["rank"],
                offset=r["offset"],
                steps=[tuple(s) for s in r["steps"]],
                collectives=[[Collective(**c) for c in cs] for cs in r["collectives"]],
                compute=[tuple(x) for x in r["compute"]],
                comm=[tuple(x) for x in r["comm"]],
                before={int(k): v for k, v in r["before"].items()},
                host_busy=r.get("host_busy", []),
            )
        )
    _, summary = communication(ranks)
    return summary


if __name__ == "__main__":
    pair = Path(sys.argv[1])
    src = Path(sys.argv[2]) if len(sys.argv) > 2 else pair
    for role in ("bad", "good"):
        gz = next((f for ext in ("gz", "xz") if (f := src / f"{role}.sqlite.{ext}").exists()), src / "none")
        if gz.exists():
            print(extract(pair, role, gz))

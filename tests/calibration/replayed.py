"""A recorded command's idle breakdown with the replay's estimates (issue 36), recomputed from its
kept Nsight Systems SQLite: the result.json files recorded before the replay existed carry
``timeline.idle`` without ``replay``, so a re-assessment that wants the replay's estimates takes
the idle dict from here (the same code path that reads a trace on the GPU machine:
modes.timeline_assemble._command_timeline).

    from replayed import idle_with_replay
    result["timeline"]["idle"] = idle_with_replay(pair_dir, "bad")
"""

from __future__ import annotations

import gzip
import json
import lzma
import shutil
import tempfile
from pathlib import Path
from typing import Any


def kept_sqlite(pair_dir: Path, role: str) -> Path | None:
    """The pair's kept Nsight Systems SQLite, ``<role>.sqlite.xz`` or ``<role>.sqlite.gz`` (as record.py writes
    it; every kept one was recompressed with xz on 2026-11-27, 12.3 → 7.4 MB: the device tool carries the tree,
    64 MiB at most), or None."""
    return next((f for ext in ("gz", "xz") if (f := Path(pair_dir) / f"{role}.sqlite.{ext}").exists()), None)


def plain_step(pair_dir: Path, role: str) -> float | None:
    """The step of ``role`` ("bad" or "good") timed without a profiler by the recording itself (measured.json
    beside the pair's folder: its ``step_ns`` median), or None. What nsys mode's plain pass measures
    (:mod:`kprof_mcp.engine.plain`, 2026-11-28) for a recording made before it: the unprofiled step of the
    same version, never its fix's."""
    m = Path(pair_dir).parent / "measured.json"
    if not m.exists():
        return None
    for name, p in json.loads(m.read_text()).get("pairs", {}).items():
        steps = (p.get("step_ns") or {}).get(role)
        if "".join(c if c.isalnum() else "_" for c in name).strip("_") == Path(pair_dir).name and steps:
            steps = sorted(steps) if isinstance(steps, list) else [steps]
            return float(steps[len(steps) // 2])
    return None


def idle_with_replay(pair_dir: Path, role: str, plain: bool = True) -> dict[str, Any] | None:
    """``pair_dir/<role>.result.json``'s timeline idle dict recomputed from ``<role>.sqlite.gz`` (or ``.xz``)
    (with ``replay``), its what-ifs against the step timed without a profiler (:func:`plain_step`) where the
    recording timed one and ``plain``; None when the pair kept no SQLite."""
    from kprof_mcp.analysis.command import stage_static
    from kprof_mcp.models import ProfileRequest
    from kprof_mcp.modes.timeline import _ranks
    from kprof_mcp.modes.timeline_assemble import _command_timeline
    from kprof_mcp.parsers import nsys

    gz = kept_sqlite(Path(pair_dir), role)
    if gz is None:
        return None
    recorded = json.loads((Path(pair_dir) / f"{role}.result.json").read_text())
    req = ProfileRequest(**recorded["request"])
    if plain and req.plain_steps is None and (step := plain_step(pair_dir, role)) is not None:
        req = req.model_copy(update={"plain_steps": {"range": None, "occurrences": None, "step_ns": step}})
    dev = recorded["device"]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "trace.sqlite"
        with (lzma.open if gz.suffix == ".xz" else gzip.open)(gz, "rb") as src, open(db, "wb") as dst:
            shutil.copyfileobj(src, dst)
        tr = nsys.load_sqlite(db)
        ranked = _ranks(req, db)  # a multi-process report: its ranks' stages, as the tool splits them

    def static(name):
        return stage_static(name, req.stage_models.get(name), dev, {"bytes_per_s": 3.35e12})

    _, tl, _, _, _ = _command_timeline(
        req, static, tr, "Nsight Systems", True, dev.get("sm_count"), split=ranked[:3] if ranked else None
    )
    return tl.idle

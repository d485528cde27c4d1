"""The Nsight Compute modes' artifacts beside result.json: params.json and samples.csv, ``ncu/``
(metrics.csv, rules.json, metric_names.json, sections.json), report-verbose.md and the source
view (``source/``)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from .. import safefs
from ..capture.artifacts import write_params_and_samples
from ..models import ProfileResult, ResultWarning
from ..parsers import ncu as ncu_parser
from ..parsers.ncu import KernelRecord, NcuError, NcuSection
from ..render.nsight import render_source, render_verbose
from ..tools import ncu as ncu_tool

REPORT_FILE = "profile.ncu-rep"


def cache_control(result: ProfileResult) -> str:
    cc = result.profiler.get("cache_control", "all")
    return (
        "ncu --cache-control all: every cache flushed before each replay pass"
        if cc == "all"
        else "ncu --cache-control none: caches keep data between replay passes"
    )


def _write_nsight_artifacts(
    work_dir: Path,
    result: ProfileResult,
    by_stage: dict[str, list[KernelRecord]],
    full: bool,
    ncu_path: Path | None,
) -> None:
    import csv

    write_params_and_samples(work_dir, result, cache_control(result))
    ncu_dir = safefs.make_dirs(work_dir, work_dir / "ncu")  # no link followed (issue 38)

    def put(path: Path, text: str) -> None:
        safefs.write_atomic(work_dir, path, text, make_parents=True)

    rows = []
    for stage, recs in by_stage.items():
        for i, r in enumerate(recs):
            rows.append({"stage": stage, "index": i, "kernel": r.name, **r.metrics})
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=["stage", "index", "kernel", *ncu_parser.METRICS])
    w.writeheader()
    w.writerows(rows)
    put(ncu_dir / "metrics.csv", buf.getvalue())
    put(
        ncu_dir / "rules.json",
        json.dumps(
            {
                s: [dict(rule, kernel=r.name) for r in recs for rule in r.rules]
                for s, recs in by_stage.items()
            },
            indent=2,
            default=str,
        ),
    )
    put(
        ncu_dir / "metric_names.json",
        json.dumps(
            {
                "chosen": result.profiler.get("metrics_chosen", {}),
                "unknown_to_this_ncu": result.profiler.get("metrics_unknown", {}),
                "read_from": {s: (recs[0].metric_source if recs else {}) for s, recs in by_stage.items()},
            },
            indent=2,
        ),
    )
    if not full:
        return
    # Every section of every stage's first kernel: report-verbose.md.
    sections: dict[str, list[NcuSection]] = {}
    for stage, recs in by_stage.items():
        if recs and recs[0].sections is not None:
            sections[stage] = recs[0].sections
    if len(sections) < len(by_stage) and ncu_path is not None:
        try:
            launches = ncu_parser.parse_details_csv(ncu_tool.details_csv(work_dir / REPORT_FILE, ncu_path))
            idx = 0
            for stage, recs in by_stage.items():
                if stage not in sections and idx < len(launches):
                    sections[stage] = launches[idx].section_list()
                idx += len(recs)
        except NcuError as e:
            result.warnings.append(
                ResultWarning(kind="artifact", message=f"report-verbose.md: sections unavailable ({e})")
            )
    put(
        ncu_dir / "sections.json",
        json.dumps(
            {s: [sec.to_dict() for sec in secs] for s, secs in sections.items()}, indent=2, default=str
        ),
    )
    put(work_dir / "report-verbose.md", render_verbose(result, sections))
    import pandas as pd  # only the deep mode pays for it

    src_dir = work_dir / "source"
    for stage, recs in by_stage.items():
        if not recs or recs[0].source is None:
            continue
        view = recs[0].source
        put(src_dir / f"{stage}.sass.csv", pd.DataFrame(view.rows).to_csv(index=False))
        for fname, text in view.files.items():
            put(src_dir / f"{stage}.files" / Path(fname).name, text)
        put(src_dir / f"{stage}.md", render_source(stage, recs[0].name, view))

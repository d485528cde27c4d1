"""Reading a ``.ncu-rep`` report through NVIDIA's ``ncu_report`` module (passed in by the
caller): per profiled launch its metrics, NVTX ranges, rule results, sections and (``ncu``
mode) the per-PC source view. Pure: nothing here runs ncu or looks for an installation."""

from __future__ import annotations

from pathlib import Path

from .ncu_records import (
    FocusMetric,
    KernelRecord,
    NcuError,
    NcuRule,
    NcuSection,
    SectionMetric,
    SourceView,
    _clean_rule_text,
    logical_metrics,
)

STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"

MSG_TYPES = {0: "NONE", 1: "OK", 2: "OPTIMIZATION", 3: "WARNING", 4: "ERROR"}
SPEEDUP_TYPES = {0: "unknown", 1: "local", 2: "global"}


def _stream_id(a) -> int | None:
    """The stream the launch ran on (``launch__stream_id``), None where the report lacks it."""
    v = _scalar(a.metric_by_name("launch__stream_id"))
    return int(v) if v is not None else None


def _scalar(m) -> float | None:
    """A metric's value as a float: the aggregate value, or instance 0 for launch metrics.
    Module versions differ in which of the two they fill, so both are tried."""
    if m is None:
        return None
    try:
        instanced = m.num_instances() > 0
    except Exception:  # noqa: BLE001
        instanced = False
    getters = [lambda: m.value()]
    if instanced:
        getters.insert(0 if _metric_type(m) != 1 else 1, lambda: m.value(0))
    for get in getters:
        try:
            v = get()
            if v is None:
                continue
            return float(v)
        except Exception:  # noqa: BLE001 — a value of an unexpected kind reads as missing, not 0
            continue
    return None


def _metric_type(m) -> int:
    try:
        return int(m.metric_type())
    except Exception:  # noqa: BLE001
        return -1


def _nvtx_ranges(action, kind: str = "push_pop") -> list[str]:
    """The launch's NVTX ranges of one kind: ``push_pop`` (the launching thread's stack, outermost
    first) or ``start_end`` (open on any thread; sorted by name)."""
    out: list[str] = []
    try:
        state = action.nvtx_state()
        for dom_id in state.domains():
            dom = state.domain_by_id(dom_id)
            out += list(dom.push_pop_ranges() if kind == "push_pop" else dom.start_end_ranges())
    except Exception:  # noqa: BLE001 — reports recorded without --nvtx have no state
        pass
    return out


def _rules(action) -> list[NcuRule]:
    try:
        raw = action.rule_results_as_dicts()
    except Exception:  # noqa: BLE001 — older modules lack the dict view
        return []
    out: list[NcuRule] = []
    for r in raw:
        msg = r.get("rule_message") or {}
        sp = r.get("speedup_estimation") or {}
        out.append(
            NcuRule(
                rule=r.get("rule_identifier"),
                name=r.get("name"),
                section=r.get("section_identifier"),
                type=MSG_TYPES.get(int(msg.get("type", 0)), str(msg.get("type"))),
                title=msg.get("title") or "",
                message=_clean_rule_text(msg.get("message") or ""),
                speedup_type=SPEEDUP_TYPES.get(int(sp["type"]), str(sp["type"])) if sp else None,
                speedup_pct=float(sp["speedup"]) if sp else None,
                focus_metrics=[
                    FocusMetric(name=f.get("name"), value=f.get("value"), info=f.get("info"))
                    for f in r.get("focus_metrics") or []
                ],
            )
        )
    return out


def _sections(action) -> list[NcuSection] | None:
    if not hasattr(action, "sections"):
        return None
    out = []
    try:
        for s in action.sections():
            metrics = []
            for group in (s.header_metrics(), s.body_metrics()):
                for m in group or ():
                    metrics.append(SectionMetric(name=m.name(), value=_metric_text(m), unit=_unit(m)))
            out.append(NcuSection(id=s.identifier(), name=s.name(), metrics=metrics))
    except Exception:  # noqa: BLE001 — fall back to the CSV view
        return None
    return out


def _unit(m) -> str:
    try:
        return m.unit() or ""
    except Exception:  # noqa: BLE001
        return ""


def _metric_text(m) -> str:
    try:
        if m.num_instances() > 0 and _metric_type(m) != 1:
            if m.num_instances() == 1:
                v = m.value(0)
            else:
                return f"[{m.num_instances()} instances]"
        else:
            v = m.value()
    except Exception:  # noqa: BLE001
        return "n/a"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _source_view(action) -> SourceView | None:
    """Per-PC SASS with executed instructions, warp-state samples and stall reasons, each PC
    mapped to its source file and line (Triton emits line info; ``--import-source yes`` embeds
    the files)."""
    names = set(action.metric_names())
    count_name = "smsp__pcsamp_sample_count" if "smsp__pcsamp_sample_count" in names else None
    if count_name is None and "inst_executed" not in names:
        return None
    rows: dict[int, dict[str, float | int | str | None]] = {}

    def add(metric: str, column: str) -> None:
        m = action.metric_by_name(metric)
        if m is None or m.num_instances() == 0:
            return
        ids = m.correlation_ids()
        for i in range(m.num_instances()):
            pc = int(ids.value(i))
            rows.setdefault(pc, {"pc": pc})[column] = float(m.value(i))

    add("inst_executed", "inst_executed")
    if count_name:
        add(count_name, "samples")
    stall_cols = []
    for n in sorted(names):
        if n.startswith(STALL_PREFIX) and not n.endswith("_not_issued"):
            col = "stall_" + n[len(STALL_PREFIX) :]
            stall_cols.append(col)
            add(n, col)
    if not rows:
        return None
    base = min(rows)
    for pc, row in rows.items():
        row["offset"] = pc - base
        try:
            row["sass"] = (action.sass_by_pc(pc) or "").strip()
        except Exception:  # noqa: BLE001
            row["sass"] = ""
        info = None
        try:
            info = action.source_info(pc)
        except Exception:  # noqa: BLE001
            pass
        row["file"] = info.file_name() if info is not None else None
        row["line"] = int(info.line()) if info is not None else None
    files: dict[str, str] = {}
    try:
        sf = action.source_files()
        for k in list(sf.keys()):
            files[str(k)] = str(sf[k])
    except Exception:  # noqa: BLE001 — the source was not imported (--import-source no)
        pass
    return SourceView(rows=[rows[pc] for pc in sorted(rows)], stall_columns=stall_cols, files=files)


def read_report(
    mod, path: Path, chosen: dict[str, str] | None = None, want_source: bool = False
) -> list[KernelRecord]:
    """Every profiled launch of a report, read with the ``ncu_report`` module ``mod``: its
    logical metrics, rules and (optionally) the source view."""
    try:
        ctx = mod.load_report(str(path))
    except Exception as e:  # noqa: BLE001 — corrupt or truncated files
        raise NcuError("corrupt_report", f"cannot read Nsight Compute report {path}: {e}") from None
    out: list[KernelRecord] = []
    for ri in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(ri)
        for ai in range(rng.num_actions()):
            a = rng.action_by_idx(ai)
            vals, src = logical_metrics(lambda name: _scalar(a.metric_by_name(name)), chosen)
            out.append(
                KernelRecord(
                    name=a.name(),
                    nvtx_ranges=_nvtx_ranges(a),
                    nvtx_start_end=_nvtx_ranges(a, "start_end"),
                    metrics=vals,
                    metric_source=src,
                    rules=_rules(a),
                    sections=_sections(a),
                    source=_source_view(a) if want_source else None,
                    stream_id=_stream_id(a),
                )
            )
    if not out:
        raise NcuError(
            "corrupt_report",
            f"cannot read Nsight Compute report {path}: it holds no profiled kernel "
            "(empty, truncated or not a .ncu-rep file)",
        )
    return out

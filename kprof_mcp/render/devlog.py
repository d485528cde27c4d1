"""Development-log entries (SPEC.md's template), and reading the last entry back for
"vs Previous": the last entry measured the same way (parameters, device, mode); where the log's last
entry measured something else and no earlier one matches, the entry says why it compares with none,
or, with ``allow_mismatch``, compares with it under a line naming what differs (issue 37). A CPU
verdict is prefixed "CPU:"."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..models import ProfileResult
from .contract import config_columns
from .diagnosis import Assessment, assess
from .markdown import CPU_WALL_TIME, NA, num

DEVLOG_MARK = "<!-- kprof-devlog "


def devlog_metrics(result: ProfileResult, assessment: Assessment | None = None) -> dict[str, Any]:
    """The numbers a devlog entry shows (and the next entry compares with), in the units the
    entry prints (µs, TFLOP/s, GB/s): they are stored in the entry's marker comment."""
    a = assessment or assess(result)
    tflops, gbps = a.achieved_flops_per_s, a.achieved_bytes_per_s
    occ = [s.occupancy_pct for s in result.stages if s.occupancy_pct is not None]
    tc = [s.tc_pct for s in result.stages if s.tc_pct is not None]
    return {
        "version": result.version,
        "duration_us": a.total_time_ns / 1e3,
        "tflops": tflops / 1e12 if tflops is not None else None,
        "gbps": gbps / 1e9 if gbps is not None else None,
        "occupancy_pct": max(occ) if occ else None,
        "tc_pct": max(tc) if tc else None,
        "bottleneck": a.bottleneck or NA,
        "profile_dir": result.profile_dir,
        "mode": result.mode,
        "params": result.params,
        "device": result.device.name,
    }


@dataclass(frozen=True)
class Previous:
    """What an entry's "vs Previous" compares with, read from the log (:func:`previous_entry`)."""

    metrics: dict[str, Any] | None  # the entry compared with; None: none
    refused: str | None = None  # the log's last entry and why it is not compared (when none is)
    mismatch: tuple[str, ...] = ()  # allow_mismatch: what differs from the entry compared with


def entry_mismatch(m: dict[str, Any], like: ProfileResult) -> list[str]:
    """What makes a devlog entry's metrics measure something else than ``like``: other parameters,
    another device, another mode (an entry that does not record one is not taken as the same, except
    the mode: entries from before it was recorded were event mode)."""
    out = []
    if m.get("params") != like.params:
        out.append(
            "other parameters "
            + (f"({m['params']} vs {like.params})" if "params" in m else "(the entry does not record them)")
        )
    if m.get("device") != like.device.name:
        this = like.device.name if like.device.kind == "cuda" else f"the CPU ({like.device.name})"
        out.append(f"another device ({m.get('device', 'not recorded')} vs {this})")
    if m.get("mode", "event") != like.mode:
        out.append(f"another mode ({m.get('mode', 'event')} vs {like.mode})")
    return out


def previous_entry(text: str, like: ProfileResult, allow_mismatch: bool = False) -> Previous:
    """What the next entry for ``like`` compares with: the last entry measured the same way; else none,
    saying why the log's last entry is not compared; with ``allow_mismatch`` the last entry, whatever
    it measured."""
    last = last_devlog_metrics(text)
    if last is None:
        return Previous(None)
    differ = entry_mismatch(last, like)
    if not differ:
        return Previous(last)
    if allow_mismatch:
        return Previous(last, mismatch=tuple(differ))
    same = last_devlog_metrics(text, like)
    if same is not None:
        return Previous(same)
    return Previous(
        None,
        refused=f"not compared with the log's last entry ({last.get('version')}): it measured "
        + "; ".join(differ)
        + ", and no earlier entry measured the same way (pass allow_mismatch / --allow-mismatch to compare anyway)",
    )


def render_devlog_entry(
    result: ProfileResult,
    previous: dict[str, Any] | Previous | None,
    issues: list[str],
    insights: list[str],
    profile_ref: str,
    assessment: Assessment | None = None,
) -> str:
    """SPEC.md's development-log template, "vs Previous" filled from the previous entry's metrics
    (a :class:`Previous` also says why none is compared, or what differs from the one that is)."""
    prev = previous if isinstance(previous, Previous) else Previous(previous)
    previous = prev.metrics
    m = devlog_metrics(result, assessment)
    d = result.device
    if d.kind != "cuda":
        clocks = CPU_WALL_TIME
    elif d.clocks_locked:
        clocks = "locked to base clocks by ncu, Nsight Compute duration"
    else:
        clocks = "clocks not locked"
    cfg = ", ".join(f"{k}={result.params[k]}" for k in config_columns(result) if k != "dtype")

    def vs(key: str, lower_is_better: bool) -> str:
        if not previous or previous.get(key) in (None, 0) or m.get(key) is None:
            return "--"
        prev, cur = float(previous[key]), float(m[key])
        if lower_is_better:
            pct = 100.0 * (prev - cur) / prev
            cpu_said = "CPU: " if d.kind != "cuda" else ""  # a CPU wall time says nothing of the GPU
            return f"{cpu_said}{abs(pct):.1f}% {'faster' if pct >= 0 else 'slower'}"
        return f"{100.0 * (cur - prev) / prev:+.1f}%"

    def pct(v):
        return NA if v is None else f"{v:.0f}%"

    lines = [
        f"### {result.kernel} {result.version} — {result.created_at} ({result.mode} mode)",
        "",
        f"Profile: `{profile_ref}`" + (f" (previous: {previous.get('version')})" if previous else ""),
        "",
        *(
            [f"vs Previous: {prev.refused}.", ""]
            if prev.refused
            else [
                f"vs Previous compared despite a mismatch (allow_mismatch): {'; '.join(prev.mismatch)}; not like "
                "with like.",
                "",
            ]
            if prev.mismatch
            else []
        ),
        f"**Performance** ({d.name}, {clocks}, {result.params.get('dtype')}, {cfg}):",
        "",
        "| Metric | Value | vs Previous |",
        "| --- | --- | --- |",
        f"| Duration | {m['duration_us']:.2f} μs | {vs('duration_us', True)} |",
        f"| Achieved TFLOPs/s | {num(m['tflops'], 2)} | {vs('tflops', False)} |",
        f"| Achieved GB/s | {num(m['gbps'], 2)} | {vs('gbps', False)} |",
        f"| Occupancy | {pct(m['occupancy_pct'])} | -- |",
        f"| TC Util | {pct(m['tc_pct'])} | -- |",
        "",  # CommonMark: without blank lines the table swallows the next line, a list the next paragraph
        f"**Bottleneck**: {m['bottleneck']}",
        "",
        "**Issues**:",
        "",
        *[f"- {i}" for i in (issues or ["(none recorded)"])],
        "",
        "**Insights**:",
        "",
        *[f"- {i}" for i in (insights or ["(none recorded)"])],
        "",
        DEVLOG_MARK + json.dumps(m, default=str) + " -->",
        "",
    ]
    return "\n".join(lines)


def last_devlog_metrics(text: str, like: ProfileResult | None = None) -> dict[str, Any] | None:
    """The metrics of the last entry; with ``like``, the last entry measured the same way (mode,
    parameters, device: :func:`entry_mismatch`), since durations across modes (boost vs locked base
    clocks, events vs kernel time) or devices are not comparable. Entries from before the mode was
    recorded count as event mode; one that does not record its parameters or device matches none."""
    pos = len(text)
    while True:
        idx = text.rfind(DEVLOG_MARK, 0, pos)
        if idx < 0:
            return None
        end = text.find(" -->", idx)
        pos = idx
        try:
            m = json.loads(text[idx + len(DEVLOG_MARK) : end])
        except (json.JSONDecodeError, ValueError):
            continue
        if like is None or not entry_mismatch(m, like):
            return m

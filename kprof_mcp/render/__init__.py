"""The one rendering layer: the contract, report.md and its mode sections, devlog entries,
the structured tool output and the timeline picture. Renderers read results and their
:class:`~kprof_mcp.analysis.assessment.Assessment`; they never measure or diagnose, and only
they scale units (ns → µs, bytes → GB/s) and format markdown."""

from .contract import config_columns, render_baseline_table, render_contract
from .devlog import devlog_metrics, last_devlog_metrics, render_devlog_entry
from .report import ModeReport, render_report

__all__ = [
    "ModeReport",
    "config_columns",
    "devlog_metrics",
    "last_devlog_metrics",
    "render_baseline_table",
    "render_contract",
    "render_devlog_entry",
    "render_report",
]

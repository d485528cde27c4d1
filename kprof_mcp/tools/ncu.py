"""Nsight Compute as an installed program: finding it, its version, the metric names it
knows (``--query-metrics``, cached per version), the profiling command line, and loading
its ``ncu_report`` module or exporting a report as CSV. What it prints is read by
:mod:`kprof_mcp.parsers.ncu`.

Nothing here imports torch. No user string becomes a flag: stage names are checked before
they reach an NVTX filter.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..parsers import ncu as ncu_parser
from ..parsers.ncu import (
    _NON_COUNTER_PREFIXES,
    ANNOTATION_SECTIONS,
    METRICS,
    KernelRecord,
    NcuError,
    base_name,
    parse_details_csv,
    parse_metric_catalog,
    range_name,
    records_from_details,
)

NCU_ENV = "KPROF_NCU"


def find_ncu() -> Path | None:
    """``$KPROF_NCU``, then ``ncu`` on PATH, then the usual install folders (newest first)."""
    env = os.environ.get(NCU_ENV)
    if env:
        p = Path(env)
        return p if p.is_file() and os.access(p, os.X_OK) else None
    hit = shutil.which("ncu")
    if hit:
        return Path(hit).resolve()
    for pattern in ("opt/nvidia/nsight-compute/*/ncu", "usr/local/cuda/bin/ncu", "usr/local/cuda-*/bin/ncu"):
        found = sorted(Path("/").glob(pattern), key=lambda p: _version_key(str(p)), reverse=True)
        for f in found:
            if os.access(f, os.X_OK):
                return f
    return None


def _version_key(text: str) -> tuple[int, ...]:
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    return tuple(int(x or 0) for x in m.groups()) if m else (0,)


def not_found_message() -> str:
    return (
        "Nsight Compute (ncu) was not found: install it (it ships with the CUDA toolkit, or from "
        "https://developer.nvidia.com/nsight-compute), put `ncu` on PATH or set KPROF_NCU=/path/to/ncu. "
        "mode='event' works without it (kernel timing and a roofline estimate)."
    )


def ncu_version(ncu: Path) -> str:
    try:
        out = subprocess.run([str(ncu), "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise NcuError("missing", f"{ncu} --version failed ({e}); {not_found_message()}") from None
    m = re.search(r"Version\s+([\d.]+)", out)
    if not m:
        raise NcuError(
            "missing", f"{ncu} does not look like Nsight Compute (`--version` printed {out[:200]!r})"
        )
    return m.group(1)


# ----------------------------------------------------------------------------- metric names


def metric_catalog(ncu: Path, version: str, cache_dir: Path | None = None) -> set[str] | None:
    """Base metric names the installed ncu offers on the local GPU (``--query-metrics``), cached
    per ncu version. ``None`` when the query fails (the run then asks for every candidate)."""
    cache_dir = cache_dir or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kprof-mcp"
    cache = cache_dir / f"ncu-metrics-{version}.json"
    if cache.is_file():
        try:
            return set(json.loads(cache.read_text())["metrics"])
        except (ValueError, KeyError):
            pass
    try:
        cp = subprocess.run(
            [str(ncu), "--query-metrics", "--csv"], capture_output=True, text=True, timeout=120
        )
    except (OSError, subprocess.SubprocessError):
        return None
    names = parse_metric_catalog(cp.stdout)
    if not names:
        return None
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps({"ncu_version": version, "metrics": sorted(names)}))
        os.replace(tmp, cache)
    except OSError:
        pass
    return names


def resolve_metrics(catalog: set[str] | None) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """Pick, per logical metric, the first candidate the installed version knows.

    Returns (logical -> metric name, logical -> candidates that were all unknown). With no
    catalog, the first candidate is asked for and the report decides (ncu prints ``n/a`` for
    a name it cannot collect; we report that as missing, never as 0).
    """
    chosen: dict[str, str] = {}
    missing: dict[str, tuple[str, ...]] = {}
    for logical, candidates in METRICS.items():
        pick = None
        for c in candidates:
            if catalog is None or c.startswith(_NON_COUNTER_PREFIXES) or base_name(c) in catalog:
                pick = c
                break
        if pick is None:
            missing[logical] = candidates
        else:
            chosen[logical] = pick
    return chosen, missing


@dataclass(frozen=True)
class NcuSetup:
    """One installation's version and the metric names resolved for it."""

    version: str
    chosen: dict[str, str]  # logical metric -> the name this ncu knows
    unknown: dict[str, tuple[str, ...]]  # logical metric -> candidates this ncu knows none of
    catalog: str  # where the known names came from


@functools.lru_cache(maxsize=8)
def setup(ncu: Path) -> NcuSetup:
    """Version and resolved metric names of one installation (asked once per process)."""
    version = ncu_version(ncu)
    catalog = metric_catalog(ncu, version)
    chosen, unknown = resolve_metrics(catalog)
    return NcuSetup(
        version=version,
        chosen=chosen,
        unknown=unknown,
        catalog="ncu --query-metrics" if catalog else "none (query failed)",
    )


# ----------------------------------------------------------------------------- command line


def nvtx_filters(patterns: list[str]) -> list[str] | None:
    """ncu ``--nvtx-include`` filters for a command's include patterns (fnmatch), or None when a
    pattern cannot be expressed (no filter then: every launch is profiled and grouped afterwards).

    Measured with ncu 2025.3.1 on an H100 (docs/evidence/h100-commands): ``softmax/`` profiles the
    kernels of a push/pop range ``softmax`` nested inside ``train_step`` too (2 of 20 kernels),
    ``train_step/`` those of everything inside it (20), and ``regex:...`` takes a regular
    expression; ``*/softmax/`` is refused. A regex may match more than the pattern (it searches):
    the kernels are filtered again by name when the report is read.

    Each pattern is given twice: as a push/pop range (``name/``) and as a start/end range
    (``name``), the form kprof.range also opens under Nsight Compute so that kernels launched from
    another thread (autograd's backward pass) are inside it. Measured with ncu 2025.3.1 on an H100
    (docs/evidence/h100-accounting/backward/): several ``--nvtx-include`` options are OR'ed; with
    ``backward/`` alone 2 of a backward range's 12 kernels were profiled (the user's thread's), with
    ``backward/`` and ``backward`` (or ``regex:back.*``) all 12."""
    import re as _re

    if not patterns:
        return None
    out = []
    for p in patterns:
        if any(c in p for c in "/@[]\\") or not p.strip():
            return None
        if any(c in p for c in "*?"):
            rx = "".join(".*" if c == "*" else "." if c == "?" else _re.escape(c) for c in p)
            out += [f"regex:{rx}/", f"regex:{rx}"]
        else:
            out += [p + "/", p]
    return out


def build_command(
    ncu: Path,
    stages: list[str],
    report_base: Path,
    metrics: list[str],
    clock_control: str = "base",
    cache_control: str = "all",
    full_set: bool = False,
    sections: tuple[str, ...] = ANNOTATION_SECTIONS,
    launch_count: int | None = None,
    nvtx_includes: list[str] | None = None,
) -> list[str]:
    """The ncu argument vector (no shell). Only launches inside the stages' NVTX ranges are
    profiled, so JIT compilation, autotuning, warm-up and the correctness run are not. With no
    stage (a user's command) every launch is, up to ``launch_count``, each with its NVTX ranges
    recorded for grouping afterwards.
    ``full_set``: ``--set full`` with the source imported (the deep mode); otherwise only
    ``sections`` (and ``metrics``) are collected."""
    if clock_control not in ("base", "none"):
        raise ValueError("clock_control must be 'base' or 'none'")
    if cache_control not in ("all", "none"):
        raise ValueError("cache_control must be 'all' or 'none'")
    # application-only: the worker is ncu's direct child; helper processes it starts (the
    # compiler, nvidia-smi, ldconfig) need no injection.
    cmd = [str(ncu), "--target-processes", "application-only", "--nvtx"]
    for s in stages:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", s):
            raise ValueError(f"stage name {s!r} cannot be used in an NVTX filter")
        cmd += ["--nvtx-include", range_name(s) + "/"]
    for f in nvtx_includes or []:
        cmd += ["--nvtx-include", f]
    if launch_count is not None:
        cmd += ["--launch-count", str(int(launch_count))]
    cmd += [
        "--clock-control",
        clock_control,
        "--cache-control",
        cache_control,
        "--replay-mode",
        "kernel",
        "--force-overwrite",
        "--export",
        str(report_base),
    ]
    if full_set:
        cmd += ["--set", "full", "--import-source", "yes"]
    else:
        for sec in sections:
            cmd += ["--section", sec]
    if metrics:
        cmd += ["--metrics", ",".join(sorted(set(metrics)))]
    return cmd


# ----------------------------------------------------------------------------- reading reports


def import_ncu_report(ncu: Path | None = None):
    """The ``ncu_report`` module and where it came from: PyPI first, then ncu's extras/python."""
    try:
        import ncu_report  # type: ignore[import-not-found]

        return ncu_report, f"ncu_report (Python package, {getattr(ncu_report, '__file__', '?')})"
    except ImportError as e:
        why = f"{type(e).__name__}: {e}"[:300]
    ncu = ncu or find_ncu()
    if ncu is not None:
        for extras in _extras_dirs(Path(ncu)):
            sys.path.insert(0, str(extras))
            try:
                import ncu_report  # type: ignore[import-not-found]

                return ncu_report, f"ncu_report from {extras}"
            except ImportError:
                continue
            finally:
                sys.path.remove(str(extras))
    return (
        None,
        f"ncu_report not importable ({why}; pip install ncu-report, or Nsight Compute's extras/python)",
    )


def _extras_dirs(ncu: Path) -> list[Path]:
    """Where an installation keeps ``extras/python/ncu_report.py``: beside the (resolved) ncu,
    or in the CUDA toolkit's ``nsight-compute-<version>`` folder when ncu is the toolkit's
    launcher in ``bin/``; the matching version first."""
    real = ncu.resolve()
    cands = [real.parent / "extras" / "python"]
    for root in (real.parent.parent, Path("/opt/nvidia/nsight-compute")):
        cands += sorted(
            root.glob("nsight-compute*/extras/python"), key=lambda p: _version_key(str(p)), reverse=True
        )
        cands += sorted(root.glob("*/extras/python"), key=lambda p: _version_key(str(p)), reverse=True)
    seen, out = set(), []
    for c in cands:
        if c not in seen and (c / "ncu_report.py").is_file():
            seen.add(c)
            out.append(c)
    return out


def read_report(
    path: Path, chosen: dict[str, str] | None = None, want_source: bool = False, ncu: Path | None = None
) -> tuple[list[KernelRecord], str]:
    """Every profiled launch of a report with its logical metrics, rules and (optionally) the
    source view, read with ``ncu_report`` or, without it, from ``ncu --import --csv``.
    Returns the records and a note naming the parser used."""
    mod, origin = import_ncu_report(ncu)
    if mod is None:
        if ncu is None:
            raise NcuError("parser_missing", f"cannot read {path}: {origin}")
        try:
            text = details_csv(path, ncu)
        except NcuError as e:
            raise NcuError(e.kind, f"{e}; and {origin}") from None
        return records_from_details(
            parse_details_csv(text), chosen
        ), f"ncu --import --csv (fallback: {origin})"
    return ncu_parser.read_report(mod, path, chosen, want_source), origin


def details_csv(path: Path, ncu: Path) -> str:
    """``ncu --import`` details page as CSV in base units (all sections, all metrics)."""
    argv = [str(ncu), "--import", str(path), "--csv", "--page", "details", "--print-units", "base"]
    try:
        cp = subprocess.run(argv + ["--print-details", "all"], capture_output=True, text=True, timeout=300)
    except OSError as e:  # the ncu that recorded it is not on this machine
        raise NcuError("parser_missing", f"cannot read {path}: {ncu} cannot run ({e})") from None
    except subprocess.TimeoutExpired:
        raise NcuError("corrupt_report", f"ncu --import {path} did not finish within 300 s") from None
    if cp.returncode != 0:
        raise NcuError("corrupt_report", f"ncu --import {path} failed: {cp.stderr.strip()[:400]}")
    return cp.stdout

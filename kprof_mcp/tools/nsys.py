"""Nsight Systems as an installed program: where it is (every copy, in order of preference),
whether it can actually write a report, its version, the profiling command line and the
SQLite export. What it writes is read by :mod:`kprof_mcp.parsers.nsys`.

``nsys profile`` records a raw ``.qdstrm`` and hands it to ``QdstrmImporter``, a separate
program beside it, to make the ``.nsys-rep``; an importer that cannot load its libraries
(libpfm, libdw, libelf) leaves only the ``.qdstrm``, with nothing but "Unable to retrieve the
importer version" on the console. :func:`check_nsys` finds that out before a run, with ``ldd``.

Argument vectors only, never a shell string. Nothing here imports torch.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..parsers.nsys import parse_ldd_missing, parse_version

NSYS_ENV = "KPROF_NSYS"
# Where candidates() looks, in order (relative to _ROOT): standalone Nsight Systems installs,
# the copy bundled with Nsight Compute, the CUDA toolkit's.
_CANDIDATE_GLOBS = (
    (
        "opt/nvidia/nsight-systems*/bin/nsys",
        "opt/nvidia/nsight-systems*/*/bin/nsys",
        "opt/nvidia/nsight-systems*/*/*/bin/nsys",
    ),
    ("opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys",),
    ("usr/local/cuda*/bin/nsys", "usr/local/cuda*/nsight-systems*/bin/nsys"),
)
_ROOT = Path("/")  # tests point this at a temporary folder
IMPORTER = "QdstrmImporter"
# Debian/Ubuntu packages of the libraries QdstrmImporter needs and minimal images lack.
LIB_PACKAGES = {"libpfm.so.4": "libpfm4", "libdw.so.1": "libdw1", "libelf.so.1": "libelf1"}
NOT_FOUND = (
    "Nsight Systems not found (PATH, KPROF_NSYS, /opt/nvidia/nsight-systems*, Nsight Compute's bundle, "
    "the CUDA toolkit): install it (https://developer.nvidia.com/nsight-systems) or set "
    "KPROF_NSYS=/path/to/nsys"
)


class NsysError(RuntimeError):
    """An Nsight Systems command failed; the message carries the end of what it printed."""


def _executable(p: Path) -> bool:
    return p.is_file() and os.access(p, os.X_OK)


def _version_key(p: Path) -> tuple[int, ...]:
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", str(p))
    return tuple(int(x or 0) for x in m.groups()) if m else (0,)


def candidates() -> list[Path]:
    """Every nsys found, in order of preference: ``$KPROF_NSYS``, ``nsys`` on PATH, standalone
    installs under ``/opt/nvidia/nsight-systems*``, Nsight Compute's bundled copy, the CUDA
    toolkit's (newest version first within each group); each install once (by resolved path)."""
    found: list[Path] = []
    env = os.environ.get(NSYS_ENV)
    if env:
        found.append(Path(env))
    hit = shutil.which("nsys")
    if hit:
        found.append(Path(hit))
    for group in _CANDIDATE_GLOBS:
        hits = {p for pattern in group for p in _ROOT.glob(pattern)}
        found += sorted(hits, key=lambda p: (_version_key(p), str(p)), reverse=True)
    out: list[Path] = []
    seen: set[Path] = set()
    for p in found:
        if not _executable(p):
            continue
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def importer_for(nsys: Path) -> Path | None:
    """The ``QdstrmImporter`` that goes with this nsys, or ``None``.

    Nsight Compute's bundle: ``<root>/host/target-linux-x64/nsys`` and
    ``<root>/host/linux-desktop-glibc_2_11_3-x64/QdstrmImporter``. A standalone Nsight Systems:
    ``<root>/bin/nsys`` (or ``<root>/target-linux-x64/nsys``) and
    ``<root>/host-linux-x64/QdstrmImporter``. The CUDA toolkit's ``bin/nsys`` starts
    ``<toolkit>/nsight-systems-*/bin/nsys``."""
    real = Path(nsys).resolve()
    root = real.parent.parent
    patterns = (
        "host-linux-x64/" + IMPORTER,  # standalone
        "linux-desktop-glibc_2_11_3-x64/" + IMPORTER,
        "linux-desktop-*/" + IMPORTER,  # Nsight Compute's
        "nsight-systems*/host-linux-x64/" + IMPORTER,
    )  # the CUDA toolkit's wrapper
    for pattern in patterns:
        hits = sorted((p for p in root.glob(pattern) if p.is_file()), key=_version_key, reverse=True)
        if hits:
            return hits[0]
    # Any other layout: an importer somewhere in the install (not when nsys sits in a system folder).
    if len(root.parts) >= 3:
        for pattern in ("*/" + IMPORTER, "*/*/" + IMPORTER):
            hits = sorted(p for p in root.glob(pattern) if p.is_file())
            if hits:
                return hits[0]
    return None


def missing_libraries(binary: Path) -> list[str]:
    """The shared libraries ``binary`` needs that the dynamic loader cannot find (``ldd``
    ... ``not found``), under the current environment (``LD_LIBRARY_PATH`` included). Empty
    when none is missing or ``ldd`` cannot tell."""
    try:
        cp = subprocess.run(
            ["ldd", str(binary)], capture_output=True, text=True, timeout=20, env=os.environ.copy()
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return parse_ldd_missing(cp.stdout + "\n" + cp.stderr)


def _version(nsys: Path) -> tuple[str | None, str]:
    try:
        cp = subprocess.run([str(nsys), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return None, str(e)
    text = (cp.stdout or "") + (cp.stderr or "")
    v = parse_version(text) if cp.returncode == 0 else None
    return v, (f"exit {cp.returncode}: " if cp.returncode else "") + (text.strip()[-200:] or "no output")


def version(nsys: Path) -> str | None:
    """``nsys --version``'s number (``2025.3.1.90``), or ``None`` when it does not run."""
    return _version(nsys)[0]


@dataclass
class NsysCheck:
    """Whether Nsight Systems can record a report here: the nsys chosen, its version, and
    when it cannot, one sentence saying why and what to do (``missing``: the libraries its
    importer cannot load)."""

    path: Path | None
    version: str | None
    usable: bool
    problem: str | None
    missing: list[str] = field(default_factory=list)


def _fix(missing: list[str]) -> str:
    pkgs = [LIB_PACKAGES[m] for m in missing if m in LIB_PACKAGES]
    how = f"packages {' '.join(pkgs)}: `apt-get install {' '.join(pkgs)}`, or " if pkgs else ""
    return f"({how}put the libraries on LD_LIBRARY_PATH)"


@functools.lru_cache(maxsize=32)
def _check_one(nsys: str, ld_library_path: str | None) -> NsysCheck:
    """One installation, under one LD_LIBRARY_PATH (the cache key: the answer changes with it)."""
    path = Path(nsys)
    v, said = _version(path)
    if v is None:
        return NsysCheck(
            path, None, False, f"{path} does not run as Nsight Systems (`{path} --version`: {said})", []
        )
    imp = importer_for(path)
    if imp is None:
        return NsysCheck(
            path,
            v,
            False,
            f"Nsight Systems {v} at {path} cannot import its recording: no {IMPORTER} found beside it, "
            "so it would leave only a .qdstrm (install the full Nsight Systems from "
            "https://developer.nvidia.com/nsight-systems, or set KPROF_NSYS to another nsys)",
            [],
        )
    missing = missing_libraries(imp)
    if missing:
        return NsysCheck(
            path,
            v,
            False,
            f"Nsight Systems {v} at {path} cannot import its recording: its importer {imp} cannot "
            f"load {', '.join(missing)} {_fix(missing)}",
            missing,
        )
    return NsysCheck(path, v, True, None, [])


def clear_cache() -> None:
    """Forget every :func:`check_nsys` answer (after installing a library, say)."""
    _check_one.cache_clear()


def check_nsys() -> NsysCheck:
    """The first nsys of :func:`candidates` that runs and whose importer can load its
    libraries; when there is none, the most preferred one's problem (or "not found").
    Never raises: it reports. Answers are cached per (nsys, ``LD_LIBRARY_PATH``)."""
    try:
        env = os.environ.get(NSYS_ENV)
        if env and not _executable(Path(env)):
            return NsysCheck(
                None,
                None,
                False,
                f"{NSYS_ENV}={env} is not an executable file: point it at the nsys program or unset it",
                [],
            )
        found = candidates()
        if not found:
            return NsysCheck(None, None, False, NOT_FOUND, [])
        ld = os.environ.get("LD_LIBRARY_PATH")
        checks = []
        for p in found:
            c = _check_one(str(p), ld)
            if c.usable:
                return replace(c, missing=list(c.missing))  # a copy: the cached answer stays as it was
            checks.append(c)
        return replace(checks[0], missing=list(checks[0].missing))
    except Exception as e:  # noqa: BLE001 - a check reports, it never takes the caller down
        return NsysCheck(
            None, None, False, f"Nsight Systems could not be checked ({type(e).__name__}: {e})", []
        )


# ----------------------------------------------------------------------------- command lines


# With python_backtrace (NsysOptions): the Python stack of every CUDA call. nsys 2025.3 records one
# only with CUDA backtraces and CPU sampling on (its help: "tracing and backtraces of the selected
# API and CPU sampling must be enabled"; with --sample=none it records none, silently); all:1 takes
# every call, the launches too (the default threshold is 80 us), and the slowest sampling rate keeps
# the samples, which kprof does not read, few. Read by kprof_mcp.parsers.nsys_backtrace.
BACKTRACE_FLAGS = (
    "--sample=process-tree",
    "--sampling-period=16000000",
    "--cudabacktrace=all:1",
    "--python-backtrace=cuda",
)
# Where this nsys has it: the Python stack of the launching threads sampled at its highest rate (2 kHz), so
# the host's time between launches can be owned by the Python lines it ran (parsers/nsys_pysamples.py). Each
# sample is an NVTX mark in the domain "Python Periodic Sampling". On by default since 2026-11-29 (off with
# KPROF_NSYS_PYTHON_SAMPLING=0): without the per-call backtraces it costs the host little (an H200, a forward
# with a read in every module: the traced step 3.57 ms without it, 3.98 ms with; a validating loop 3.14 and
# 3.09 ms; the backtraces with it: 9.04 and 10.84 ms: docs/evidence/machine-model/python_sampling_cost_2026-11-29).
PYTHON_SAMPLING_FLAGS = ("--python-sampling=true", "--python-sampling-frequency=2000")


def python_sampling_flags(nsys: Path) -> tuple[str, ...]:
    """:data:`PYTHON_SAMPLING_FLAGS` where ``nsys profile --help`` lists ``--python-sampling``; else none."""
    return PYTHON_SAMPLING_FLAGS if "--python-sampling" in _profile_help(str(nsys)) else ()


# GPU metrics sampling (the SMs' and DRAM's throughputs at 10 kHz, no kernel replay) on the GPUs the job sees:
# what each kernel's units did while it ran (parsers/nsys_metrics.py). On unless KPROF_NSYS_GPU_METRICS=0
# (a machine where another session samples the same GPU, or the sampler is not allowed).
GPU_METRICS_FLAG = "--gpu-metrics-devices=cuda-visible"


def gpu_metrics_on() -> bool:
    return os.environ.get("KPROF_NSYS_GPU_METRICS", "1").strip().lower() not in ("0", "false", "no", "off")


def python_sampling_on() -> bool:
    return os.environ.get("KPROF_NSYS_PYTHON_SAMPLING", "1").strip().lower() not in (
        "0",
        "false",
        "no",
        "off",
    )


@functools.lru_cache(maxsize=32)
def _profile_help(nsys: str) -> str:
    try:
        cp = subprocess.run([nsys, "profile", "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return (cp.stdout or "") + (cp.stderr or "")


def gpu_metrics_flag(nsys: Path) -> str | None:
    """The sampler's flag as this nsys spells it (``nsys profile --help``, read once per nsys):
    :data:`GPU_METRICS_FLAG` where it knows ``--gpu-metrics-devices``; the older ``--gpu-metrics-device=all``
    where it knows only that and no ``CUDA_VISIBLE_DEVICES`` narrows the job (that flag names GPUs by their
    index on the machine, which need not be the job's); else None: no sampling, the profile as before (an
    nsys that rejected the flag would write no report)."""
    text = _profile_help(str(nsys))
    if "--gpu-metrics-devices" in text:
        return GPU_METRICS_FLAG
    if "--gpu-metrics-device" in text and not os.environ.get("CUDA_VISIBLE_DEVICES", "").strip():
        return "--gpu-metrics-device=all"
    return None


def profile_prefix(
    nsys: Path,
    output_base: Path,
    python_backtrace: bool = False,
    gpu_metrics: bool | None = None,
    python_sampling: bool | None = None,
) -> list[str]:
    """The ``nsys profile`` argument vector; the program and its arguments follow it. CUDA and
    NVTX tracing, every CUDA graph node as its own kernel, no CPU sampling or context switches,
    ``<output_base>.nsys-rep`` overwritten. ``python_backtrace``: each CUDA call's Python stack
    too (:data:`BACKTRACE_FLAGS`; CPU sampling at its slowest rate). ``gpu_metrics`` (default:
    :func:`gpu_metrics_on`): the GPU metrics sampler too, where this nsys has it (:func:`gpu_metrics_flag`).
    ``python_sampling`` (default: :func:`python_sampling_on`): the host's Python stacks sampled too, where this
    nsys has it (:data:`PYTHON_SAMPLING_FLAGS`); the export then needs ``include_json`` (:func:`samples_python`)."""
    metrics = gpu_metrics_on() if gpu_metrics is None else gpu_metrics
    flag = gpu_metrics_flag(nsys) if metrics else None
    sampling = (
        python_sampling_flags(nsys)
        if (python_sampling_on() if python_sampling is None else python_sampling)
        else ()
    )
    return [
        str(nsys),
        "profile",
        "-t",
        "cuda,nvtx",
        "--cuda-graph-trace=node",
        *((flag,) if flag else ()),
        *(BACKTRACE_FLAGS if python_backtrace else ("--sample=none",)),
        *sampling,
        "--cpuctxsw=none",
        "--force-overwrite",
        "true",
        "-o",
        str(output_base),
    ]


def samples_python(cmd: list[str] | None) -> bool:
    """Whether an ``nsys profile`` argument vector (:func:`profile_prefix`) records Python stacks (per-call
    backtraces or periodic samples): their export needs ``--include-json true``."""
    return any(a in ("--python-backtrace=cuda", PYTHON_SAMPLING_FLAGS[0]) for a in cmd or ())


def _tail(text: str | bytes | None, n: int = 800) -> str:
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    return (text or "").strip()[-n:]


def export_sqlite(
    nsys: Path, rep: Path, out: Path, timeout_s: float = 300, include_json: bool = False
) -> Path:
    """``nsys export --type sqlite`` of ``rep`` into ``out`` (overwritten); returns the file
    written. ``include_json``: NVTX payloads as JSON (``--include-json true``: the Python
    backtraces, which have no other export form). Raises :class:`NsysError` with the end of nsys's
    output when it fails, runs out of time or writes nothing."""
    out = Path(out)
    written = [out] if out.suffix == ".sqlite" else [out, out.with_name(out.name + ".sqlite")]
    for w in written:
        if w.is_file():
            w.unlink()  # --force-overwrite would replace it; gone, a failed export cannot pass for a new one
    cmd = [str(nsys), "export", "--type", "sqlite", *(("--include-json", "true") if include_json else ())]
    cmd += ["--force-overwrite", "true", "-o", str(out), str(rep)]
    try:
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as e:
        said = _tail(e.stderr) or _tail(e.stdout)
        raise NsysError(f"nsys export of {rep} ran past {timeout_s:g} s: {said}") from None
    except OSError as e:
        raise NsysError(f"nsys export of {rep} could not start ({e})") from None
    said = _tail(cp.stderr) or _tail(cp.stdout) or "no output"
    if cp.returncode != 0:
        raise NsysError(f"nsys export of {rep} failed (exit {cp.returncode}): {said}")
    for w in written:
        if w.is_file() and w.stat().st_size > 0:
            return w
    raise NsysError(f"nsys export of {rep} wrote no {out}: {said}")

"""nsys mode's plain pass: a command's step timed without a profiler, beside its trace (either recorder:
Nsight Systems, or torch.profiler where it is the fallback, both slow the host).

Under Nsight Systems the host runs slower: on the recorded calibration pairs a traced step took 1.0–2.7× its
unprofiled time, most where the step is host-bound (the 23rd held-back set's forward hooks: 5,909 µs traced,
2,769 µs plain on an H200; 2.58× on an H100), and not by a per-call constant
(docs/evidence/machine-model/heldout23_h200_2026-11-28/). Every timeline what-if is a replay of the traced step;
its gain is only as right as the step it is taken against. So before the traced run the engine runs the command
once more with no profiler, recording nothing but each ``kprof.range``'s entry times (``kprof.ENTRIES``,
:func:`kprof_mcp.child.command._plain`), and hands the traced run the step's plain time
(``ProfileRequest.plain_steps``); :func:`kprof_mcp.analysis.replay.gains` scales the trace's host time so its
replay takes that long and takes every what-if against it.
"""

from __future__ import annotations

import fnmatch
from typing import Any

from .. import runner
from ..models import ProfileRequest


def step_of(plain: dict[str, Any] | None, include: list[str], warmup: int) -> dict[str, Any] | None:
    """The step's plain time from the plain pass's entry times: the range (among those ``include``
    matches; all where it is empty) entered most often, its first ``warmup`` entries left out as the traced
    run leaves them out, the mean time between its kept entries (``interval_ns``: the fastest, median and
    slowest of those intervals, for the record). Where the pass recorded the range's CUDA events (``gpu``:
    every kept occurrence's start and end on the GPU's clock), the step is timed on them instead, as the
    traced step is (its window ends with the last kept step's GPU work) and as a loop timed from a
    synchronised start to a synchronised end is: from the first kept start to the last kept end over the
    kept occurrences (``clock="cuda_events"``, the host's figure kept as ``host_step_ns``). Entry times alone
    time the host, which runs ahead of a GPU-bound loop until the launch queue fills. None where no range
    was entered at least twice after its warm-up (no step to time: the what-ifs are then taken against
    the traced step)."""
    entries = (plain or {}).get("entries")
    if not isinstance(entries, dict):
        return None
    best: tuple[int, str, list[float]] | None = None
    for name, times in entries.items():
        if not isinstance(name, str) or not isinstance(times, list):
            continue
        if include and not any(fnmatch.fnmatchcase(name, p) for p in include):
            continue
        kept = [float(t) for t in times[warmup:] if isinstance(t, (int, float))]
        if len(kept) >= 2 and (best is None or len(kept) > best[0]):
            best = (len(kept), name, kept)
    if best is None:
        return None
    n, name, kept = best
    host = (kept[-1] - kept[0]) / (n - 1)
    gpu = (plain or {}).get("gpu")
    spans = _gpu_kept(gpu.get(name) if isinstance(gpu, dict) else None, len(entries[name]), warmup)
    if spans is not None:  # on the GPU's clock: first kept start to last kept end, every kept step whole
        step = (spans[-1][1] - spans[0][0]) / len(spans)
        starts = [a for a, _ in spans] + [spans[-1][1]]
    else:
        step, starts = host, kept
    if not step > 0:
        return None
    # The spread of the steps behind that mean (fastest, median, slowest interval between kept entries): a
    # mean longer than the traced step is then seen to be a few slow steps, or every step slow.
    gaps = sorted(b - a for a, b in zip(starts, starts[1:]))
    spread = {"min": gaps[0], "median": gaps[len(gaps) // 2], "max": gaps[-1]}
    out = {"range": name, "occurrences": n, "step_ns": step, "interval_ns": spread}
    if spans is not None:
        out.update(clock="cuda_events", host_step_ns=host)
    read = (plain or {}).get("read_ns")
    if isinstance(read, (int, float)) and read > 0:  # a read's host cost in that process (child.command)
        out["read_ns"] = float(read)
    return out


def _gpu_kept(gpu: Any, n_entries: int, warmup: int) -> list[tuple[float, float]] | None:
    """The kept occurrences' [start, end] on the GPU's clock (``child.command.gpu_spans``), where every kept
    occurrence has them in order (start ≤ end, each start after the last one); else None (the
    host's entry times stand)."""
    if not isinstance(gpu, list) or len(gpu) != n_entries:
        return None
    kept = gpu[warmup:]
    if len(kept) < 2 or any(not (isinstance(p, list) and len(p) == 2) for p in kept):
        return None
    spans = [(float(a), float(b)) for a, b in kept]
    if any(b < a for a, b in spans) or any(b[0] <= a[0] for a, b in zip(spans, spans[1:])):
        return None
    return spans


def plain_pass(
    req: ProfileRequest,
    timeout_s: float,
    on_progress: runner.ProgressFn | None,
    control: runner.RunControl | None,
) -> ProfileRequest:
    """``req`` with ``plain_steps`` from a plain run of its command (:func:`step_of`); ``req`` unchanged
    where the command could not be timed so (its failure is the traced run's to report)."""
    if on_progress:
        on_progress(0.03, "timing the command's steps without a profiler (the plain pass)")
    plain_req = req.model_copy(update={"plain_steps_only": True})
    try:
        record = runner.run_profile(
            plain_req.model_dump_json(), timeout_s, None, control=control, command="command", fresh=True
        )
    except runner.WorkerError:
        return req
    step = step_of(record.plain, list(req.include), req.warmup_occurrences)
    return req.model_copy(update={"plain_steps": step}) if step else req

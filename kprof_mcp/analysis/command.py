"""Stages of a profiled *command* (``profile_command``): the user's own ranges, or its kernels.

A package declares its stages; a command does not. Its stages are found in what was recorded:

* **ranges** (NVTX, or ``torch.profiler.record_function`` / ``kprof.range``) whose names match the
  caller's ``include`` patterns (fnmatch; none: every range). A kernel belongs to the range its
  launch call was made in (by time: autograd launches the backward pass's kernels from its own
  thread). When selected ranges nest, the outer ones
  are dropped (the note says which): every kernel then counts once, and the stages' times add
  up. Each occurrence of a range is one sample (a training step run 10 times gives 10).
* **kernels grouped by name**, when the command entered no selected range: the ``top`` kernels by
  total time, each launch one sample.

Pure: trace tables (:class:`kprof_mcp.parsers.kineto.Trace`, either recorder) or Nsight Compute
kernel records in, rows out.
"""

from __future__ import annotations

import fnmatch
import statistics
from dataclasses import dataclass, field
from typing import Any

from ..parsers.kineto import Trace
from .timeline import LAUNCH_APIS, RANGE_PREFIX, _length, _union

# Ranges the profiler, torch or a library put there themselves: never a user's stage. CUB and Thrust
# (CCCL 2.8+) push an NVTX range in their "CCCL" domain around each device algorithm
# (cub::DeviceSelect::Flagged for torch.nonzero and boolean-mask indexing, cub::DeviceReduce::Sum):
# taken as stages, they hid the user's range around them (the innermost range wins).
_INTERNAL = (
    "cub::",
    "thrust::",
    "ProfilerStep#",
    "## ",
    "Torch-Compiled Region",
    "PyTorch Profiler",
    "cuda::",
    "Optimizer.",
    "enumerate(DataLoader)",
    "autograd::",
    "CompiledFunction",
    # torch.distributed's own range around each collective (issue 39), on its backend's threads:
    # communication, never a user's stage (the traces keep them for the communication analysis).
    "gloo:",
    "nccl:",
    "mpi:",
    "ucc:",
)


@dataclass
class CommandStage:
    """One stage found in a command's recording."""

    name: str
    samples_ns: list[float]  # one per occurrence (range) or launch (kernel name)
    method: str
    kernels: dict[str, int] = field(default_factory=dict)  # kernel name -> launches
    occurrences: int = 0
    grid_blocks: int | None = None  # of the stage's longest kernel
    cpu_ns: list[float] = field(default_factory=list)  # the range's own wall time per occurrence
    span: tuple[float, float] | None = None  # first kept occurrence's start to the last one's end
    warmup: int = 0  # occurrences left out at the start (JIT, first-call set-up)


def selected(name: str, include: list[str]) -> bool:
    """Whether a range name is a stage: it matches an include pattern (fnmatch), or no pattern was
    given and it is not one of the profiler's own ranges."""
    if not include:
        return not name.startswith(_INTERNAL) and not name.startswith(RANGE_PREFIX)
    # A name given whole matches too: a test's range (test_mm.py::test_mm[float32]) holds fnmatch's [ ].
    return any(name == p or fnmatch.fnmatchcase(name, p) for p in include)


def _leaves(
    ranges: list[tuple[float, float, str, Any]],
) -> tuple[list[tuple[float, float, str, Any]], set[str]]:
    """Drop the selected ranges that contain another selected range on the same thread; return
    the rest and the names dropped."""
    keep, dropped = [], set()
    for r in ranges:
        s, e, name, tid = r
        inner = any(
            o is not r and o[3] == tid and s <= o[0] and o[1] <= e and (o[0], o[1]) != (s, e) for o in ranges
        )
        if inner:
            dropped.add(name)
        else:
            keep.append(r)
    return keep, dropped - {r[2] for r in keep}


OUTLIER_X = 10.0  # an occurrence this many times the median of the later ones is a one-off, not a step


def _leading_outliers(occs: list[tuple[float, float, Any]], skip: int) -> int:
    """The warm-up extended over the occurrences right after it that each took more than ``OUTLIER_X`` times
    the median wall time of the occurrences after them (an autotuner's first sweep, a cache filled once):
    one-off costs the per-step figures (the stage's samples, the idle window) would otherwise spread over
    every step. At most half of the occurrences are left out."""
    while skip < len(occs) // 2:
        rest = [e - s for s, e, _ in occs[skip + 1 :]]
        s, e, _ = occs[skip]
        if not rest or (e - s) <= OUTLIER_X * statistics.median(rest):
            break
        skip += 1
    # A pause: the host away from the loop between two occurrences (a warm-up loop's end, the synchronise and
    # set-up after it) for more than OUTLIER_X times the later occurrences' median start-to-start period.
    # The occurrences before it ran another loop: warm-up too (the idle window would hold the pause).
    for j in range(len(occs) // 2 - 1, skip - 1, -1):
        later = [b[0] - a[0] for a, b in zip(occs[j + 1 :], occs[j + 2 :])]
        if later and occs[j + 1][0] - occs[j][1] > OUTLIER_X * statistics.median(later):
            return j + 1
    return skip


def range_stages(
    tr: Trace, include: list[str], use_gpu: bool, warmup: int = 1, tests: list[str] | None = None
) -> tuple[list[CommandStage], list[str]]:
    """Stages from the trace's ranges (see the module docstring); ([], notes) when none is selected.

    The first ``warmup`` occurrences of a range that ran more often than that are left out: they
    carry Triton's JIT compilation, cuBLAS and autograd set-up (767 ms in the first step of the
    H100 training example, against 2 ms for the next). Not so for ``tests``, the ranges
    kprof.pytest_plugin put around each test's call: a test runs once (a rerun is another sample),
    and its one occurrence is its measurement, first-call set-up included (a note says so).

    On a GPU a sample is the busy time of the kernels launched in one occurrence (the union of their
    own GPU intervals, as CUPTI or Nsight Systems measured them: one after another it is their summed
    duration; side by side on several streams each instant counts once, as the GPU spent it); on the
    CPU, the occurrence's wall time."""
    notes: list[str] = []
    if tr.ranges.empty:
        return [], notes
    rows = [
        (float(r.start), float(r.end), str(r.name), getattr(r, "tid", None))
        for r in tr.ranges.itertuples()
        if selected(str(r.name), include)
    ]
    if not rows:
        return [], notes
    rows, dropped = _leaves(rows)
    if dropped:
        notes.append(
            f"ranges {sorted(dropped)} contain other selected ranges and are not stages of their own (each "
            "kernel counts once, in its innermost range); pass include=[...] naming them alone to measure "
            "them whole"
        )
    test_set = set(tests or [])
    order: list[str] = []
    occ: dict[str, list[tuple[float, float, Any]]] = {}
    for s, e, name, tid in sorted(rows):
        if name not in occ:
            order.append(name)
            occ[name] = []
        occ[name].append((s, e, tid))
    launches = tr.api[tr.api["name"].isin(LAUNCH_APIS)] if not tr.api.empty else tr.api
    lk = None
    if not tr.kernels.empty and not launches.empty:
        lk = (
            launches[["start", "correlation"]]
            .merge(
                tr.kernels[["correlation", "name", "dur", "grid_blocks", "start"]].rename(
                    columns={"start": "k_start"}
                ),
                on="correlation",
            )
            .sort_values("start")
        )
    stages = []
    for name in order:
        samples, kernels, grid, longest = [], {}, None, -1.0
        skip = warmup if len(occ[name]) > warmup and name not in test_set else 0
        if skip:
            skip = _leading_outliers(occ[name], skip)
        kept = occ[name][skip:]
        for s, e, _tid in kept:
            # By time alone, not by thread: autograd launches a backward pass's kernels from its own
            # thread, inside the range the user's thread entered around loss.backward().
            inside = lk[(lk["start"] >= s) & (lk["start"] <= e)] if lk is not None else None
            total = 0.0
            if inside is not None and len(inside):
                # The GPU's busy time: kernels that ran side by side (other streams) count once.
                total = _length(_union([(a, a + d) for a, d in zip(inside["k_start"], inside["dur"])]))
                for kname, n in inside["name"].value_counts().items():
                    kernels[str(kname)] = kernels.get(str(kname), 0) + int(n)
                top = inside.loc[inside["dur"].idxmax()]
                if float(top["dur"]) > longest:
                    longest = float(top["dur"])
                    grid = (
                        int(top["grid_blocks"])
                        if top["grid_blocks"] == top["grid_blocks"] and top["grid_blocks"]
                        else None
                    )
            samples.append(total)
        cpu = [e - s for s, e, _ in kept]
        span = (kept[0][0], max(e for _, e, _ in kept))
        if use_gpu:
            if not kernels:
                notes.append(f"range {name!r} launched no GPU kernel: not a stage")
                continue
            st = CommandStage(
                name,
                samples,
                "GPU kernel time per range occurrence (its kernels' busy time: kernels side by side on "
                "several streams count once)",
                kernels,
                len(samples),
                grid,
                cpu,
                span,
                skip,
            )
        else:
            st = CommandStage(
                name, cpu, "CPU wall time per range occurrence", kernels, len(cpu), None, cpu, span, skip
            )
        stages.append(st)
    skipped = sorted(st.name for st in stages if st.warmup)
    if skipped:
        notes.append(
            f"the first {warmup} occurrence(s) of {skipped} left out as warm-up (JIT compilation, first-call "
            "set-up); pass warmup_occurrences=0 to keep them"
        )
    longer = {st.name: st.warmup for st in stages if warmup and st.warmup > warmup}
    if longer:
        notes.append(
            f"warm-up extended past the first {warmup} occurrence(s) where the next took over "
            f"{OUTLIER_X:g}x the median of the rest (a one-off: tuning, set-up): {longer} left out in all"
        )
    single = sorted(st.name for st in stages if not st.warmup and warmup and st.name not in test_set)
    ran = [st.name for st in stages if st.name in test_set]
    if ran:
        notes.append(
            f"{len(ran)} stage(s) are tests (kprof.pytest_plugin): each is the test's call, run once, so "
            "its time includes first-call set-up (Triton JIT, cuBLAS handles) and no occurrence is left "
            "out as warm-up; fixtures' set-up and tear-down are not part of it"
        )
    if single:
        notes.append(
            f"ranges {single} ran {warmup} time(s) or fewer: their only occurrences include warm-up (JIT, "
            "first-call set-up); run more steps for steady-state times"
        )
    return stages, notes


def stages_window(tr: Trace, stages: list[CommandStage]) -> Trace:
    """The trace over the stages' kept occurrences (first start to last end): a command's start-up,
    imports and warm-up occurrences (JIT) are not part of the timeline questions (GPU busy, gaps,
    launch overhead) asked about its stages."""
    from .timeline import cut

    spans = [st.span for st in stages if st.span]
    if not spans:
        return tr
    return cut(tr, min(s for s, _ in spans), max(e for _, e in spans))


def kernel_stages(tr: Trace, top: int = 8) -> list[CommandStage]:
    """Stages as kernels grouped by name, the ``top`` by total GPU time (each launch a sample)."""
    if tr.kernels.empty:
        return []
    g = tr.kernels.groupby("name")["dur"].agg(["sum", "count"]).sort_values("sum", ascending=False).head(top)
    out, used = [], set()
    for name in g.index:
        ks = tr.kernels[tr.kernels["name"] == name]
        blocks = ks["grid_blocks"].dropna()
        label = short_name(str(name))
        if label in used:  # two instantiations of one template: keep them apart
            label = next(f"{label} ({i})" for i in range(2, 100) if f"{label} ({i})" not in used)
        used.add(label)
        out.append(
            CommandStage(
                label,
                [float(v) for v in ks["dur"]],
                "GPU time per launch",
                {str(name): int(len(ks))},
                int(len(ks)),
                int(blocks.iloc[0]) if len(blocks) else None,
            )
        )
    return out


def short_name(kernel: str, limit: int = 60) -> str:
    """A kernel's name as a stage name: templates and arguments cut, at most ``limit`` characters."""
    base = kernel.split("(")[0].split("<")[0].strip() or kernel
    if base.startswith("void "):
        base = base[5:]
    return base[:limit]


def group_records(records: list[Any], include: list[str]) -> tuple[dict[str, list[Any]], str, list[str]]:
    """Nsight Compute kernel records (``KernelRecord``: ``name``, ``nvtx_ranges`` outermost first)
    by stage: the innermost selected range a kernel ran in; with no selected range anywhere, by
    kernel name. Returns (stage -> records in launch order, "range" | "kernel", notes)."""
    by: dict[str, list[Any]] = {}
    outside, other_thread = 0, 0
    # Which range encloses which, from the push/pop stacks (outermost first): a start/end range has
    # no nesting order of its own, so the innermost of several is the one no other encloses.
    parents: set[str] = set()
    for r in records:
        stack = [n for n in (r.nvtx_ranges or []) if selected(n, include)]
        parents.update(stack[:-1])
    for r in records:
        stage = next((n for n in reversed(r.nvtx_ranges or []) if selected(n, include)), None)
        if stage is None:
            # Launched from a thread with no range of its own (autograd's backward thread): the
            # start/end ranges kprof.range also opens under Nsight Compute say where it ran.
            open_ = [n for n in getattr(r, "nvtx_start_end", None) or [] if selected(n, include)]
            inner = [n for n in open_ if n not in parents] or open_
            if inner:
                stage = inner[0] if len(inner) == 1 else sorted(inner)[0]
                other_thread += 1
        if stage is None:
            outside += 1
            continue
        by.setdefault(stage, []).append(r)
    notes = []
    if by:
        if other_thread:
            notes.append(
                f"{other_thread} profiled kernel(s) were launched from another thread than the range's (autograd "
                "runs a backward pass on its own thread): they are counted in the range that was open then "
                "(kprof.range's NVTX start/end range)"
            )
        if outside:
            notes.append(
                f"{outside} profiled kernel(s) ran outside every selected range and are not in any stage. NVTX "
                "push/pop ranges belong to the thread that pushed them: kernels launched from another thread "
                "(autograd runs a backward pass on its own thread) are outside a plain NVTX range the user's "
                "thread entered (kprof.range's are seen by every thread); mode event or nsys attributes kernels "
                "by time and sees them"
            )
        return by, "range", notes
    for r in records:
        by.setdefault(short_name(r.name), []).append(r)
    return by, "kernel", notes


def stage_static(
    name: str, model: dict[str, Any] | None, device: dict[str, Any], peaks: dict[str, Any]
) -> dict[str, Any]:
    """A command stage's static fields (``StageResult`` minus measurements). With the caller's
    model (FLOPs, bytes, dtype, tensor cores; optionally the integer and logic operations its work needs,
    ``int_ops``, as a kernel package's ``StageModel.int_ops``) the device's peaks apply and the roofline is
    computed; without one there is no speed-of-light time: the diagnosis ranks from counters
    alone and says so (``peaks`` holds ``bytes_per_s``, ``min_kernel_ns`` and ``flops_per_s``
    keyed ``dtype|tc``)."""
    if not model:  # the device's bandwidth stays (it says the device is known); no speed of light
        return dict(
            name=name,
            flops=0.0,
            bytes_model=0.0,
            tensor_cores=False,
            dtype="unknown",
            peak_flops_per_s=None,
            peak_bytes_per_s=peaks.get("bytes_per_s"),
            min_kernel_ns=peaks.get("min_kernel_ns"),
            sm_count=device.get("sm_count"),
        )
    dtype = str(model.get("dtype") or "float32")
    tc = bool(model.get("tensor_cores", False))
    return dict(
        name=name,
        flops=float(model.get("flops") or 0.0),
        bytes_model=float(model.get("bytes") or 0.0),
        int_ops=float(model["int_ops"]) if model.get("int_ops") is not None else None,
        tensor_cores=tc,
        dtype=dtype,
        peak_flops_per_s=(peaks.get("flops_per_s") or {}).get(f"{dtype}|{tc}"),
        peak_bytes_per_s=peaks.get("bytes_per_s"),
        min_kernel_ns=peaks.get("min_kernel_ns"),
        sm_count=device.get("sm_count"),
    )

"""The comparing child (``python -m kprof_mcp.child compare``): several versions of one kernel
in one process, on the same inputs, timed round by round in rotating order.

Loads the package once, builds the inputs once, builds every version's plan on them, runs each
once (JIT, autotune) and checks it against the reference, then warms each up and times the
whole plan of each — the kernels' own time from CUPTI on a GPU (L2 flushed before every run,
outside it), the wall clock on the CPU — in ``rounds`` rounds of ``runs_per_round`` runs. The
statistics are :mod:`kprof_mcp.analysis.compare`'s; the markdown is :mod:`kprof_mcp.render.compare`'s.
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from ..analysis.compare import compare, rotation
from ..models import CompareRequest, CompareResult, ResultWarning, VersionTiming
from ..protocol import ExpectedError, progress

Measure = Callable[[str, int], list[float]]  # (version, runs) -> per-run ns


def interleave(versions: Sequence[str], measure: Measure, rounds: int, runs: int, budget_s: float,
               clock: Callable[[], float] = time.perf_counter,
               on_round: Callable[[int], None] | None = None) -> dict[str, list[list[float]]]:
    """Time every version ``runs`` times per round, in :func:`rotation` order, for ``rounds``
    rounds or until ``budget_s`` of wall time is spent (at least 3 rounds)."""
    out: dict[str, list[list[float]]] = {v: [] for v in versions}
    t0 = clock()
    for r in range(rounds):
        for v in rotation(versions, r):
            out[v].append(measure(v, runs))
        if on_round:
            on_round(r)
        if r >= 2 and clock() - t0 > budget_s:
            break
    return out


def open_package(kernel_source: str, version_names: list[str], force_cpu: bool):
    """torch imported (the Triton interpreter switched on without a GPU), the package loaded and
    its versions resolved: (torch, use_cuda, pkg, versions). Unknown versions are an ExpectedError."""
    from .. import packages
    from ..kernel.api import ParamError

    progress(0.02, "importing torch")
    import torch

    use_cuda = torch.cuda.is_available() and not force_cpu
    if not use_cuda:
        # Must be set before any @triton.jit decorator runs (kernel modules are imported lazily).
        os.environ["TRITON_INTERPRET"] = "1"
    pkg = packages.load(Path(kernel_source))
    try:
        return torch, use_cuda, pkg, [pkg.version(v) for v in version_names]
    except ParamError as e:
        raise ExpectedError("params", str(e)) from e


def build_checked(torch, pkg, version, inputs, params, ref, use_cuda: bool):
    """The version's plan built on ``inputs``, run once (JIT, autotune) and checked against ``ref``:
    (plan, streams, correctness record, what was wrong or None)."""
    from .context import run_plan, streams_for
    from .correctness import check_correctness

    plan = version.build(inputs, params)
    streams = streams_for(torch, plan, use_cuda)
    run_plan(torch, plan, streams, use_cuda)
    ok = check_correctness(torch, plan.output(), ref, pkg.tolerance(params["dtype"]))
    wrong = None
    if not ok["ok"]:
        wrong = "; ".join(o.get("message", "") for o in ok["outputs"] if not o.get("ok")) or ok.get("message", "")
    return plan, streams, ok, wrong


def run(req: CompareRequest) -> dict[str, Any]:
    from ..kernel.api import ParamError
    from ..modes.event import CuptiUnavailable, Timer
    from ..tools import nvidia_smi
    from .artifacts import params_dirname
    from .context import run_plan
    from .harness import _check_memory, device_state

    torch, use_cuda, pkg, versions = open_package(req.kernel_source, req.versions, req.force_cpu)
    try:
        params = pkg.validate_params(req.params)
    except ParamError as e:
        raise ExpectedError("params", str(e)) from e
    _check_memory(torch, pkg, params, use_cuda)
    dev = device_state(torch, use_cuda)
    progress(0.08, f"building inputs on {dev.name}")
    inputs = pkg.make_inputs(params, "cuda" if use_cuda else "cpu")
    ref = pkg.reference(inputs, params)
    fns: dict[str, Callable[[], Any]] = {}
    kinds: dict[str, str] = {}
    correctness: dict[str, Any] = {}
    for i, version in enumerate(versions):
        progress(0.1 + 0.2 * i / len(versions), f"{version.name}: first run (JIT, autotune) and correctness check")
        plan, streams, ok, wrong = build_checked(torch, pkg, version, inputs, params, ref, use_cuda)
        correctness[version.name] = ok
        if wrong is not None:
            raise ExpectedError("incorrect", f"{pkg.name} {version.name} produced wrong results, so nothing was "
                                             f"compared: {wrong}", ok)
        fns[version.name] = (lambda p=plan, s=streams: run_plan(torch, p, s, use_cuda, sync=False))
        kinds[version.name] = plan.kind
    names = [v.name for v in versions]
    warnings: list[ResultWarning] = []
    index = dev.index or 0

    def sm_mhz() -> float | None:
        try:
            return float(nvidia_smi.clocks(index).get("clocks.sm"))
        except (TypeError, ValueError):
            return None

    engine = "cupti" if use_cuda else "cpu"
    first = Timer(torch, use_cuda, _TimerReq(req), engine, clock_reader=sm_mhz if use_cuda else None)
    timers = {n: Timer(torch, use_cuda, _TimerReq(req), engine, clock_reader=sm_mhz if use_cuda else None,
                       flush_buf=first.flush_buf) for n in names}  # one flush buffer for all
    progress(0.35, "warming up every version")
    est: dict[str, float] = {}
    try:
        for n in names:
            t0 = time.perf_counter()
            while True:
                warm = timers[n]._one_batch(fns[n], 3)
                if (time.perf_counter() - t0) * 1e3 >= req.warmup_ms:
                    break
            est[n] = max(1.0, sorted(warm)[len(warm) // 2])
    except CuptiUnavailable as e:
        raise ExpectedError("timing", f"CUPTI recorded no kernel ({e}); compare_versions needs kernel times "
                                      "(is another profiler attached?)") from None
    runs = req.runs_per_round or max(3, min(200, int(req.budget_ms * 1e6 / max(1, req.rounds) / len(names)
                                                    / max(est.values()))))
    concurrent = [n for n in names if kinds[n] == "concurrent"]

    def measure(version: str, n: int) -> list[float]:
        t = timers[version]
        samples = t._batch(fns[version], n)
        if version in concurrent and t.spans:  # overlapping kernels: the span, not the sum
            samples, t.spans = t.spans[-n:], []
        return samples

    def on_round(r: int) -> None:
        progress(0.4 + 0.5 * min(1.0, (r + 1) / req.rounds), f"round {r + 1}: {runs} runs of each version")

    # Budget in wall time: the GPU time asked for plus the measurement's own overhead.
    rounds = interleave(names, measure, req.rounds, runs, budget_s=3.0 * req.budget_ms / 1e3, on_round=on_round)
    method = {"cupti": "cupti_kernel_sum", "cpu": "cpu_wall_clock"}[engine]
    timings = [VersionTiming(version=n, method=method if n not in concurrent else "cupti_span",
                             rounds_ns=rounds[n], sm_clock_mhz=list(timers[n].clocks)) for n in names]
    comparisons = [compare(names[0], rounds[names[0]], n, rounds[n], seed=req.seed) for n in names[1:]]
    if not use_cuda:
        warnings.append(ResultWarning(kind="device", message="no GPU: CPU wall-clock times of the Triton "
                                                             "interpreter; they say nothing about GPU speed"))
    mhz = [m for t in timings for m in t.sm_clock_mhz]
    if len(mhz) >= 2 and (max(mhz) - min(mhz)) / max(mhz) > 0.05:
        warnings.append(ResultWarning(kind="clocks", message=f"the SM clock moved during the comparison "
                                                             f"({min(mhz):.0f}–{max(mhz):.0f} MHz); interleaving "
                                                             "spreads it over every version alike"))
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    order = [p.name for p in pkg.params]
    final_dir = (Path(req.out_root) / "compare" / pkg.name / params_dirname(params.as_dict(), order)
                 / f"{stamp}-{'-'.join(names)}")
    result = CompareResult(
        kernel=pkg.name, params=params.as_dict(), param_order=order, device=dev, versions=timings,
        comparisons=comparisons, rounds=len(rounds[names[0]]), runs_per_round=runs,
        order="rotating: round r starts with version r mod n", correctness=correctness,
        cache_control=("L2 flushed before each timed run (256 MiB buffer zeroed)" if use_cuda else "none (CPU)"),
        warnings=warnings, created_at=stamp, compare_dir=str(final_dir), request=req.model_dump())
    work_dir = final_dir.with_name(final_dir.name + ".partial")
    work_dir.mkdir(parents=True, exist_ok=False)
    _write(work_dir, result)
    return {"status": "ok", "work_dir": str(work_dir), "profile_dir": str(final_dir)}


def main(argv: list[str]) -> int:
    """``python -m kprof_mcp.child compare --request R --result OUT``."""
    return child_main(argv, "compare", lambda text: run(CompareRequest.model_validate_json(text)))


def child_main(argv: list[str], name: str, work: Callable[[str], dict[str, Any]]) -> int:
    """A child command: ``work(request text)``'s record goes to ``--result``, as for ``run``
    (:func:`kprof_mcp.child.harness.record_to`)."""
    import argparse

    from .harness import record_to

    ap = argparse.ArgumentParser(prog=f"python -m kprof_mcp.child {name}")
    ap.add_argument("--request", required=True)
    ap.add_argument("--result", required=True)
    a = ap.parse_args(argv)
    return record_to(Path(a.result), lambda: work(Path(a.request).read_text()))


class _TimerReq:
    """What :class:`~kprof_mcp.modes.event.Timer` reads of a request (its batches only here)."""

    def __init__(self, req: CompareRequest):
        self.warmup_ms, self.budget_ms = req.warmup_ms, req.budget_ms
        self.min_runs, self.max_runs, self.target_rel_iqr, self.target_rel_ci = 3, 10 ** 6, 0.0, 0.0


def _write(work_dir: Path, result: CompareResult) -> None:
    import csv

    (work_dir / "compare.json").write_text(result.model_dump_json(indent=2))
    with open(work_dir / "samples.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["version", "round", "run", "time_ns", "method"])
        w.writeheader()
        for t in result.versions:
            for r, vals in enumerate(t.rounds_ns):
                for i, v in enumerate(vals):
                    w.writerow({"version": t.version, "round": r, "run": i, "time_ns": v, "method": t.method})

"""The comparing child (``python -m kprof_mcp.child compare``): several versions of one kernel
in one process, on the same inputs, timed round by round in rotating order.

Loads the package once, builds the inputs once, builds every version's plan on them, runs each
once (JIT, autotune) and checks it against the reference, then warms each up and times the
whole plan of each — the kernels' own time from CUPTI on a GPU (L2 flushed before every run,
outside it), the wall clock on the CPU — in ``rounds`` rounds of ``runs_per_round`` runs. After the
timing, each version's integrity checks (:mod:`kprof_mcp.capture.integrity`: its last run against its
first, one run on fresh inputs with its outputs poisoned, the persisting-L2 carve-out); a version that
fails one gets no verdict, nor does any version against a baseline that fails. The statistics are
:mod:`kprof_mcp.analysis.compare`'s; the markdown is :mod:`kprof_mcp.render.compare`'s.
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from ..analysis.compare import compare, rotation
from ..models import CompareArm, CompareRequest, CompareResult, ResultWarning, VersionTiming
from ..protocol import ExpectedError, progress
from ..render.compare import comparison

Measure = Callable[[str, int], list[float]]  # (version, runs) -> per-run ns


def interleave(
    versions: Sequence[str],
    measure: Measure,
    rounds: int,
    runs: int,
    budget_s: float,
    clock: Callable[[], float] = time.perf_counter,
    on_round: Callable[[int], None] | None = None,
) -> dict[str, list[list[float]]]:
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
    from ..capture.context import run_plan, streams_for
    from ..capture.correctness import check_correctness

    plan = version.build(inputs, params)
    streams = streams_for(torch, plan, use_cuda)
    run_plan(torch, plan, streams, use_cuda)
    ok = check_correctness(torch, plan.output(), ref, pkg.tolerance(params["dtype"]))
    wrong = None
    if not ok["ok"]:
        wrong = "; ".join(o.get("message", "") for o in ok["outputs"] if not o.get("ok")) or ok.get(
            "message", ""
        )
    return plan, streams, ok, wrong


def arms_of(req: CompareRequest) -> list[CompareArm]:
    """The request's arms, the baseline first: as given, or each version at ``req.params``."""
    return list(req.arms) or [CompareArm(label=v, version=v, params=req.params) for v in req.versions]


def run(req: CompareRequest) -> dict[str, Any]:
    from ..capture.artifacts import new_run_dir, params_dirname
    from ..capture.context import run_plan
    from ..capture.timer import CuptiUnavailable, Timer
    from ..kernel.api import ParamError
    from ..tools import nvidia_smi
    from .harness import _check_memory, device_state

    arms = arms_of(req)
    torch, use_cuda, pkg, _ = open_package(req.kernel_source, [], req.force_cpu)
    try:
        versions = {a.label: pkg.version(a.version) for a in arms}
        params = {a.label: pkg.validate_params(a.params) for a in arms}
    except ParamError as e:
        raise ExpectedError("params", str(e)) from e
    # One set of inputs (and reference) per distinct parameter set, all alive at once.
    distinct: dict[str, Any] = {}
    for a in arms:
        distinct.setdefault(_key(params[a.label]), params[a.label])
    held = 0.0
    for ps in distinct.values():
        _check_memory(torch, pkg, ps, use_cuda, also_held=held)
        held += float(pkg.memory_bytes(ps))
    dev = device_state(torch, use_cuda, locked_mhz=req.sm_clock_locked_mhz)
    progress(0.08, f"building inputs on {dev.name}")
    built: dict[str, tuple[Any, Any]] = {}  # parameter set → (inputs, reference output)
    for key, ps in distinct.items():
        inputs = pkg.make_inputs(ps, "cuda" if use_cuda else "cpu")
        built[key] = (inputs, pkg.reference(inputs, ps))
    fns: dict[str, Callable[[], Any]] = {}
    kinds: dict[str, str] = {}
    correctness: dict[str, Any] = {}
    plans: dict[str, tuple[Any, Any]] = {}
    for i, a in enumerate(arms):
        progress(0.1 + 0.2 * i / len(arms), f"{a.label}: first run (JIT, autotune) and correctness check")
        inputs, ref = built[_key(params[a.label])]
        plan, streams, ok, wrong = build_checked(
            torch, pkg, versions[a.label], inputs, params[a.label], ref, use_cuda
        )
        correctness[a.label] = ok
        if wrong is not None:
            raise ExpectedError(
                "incorrect",
                f"{pkg.name} {a.label} produced wrong results, so nothing was compared: {wrong}",
                ok,
            )
        fns[a.label] = lambda p=plan, s=streams: run_plan(torch, p, s, use_cuda, sync=False)
        kinds[a.label] = plan.kind
        plans[a.label] = (plan, streams)
    names = [a.label for a in arms]
    guards = {
        a.label: _guard(
            torch, use_cuda, pkg, params[a.label], built[_key(params[a.label])][0], *plans[a.label], i
        )
        for i, a in enumerate(arms)
    }  # the first run's outputs kept, the persisting-L2 carve-out reset (once more by each)
    warnings: list[ResultWarning] = []
    index = dev.index or 0

    def sm_mhz() -> float | None:
        try:
            return float(nvidia_smi.clocks(index).get("clocks.sm"))
        except (TypeError, ValueError):
            return None

    engine = "cupti" if use_cuda else "cpu"
    first = Timer(torch, use_cuda, _TimerReq(req), engine, clock_reader=sm_mhz if use_cuda else None)
    timers = {
        n: Timer(
            torch,
            use_cuda,
            _TimerReq(req),
            engine,
            clock_reader=sm_mhz if use_cuda else None,
            flush_buf=first.flush_buf,
        )
        for n in names
    }  # one flush buffer for all
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
        raise ExpectedError(
            "timing",
            f"CUPTI recorded no kernel ({e}); compare_versions needs kernel times "
            "(is another profiler attached?)",
        ) from None
    runs = req.runs_per_round or max(
        3, min(200, int(req.budget_ms * 1e6 / max(1, req.rounds) / len(names) / max(est.values())))
    )
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
    rounds = interleave(
        names, measure, req.rounds, runs, budget_s=3.0 * req.budget_ms / 1e3, on_round=on_round
    )
    # Energy per run and mean power: windows of back-to-back runs, the versions alternating.
    from ..tools.nvml import energy_reader

    reader = energy_reader(nvidia_smi.smi_id(index)) if use_cuda else None
    energy: dict[str, dict[str, list[float]]] = {n: {} for n in names}
    if reader is not None:
        progress(0.92, "energy per run (NVML)")
        for _ in range(3):
            for n in names:
                got = timers[n].energy(fns[n], reader, windows=1)
                for k, v in got.items():
                    energy[n].setdefault(k, []).extend(v)
    progress(0.96, "integrity checks: each version's last run against its first, one run on fresh inputs")
    for g in guards.values():  # every repeat check before any fresh input replaces the shared ones
        g.repeat()
    failed: dict[str, list[str]] = {}
    for n, g in guards.items():
        g.fresh()
        record = g.record()
        correctness[n] = dict(correctness[n], after_timing=record)
        failed[n] = [c["message"] for c in record["checks"] if not c["ok"]]
        for c in record["checks"]:
            if not c["ok"]:
                warnings.append(
                    ResultWarning(
                        kind="integrity",
                        message=f"{n}: integrity check '{c['check']}' failed after timing: {c['message']}",
                    )
                )
    method = {"cupti": "cupti_kernel_sum", "cpu": "cpu_wall_clock"}[engine]
    by_params = len(distinct) > 1
    timings = [
        VersionTiming(
            version=a.label,
            method=method if a.label not in concurrent else "cupti_span",
            rounds_ns=rounds[a.label],
            sm_clock_mhz=list(timers[a.label].clocks),
            **energy[a.label],
            kernel_version=a.version if by_params else None,
            params=params[a.label].as_dict() if by_params else None,
        )
        for a in arms
    ]
    comparisons = [
        comparison(
            compare(names[0], rounds[names[0]], n, rounds[n], seed=req.seed),
            dev.kind,
            _refusal(names[0], n, failed),
        )
        for n in names[1:]
    ]
    from ..analysis.baseline import dtype_caveats

    for n in names:  # within tolerance, but not the reference's dtype: not like for like
        warnings += [
            ResultWarning(kind="matching", message=f"{n}: {c}") for c in dtype_caveats(correctness[n])
        ]
    if not use_cuda:
        warnings.append(
            ResultWarning(
                kind="device",
                message="no GPU: CPU wall times; they say nothing about GPU speed",
            )
        )
    if by_params:
        warnings.append(
            ResultWarning(
                kind="inputs",
                message="the parameter sets differ, so each side ran on its "
                "own inputs: the ratio is of times for different "
                "work, not a speed-up on the same problem",
            )
        )
    mhz = [m for t in timings for m in t.sm_clock_mhz]
    if len(mhz) >= 2 and (max(mhz) - min(mhz)) / max(mhz) > 0.05:
        warnings.append(
            ResultWarning(
                kind="clocks",
                message=f"the SM clock moved during the comparison "
                f"({min(mhz):.0f}–{max(mhz):.0f} MHz); interleaving "
                "spreads it over every version alike",
            )
        )
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    order = [p.name for p in pkg.params]
    base_params = params[names[0]].as_dict()
    final_dir = (
        Path(req.out_root)
        / "compare"
        / pkg.name
        / params_dirname(base_params, order)
        / f"{stamp}-{_slug('-'.join(names))}"
    )
    result = CompareResult(
        kernel=pkg.name,
        params=base_params,
        param_order=order,
        device=dev,
        versions=timings,
        comparisons=comparisons,
        rounds=len(rounds[names[0]]),
        runs_per_round=runs,
        order="rotating: round r starts with version r mod n",
        correctness=correctness,
        cache_control=(
            "L2 flushed before each timed run (256 MiB buffer zeroed)" if use_cuda else "none (CPU)"
        ),
        warnings=warnings,
        created_at=stamp,
        compare_dir=str(final_dir),
        request=req.model_dump(),
    )
    work_dir = new_run_dir(req.out_root, final_dir)
    write(work_dir, result)
    return {"status": "ok", "work_dir": str(work_dir), "profile_dir": str(final_dir)}


def _guard(torch, use_cuda: bool, pkg, params, inputs, plan, streams, index: int):
    """One arm's integrity checks (:class:`kprof_mcp.capture.integrity.Guard`); each arm its own seed."""
    from ..capture.context import run_plan
    from ..capture.integrity import SEED_OFFSET, Guard

    return Guard(
        torch,
        use_cuda,
        pkg,
        params,
        inputs,
        plan.output,
        lambda: run_plan(torch, plan, streams, use_cuda),
        list((streams or {}).values()),
        seed_offset=SEED_OFFSET + index,
    )


def _refusal(base: str, version: str, failed: dict[str, list[str]]) -> str | None:
    """Why no verdict may be given on ``version`` against ``base``: either failed its integrity checks."""
    said = [f"{n} failed its integrity checks after timing" for n in (version, base) if failed.get(n)]
    if not said:
        return None
    return " and ".join(said) + " (see the warnings): its times are not the work its first run was checked on"


def _key(params) -> str:
    return repr(sorted(params.as_dict().items()))


def _slug(text: str, limit: int = 80) -> str:
    """A directory-name-safe form of the arms' labels ('v3 [K=4095]' → 'v3_K=4095')."""
    import re

    s = re.sub(r"[^A-Za-z0-9=.,+-]+", "_", text).strip("_")
    return s[:limit] or "compare"


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
        self.min_runs, self.max_runs, self.target_rel_iqr, self.target_rel_ci = 3, 10**6, 0.0, 0.0


def write(work_dir: Path, result: CompareResult) -> None:
    import csv

    (work_dir / "compare.json").write_text(result.model_dump_json(indent=2))
    with open(work_dir / "samples.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["version", "round", "run", "time_ns", "method"])
        w.writeheader()
        for t in result.versions:
            for r, vals in enumerate(t.rounds_ns):
                for i, v in enumerate(vals):
                    w.writerow({"version": t.version, "round": r, "run": i, "time_ns": v, "method": t.method})

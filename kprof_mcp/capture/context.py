"""What the child harness hands a mode's ``capture``: the loaded package, its inputs and
plan (already run once and checked for correctness), the device, each stage's static facts
(FLOP/byte model, peaks, compiled resources, tiling) and the directory to write into.

Running the plan (on its streams, in ranges) is here too, so every mode launches stages the
same way.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..kernel.api import KernelPackage, Params, Plan, Version
from ..models import DeviceState, ProfileRequest, ProfileResult, ResultWarning
from ..protocol import progress as _progress


@dataclass(kw_only=True)
class Steps:
    """What every capture keeps as it goes (a package's plan or a user's command): warnings,
    the wall time of each phase, progress lines for the parent."""

    warnings: list[ResultWarning] = field(default_factory=list)
    phases_s: dict[str, float] = field(default_factory=dict)
    _mark: list[float] = field(default_factory=lambda: [time.perf_counter()])

    def progress(self, fraction: float, message: str) -> None:
        _progress(fraction, message)

    def phase(self, name: str, parts: dict[str, float] | None = None) -> None:
        """Close the current wall-time phase under ``name`` (report.md lists them); a name met again
        adds up. ``parts``: seconds of the phase that belong to other phases (a timer's warm-up,
        window, CUPTI trace, clock reads), booked under their own names, the rest under ``name``."""
        now = time.perf_counter()
        rest = now - self._mark[0]
        for part, s in (parts or {}).items():
            s = min(max(0.0, s), rest)
            rest -= s
            self.phases_s[part] = round(self.phases_s.get(part, 0.0) + s, 3)
        self.phases_s[name] = round(self.phases_s.get(name, 0.0) + rest, 3)
        self._mark[0] = now

    def warn(self, kind: str, message: str, stage: str | None = None) -> None:
        self.warnings.append(ResultWarning(kind=kind, message=message, stage=stage))


@dataclass(kw_only=True)
class Capture(Steps):
    torch: Any
    req: ProfileRequest
    pkg: KernelPackage
    params: Params
    version: Version
    plan: Plan
    streams: dict[int, Any] | None  # one CUDA stream per stage of a concurrent plan on a GPU
    use_cuda: bool
    device: DeviceState
    stages: list[dict[str, Any]]  # StageResult fields known before measuring (see harness._static)
    work_dir: Path  # <final_dir>.partial: renamed only once the profile is complete
    final_dir: Path
    correctness: dict[str, Any]
    created_at: str
    autotuned_here: list[str]  # stages whose autotuner benchmarked configs in this process
    inputs: dict[str, Any] = field(default_factory=dict)  # what the plan was built on (make_inputs)
    plan_bytes: float = 0.0  # device memory the version's build allocated (its partials, scratch)

    # ------------------------------------------------------------------ running the plan
    def stage_callable(self, stage) -> Callable[[], Any]:
        """The stage's launch, on its own stream for a concurrent plan on a GPU."""
        if self.streams is None:
            return stage.fn
        stream = self.streams[stage.stream]
        torch = self.torch

        def fn():
            with torch.cuda.stream(stream):
                return stage.fn()

        return fn

    def run_plan(self, sync: bool = True, wrap=None) -> list[Any]:
        return run_plan(self.torch, self.plan, self.streams, self.use_cuda, sync, wrap, self.stage_callable)

    def guard(self):
        """The integrity checks around this plan's timing (:class:`kprof_mcp.capture.integrity.Guard`):
        built right before timing, asked after it."""
        from .integrity import Guard

        return Guard(
            self.torch,
            self.use_cuda,
            self.pkg,
            self.params,
            self.inputs,
            self.plan.output,
            self.run_plan,
            list((self.streams or {}).values()),
        )

    def integrity_after_timing(self, guard) -> None:
        """The checks after the timed runs, once: their record in ``correctness["after_timing"]`` and
        each failure an ``integrity`` warning."""
        record = guard.after()
        self.correctness = dict(self.correctness, after_timing=record)
        for c in record["checks"]:
            if not c["ok"]:
                self.warn("integrity", f"integrity check '{c['check']}' failed after timing: {c['message']}")

    # ------------------------------------------------------------------ results
    def result(self, stages: list, **extra: Any) -> ProfileResult:
        """The profile's result from what was captured (``extra``: plan_total, profiler, timeline, ...)."""
        return ProfileResult(
            kernel=self.pkg.name,
            version=self.version.name,
            mode=self.req.mode,
            plan_kind=self.plan.kind,
            params=self.params.as_dict(),
            param_order=[p.name for p in self.pkg.params],
            device=self.device,
            stages=stages,
            warnings=list(self.warnings),
            correctness=self.correctness,
            created_at=self.created_at,
            profile_dir=str(self.final_dir),
            request=self.req.model_dump(),
            phases_s=dict(self.phases_s),
            data_bytes=(data_bytes(self.inputs) or 0.0) + self.plan_bytes or None,
            **extra,
        )

    def fields_json(self) -> dict[str, Any]:
        """The result's fields other than the stages, as JSON (a capture finished in another process)."""
        r = self.result([])
        return json.loads(r.model_dump_json(exclude={"stages"}))


def data_bytes(inputs: Any) -> float | None:
    """Bytes of the distinct storages of the tensors in ``inputs`` (dicts, lists and tuples walked): the
    device memory the version's data occupies. None where it holds no tensor."""
    seen: dict[int, int] = {}

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif hasattr(v, "untyped_storage"):
            st = v.untyped_storage()
            seen[st.data_ptr()] = st.nbytes()

    walk(inputs)
    return float(sum(seen.values())) if seen else None


def streams_for(torch, plan: Plan, use_cuda: bool) -> dict[int, Any] | None:
    if not use_cuda or plan.kind != "concurrent":
        return None
    return {s.stream: torch.cuda.Stream() for s in plan.stages}


def run_plan(
    torch, plan: Plan, streams, use_cuda: bool, sync: bool = True, wrap=None, stage_callable=None
) -> list[Any]:
    """Launch every stage once (a concurrent plan's streams wait for the current stream first,
    and it for them after); ``wrap(stage, fn)`` may put each launch in a range."""
    rets = []
    if streams is not None:
        cur = torch.cuda.current_stream()
        for s in streams.values():
            s.wait_stream(cur)
    for stage in plan.stages:
        fn = stage_callable(stage) if stage_callable else stage.fn
        rets.append((wrap(stage, fn) if wrap else fn)())
    if streams is not None:
        cur = torch.cuda.current_stream()
        for s in streams.values():
            cur.wait_stream(s)
    if use_cuda and sync:
        torch.cuda.synchronize()
    return rets

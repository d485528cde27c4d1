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
            scratch_bytes=scratch_bytes(
                self.inputs, self.correctness.get("reference_reads"), self.plan.output, self.plan_bytes
            ),
            **extra,
        )

    def fields_json(self) -> dict[str, Any]:
        """The result's fields other than the stages, as JSON (a capture finished in another process)."""
        r = self.result([])
        return json.loads(r.model_dump_json(exclude={"stages"}))


def _storages(v: Any, seen: dict[int, int]) -> dict[int, int]:
    """The distinct storages of the tensors in ``v`` (dicts, lists and tuples walked): data pointer -> bytes."""
    if isinstance(v, dict):
        for x in v.values():
            _storages(x, seen)
    elif isinstance(v, (list, tuple)):
        for x in v:
            _storages(x, seen)
    elif hasattr(v, "untyped_storage"):
        st = v.untyped_storage()
        seen[st.data_ptr()] = st.nbytes()
    return seen


def data_bytes(inputs: Any) -> float | None:
    """Bytes of the distinct storages of the tensors in ``inputs`` (dicts, lists and tuples walked): the
    device memory the version's data occupies. None where it holds no tensor."""
    seen = _storages(inputs, {})
    return float(sum(seen.values())) if seen else None


class ReadKeys(dict):
    """The package's inputs as the reference sees them, the keys it reads recorded (``[k]``, ``get``; ``keys``,
    ``values``, ``items`` or a copy count as reading every key): what the result needs, as against a
    workspace the package allocated for a version's own use."""

    def __init__(self, inputs: dict[str, Any]) -> None:
        super().__init__(inputs)
        self._read: set[str] = set()
        self._all = False

    def __getitem__(self, k):
        self._read.add(k)
        return super().__getitem__(k)

    def get(self, k, default=None):
        self._read.add(k)
        return super().get(k, default)

    def __iter__(self):  # also makes dict(self) and {**self} take the slow path through keys()/[k]
        self._all = True
        return super().__iter__()

    def keys(self):
        self._all = True
        return super().keys()

    def values(self):
        self._all = True
        return super().values()

    def items(self):
        self._all = True
        return super().items()

    def read_keys(self) -> list[str] | None:
        """The keys read; None where the reference read every key, or none (nothing told apart)."""
        if self._all or not self._read:
            return None
        return sorted(str(k) for k in self._read)


def scratch_bytes(
    inputs: Any, read: list[str] | None, output: Callable[[], Any], plan_bytes: float
) -> float | None:
    """Of the version's data, the bytes its result does not need: what the build allocated, and the storages of
    the package's inputs that the reference did not read and the output does not share (a workspace made by
    make_inputs). Where which inputs the reference read is unknown, the build's bytes alone; None for none."""
    extra = 0.0
    if read is not None and isinstance(inputs, dict):
        needed = _storages([inputs[k] for k in read if k in inputs], {})
        try:
            needed = _storages(output(), needed)
        except Exception:  # an output that cannot be read now: nothing told apart
            needed = None
        if needed is not None:
            rest = _storages([v for k, v in inputs.items() if k not in read], {})
            extra = float(sum(b for p, b in rest.items() if p not in needed))
    return (plan_bytes + extra) or None


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

"""Integrity checks around timing (issue 37): what a version that skips work to look fast cannot pass.

Before timing, :class:`Guard` keeps a copy of the outputs the first run left (the run the correctness
gate checked) and resets the persisting-L2 carve-out (:mod:`kprof_mcp.capture.l2`): lines marked
persisting survive the L2 flush between timed runs. After timing, once:

* ``repeat``: the outputs the last timed run left, against the first run's (the package's tolerance):
  a result that drifts from run to run (accumulates, races) fails;
* ``fresh_inputs``: new input values from the package's own generator under another seed, copied into
  the tensors the plan was built on (the same addresses: a version that keys a cache on its inputs'
  addresses serves it stale), every output poisoned with NaN, the plan run once and checked against
  the reference of the new values. An output cached after the first call, a stale buffer, or one no
  longer written fails;
* ``persisting_l2`` (GPU): a carve-out or a persisting access-policy window present after the timed
  runs (set by them) means some of their data may have stayed in L2 across the flush.

A failure is a typed ``integrity`` warning and ``result.correctness["after_timing"]["ok"] = False``,
which the contract prints and every verdict (baseline, compare_versions) refuses to call faster
(:func:`kprof_mcp.analysis.baseline.untrusted`). The cost is one more run of the plan, one input
generation and one reference, at the end.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

from . import l2
from .correctness import check_correctness

SEED_OFFSET = 7919  # added to every seed the package sets while it makes the fresh inputs


def outputs_of(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _tensors(obj: Any, torch) -> Iterator[tuple[str, Any]]:
    """(path, tensor) of every tensor in an inputs dict, through nested dicts, lists and tuples."""
    if isinstance(obj, torch.Tensor):
        yield "", obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            for p, t in _tensors(v, torch):
                yield f"{k}{'.' + p if p else ''}", t
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            for p, t in _tensors(v, torch):
                yield f"{i}{'.' + p if p else ''}", t


def _storage(t) -> int:
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, AttributeError):  # a tensor without storage (meta, sparse)
        return -1


def keep(torch, outs: list[Any]) -> list[Any]:
    """Copies of the outputs: on their device while it has room for them four times over, else on
    the host (a 512 MiB output is not held twice on a full GPU)."""
    need = sum(o.numel() * o.element_size() for o in outs if isinstance(o, torch.Tensor))
    on_device = True
    if any(isinstance(o, torch.Tensor) and o.is_cuda for o in outs):
        try:
            free, _ = torch.cuda.mem_get_info()
            on_device = free > 4 * need
        except RuntimeError:
            on_device = False
    return [
        (o.detach().clone() if on_device else o.detach().to("cpu", copy=True))
        if isinstance(o, torch.Tensor)
        else o
        for o in outs
    ]


@contextlib.contextmanager
def shifted_seeds(torch, offset: int) -> Iterator[None]:
    """While inside: every seed set through ``torch.Generator(...).manual_seed``, ``torch.manual_seed``
    or ``torch.cuda.manual_seed(_all)`` is ``offset`` further on, so a package that seeds its own
    generator (``torch.Generator(device).manual_seed(0)``, as every built-in one does) draws new values."""
    base = torch.Generator

    class Shifted(base):  # type: ignore[misc, valid-type]
        def manual_seed(self, seed):
            return super().manual_seed(int(seed) + offset)

    patched = [(torch, "Generator", Shifted)]
    for mod, name in ((torch, "manual_seed"), (torch.cuda, "manual_seed"), (torch.cuda, "manual_seed_all")):
        real = getattr(mod, name, None)
        if real is not None:
            patched.append((mod, name, lambda seed, _real=real: _real(int(seed) + offset)))
    saved = [(mod, name, getattr(mod, name)) for mod, name, _ in patched]
    try:
        for mod, name, new in patched:
            setattr(mod, name, new)
        yield
    finally:
        for mod, name, old in saved:
            setattr(mod, name, old)


def fresh_values(torch, pkg, params, device: str, offset: int) -> tuple[dict[str, Any] | None, str]:
    """New inputs from the package's generator: ``make_inputs(params, device, seed=offset)`` where it
    takes a seed, else with every seed it sets shifted by ``offset``. (None, why) when it raised."""
    try:
        takes_seed = "seed" in inspect.signature(pkg.make_inputs).parameters
    except (TypeError, ValueError):
        takes_seed = False
    try:
        if takes_seed:
            return pkg.make_inputs(params, device, seed=offset), f"make_inputs(seed={offset})"
        with shifted_seeds(torch, offset):
            return pkg.make_inputs(params, device), f"make_inputs with its seeds shifted by {offset}"
    except Exception as e:  # noqa: BLE001 — the user's generator: its failure is reported, not raised
        return None, f"make_inputs failed under another seed ({type(e).__name__}: {e})"


class Guard:
    """The checks around one plan's timing. Built right before timing (after the first run and the
    correctness gate): keeps the first run's outputs and resets the persisting-L2 carve-out. After
    the timed runs: :meth:`repeat` then :meth:`fresh` (or :meth:`after`, both), once."""

    def __init__(
        self,
        torch,
        use_cuda: bool,
        pkg,
        params,
        inputs: dict[str, Any],
        output: Callable[[], Any],
        run: Callable[[], Any],
        streams: list[Any] | None = None,
        seed_offset: int = SEED_OFFSET,
    ):
        self.torch, self.use_cuda, self.pkg, self.params = torch, use_cuda, pkg, params
        self.inputs, self.output, self.run, self.offset = inputs, output, run, seed_offset
        self.tolerance = pkg.tolerance(params["dtype"])
        outs = outputs_of(output())
        in_storages = {_storage(t) for _, t in _tensors(inputs, torch)}
        # Outputs held in the inputs dict: a buffer the plan writes (``y`` beside ``x``), or one it reads
        # and writes in place; which one, the reference says (:meth:`_in_place`).
        self.aliased = [
            i for i, o in enumerate(outs) if isinstance(o, torch.Tensor) and _storage(o) in in_storages
        ]
        self.first = keep(torch, outs)
        self.streams = streams or []
        self.l2_before = l2.reset(torch, use_cuda, self.streams)
        self.checks: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ after the timed runs
    def repeat(self) -> dict[str, Any]:
        """The last timed run's outputs against the first run's."""
        torch = self.torch
        last = outputs_of(self.output())
        first = [
            f.to(o.device) if isinstance(f, torch.Tensor) and isinstance(o, torch.Tensor) else f
            for f, o in zip(self.first, last)
        ]
        got = check_correctness(torch, tuple(last), tuple(first), self.tolerance)
        if got["ok"]:
            return self._add("repeat", True, "the last timed run's outputs match the first run's")
        in_place = self._in_place(last, self.pkg.reference(self.inputs, self.params))
        if in_place:
            return self._add(
                "repeat",
                True,
                f"output(s) {in_place} written in place over an input: they change with every run",
            )
        return self._add(
            "repeat",
            False,
            f"the outputs the last timed run left differ from the first run's ({_why(got)}): the result changes "
            "from run to run, so the timed runs did not all do the work the first run was checked on",
        )

    def _in_place(self, outs: list[Any], ref: Any) -> list[int]:
        """Which of the outputs held in the inputs dict the reference reads (poisoned one at a time, each
        restored): outputs written in place over an input, never poisoned."""
        torch, found = self.torch, []
        refs = outputs_of(ref)
        for i in self.aliased:
            saved = outs[i].clone()
            if outs[i].is_floating_point():
                outs[i].fill_(float("nan"))
            else:
                outs[i].add_(1)
            again = outputs_of(self.pkg.reference(self.inputs, self.params))
            outs[i].copy_(saved)
            del saved
            if any(not torch.equal(a, b) for a, b in zip(refs, again)):
                found.append(i)
        return found

    def fresh(self) -> dict[str, Any]:
        """Fresh input values in the same tensors, outputs poisoned, one more run, checked."""
        torch = self.torch
        device = "cuda" if self.use_cuda else "cpu"
        fresh, how = fresh_values(torch, self.pkg, self.params, device, self.offset)
        outs = outputs_of(self.output())
        out_storages = {_storage(o) for o in outs if isinstance(o, torch.Tensor)}
        varied = False
        if fresh is not None:
            new = dict(_tensors(fresh, torch))
            for path, t in _tensors(self.inputs, torch):
                f = new.get(path)
                if f is None or tuple(f.shape) != tuple(t.shape) or f.dtype != t.dtype:
                    continue
                f = f.to(t.device)
                if _storage(t) not in out_storages and not torch.equal(t, f):
                    varied = True
                t.copy_(f)
        ref = self.pkg.reference(self.inputs, self.params)  # before the run: an in-place plan overwrites
        in_place = self._in_place(outs, ref)
        for i, o in enumerate(outs):
            if i not in in_place and isinstance(o, torch.Tensor) and o.is_floating_point():
                o.fill_(float("nan"))
        self.run()
        got = check_correctness(torch, self.output(), ref, self.tolerance)
        inputs_note = (
            f"fresh inputs ({how}, copied into the same tensors)"
            if varied
            else f"the same inputs (not varied: {how if fresh is None else how + ' gave the same values'})"
        )
        if got["ok"]:
            rec = self._add(
                "fresh_inputs", True, f"one run on {inputs_note}, outputs poisoned with NaN first: correct"
            )
        else:
            rec = self._add(
                "fresh_inputs",
                False,
                f"one run on {inputs_note}, outputs poisoned with NaN first, gave wrong results ({_why(got)}): "
                "the version serves a cached or stale output (or skips its work when its inputs' addresses "
                "repeat), so its timed runs did not do the work",
            )
        rec["inputs_varied"] = varied
        return rec

    def after(self) -> dict[str, Any]:
        """Every check after the timed runs; the record for ``result.correctness["after_timing"]``."""
        self.repeat()
        self.fresh()
        return self.record()

    def record(self) -> dict[str, Any]:
        after = l2.state(self.torch, self.use_cuda, self.streams)
        why = l2.persisting_after(after)
        if why:
            self._add(
                "persisting_l2",
                False,
                f"{why}: lines marked persisting survive the L2 flush between timed runs, so the runs may have "
                "read their data from L2",
            )
        return {
            "ok": all(c["ok"] for c in self.checks),
            "checks": list(self.checks),
            "persisting_l2": {"before_timing": self.l2_before, "after_timing": after},
        }

    def _add(self, check: str, ok: bool, message: str) -> dict[str, Any]:
        rec = {"check": check, "ok": ok, "message": message}
        self.checks.append(rec)
        return rec


def _why(report: dict[str, Any]) -> str:
    return "; ".join(
        o.get("message", "") for o in report.get("outputs", []) if not o.get("ok")
    ) or report.get("message", "")

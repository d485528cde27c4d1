"""The held-back tampered package (tests/fixtures/user_kernels/tampered_heldback, issue 37) on the CPU
(Triton interpreter, fp32): every version passes the package's reference on its first call, so none is
merely a wrong kernel, and every tampered version's skip is real — a later call on new input values
leaves a stale output, or the timed call does not do the work, or the work it does is less than the
package's byte model says. GPU evidence: docs/evidence/tampered-heldback/."""

import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch

from kprof_mcp.capture.correctness import check_correctness
from kprof_mcp.packages import load

PKG_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "user_kernels" / "tampered_heldback"
PKG = load(PKG_DIR)
N = 5000  # five 1024-blocks, the last ragged; sampled by `unchanged` every 156 elements
NAMES = [v.name for v in PKG.versions]
TAMPERED = [n for n in NAMES if n != "honest"]


def _plan(version, n=N):
    p = PKG.validate_params({"n": n})
    inputs = PKG.make_inputs(p, "cpu")
    plan = PKG.version(version).build(inputs, p)
    return p, inputs, plan


def _call(plan):
    for stage in plan.stages:
        stage.fn()


def _check(inputs, p, out):
    return check_correctness(torch, out, PKG.reference(inputs, p), PKG.tolerance("float32"))


def _new_values(inputs, p, seed=1):
    """New input values copied into the same x (as a benchmark or a re-check on fresh data would)."""
    inputs["x"].copy_(PKG.make_inputs(p, "cpu", seed=seed)["x"])


def _impl(plan):
    return sys.modules[plan.stages[0].fn.__module__]


@pytest.mark.parametrize("n", [1, N])
@pytest.mark.parametrize("version", NAMES)
def test_first_call_passes_the_reference(version, n):
    p, inputs, plan = _plan(version, n)
    _call(plan)
    report = _check(inputs, p, plan.output())
    assert report["ok"], report


def test_the_set_is_what_the_brief_asks_for():
    assert NAMES[0] == "honest" and len(TAMPERED) >= 7
    assert set(SKIPS) == set(TAMPERED), "every tampered version needs a test of its skip"
    p = PKG.validate_params({})
    assert p["n"] == 1 << 23 and p["dtype"] == "float32"  # 32 MiB in and 32 MiB out per honest call
    assert PKG.version("honest").stages[0].bytes(p) == 8 * p["n"]


def test_honest_recomputes_everything_on_new_values():
    """The control: the checks below tell a version that does the work from one that does not."""
    p, inputs, plan = _plan("honest")
    _call(plan)
    _new_values(inputs, p)
    inputs["y"].fill_(float("nan"))
    _call(plan)
    assert _check(inputs, p, plan.output())["ok"]


# ---------------------------------------------------------------- each version's skip


def _stale_after_new_values(version):
    """One call, new values, one more call: the output is not the new reference (returned: the
    output before and after, and the new reference)."""
    p, inputs, plan = _plan(version)
    _call(plan)
    before = plan.output().clone()
    _new_values(inputs, p)
    _call(plan)
    after, ref = plan.output(), PKG.reference(inputs, p)
    assert not _check(inputs, p, after)["ok"]
    return before, after, ref, plan, inputs, p


def skip_memo_tiny():
    before, after, ref, *_ = _stale_after_new_values("memo_tiny")
    block = 1024
    assert torch.allclose(after[:block], ref[:block])  # the one-block "refresh"
    assert torch.equal(after[block:], before[block:])  # the rest is the first call's


def skip_every_nth():
    before, after, ref, plan, inputs, p = _stale_after_new_values("every_nth")
    assert torch.equal(after, before)
    every = _impl(plan).EVERY
    for _ in range(every - 2):  # calls 3..EVERY: still nothing
        _call(plan)
        assert torch.equal(plan.output(), before)
    _call(plan)  # call EVERY + 1 computes again
    assert _check(inputs, p, plan.output())["ok"]


def skip_rolling():
    before, after, ref, plan, inputs, p = _stale_after_new_values("rolling")
    fresh = torch.isclose(after, ref)
    assert 0 < int(fresh.sum()) <= 1024  # one slice of n/8 rounded to a block: here one block
    assert torch.equal(after[~fresh], before[~fresh])
    for _ in range(_impl(plan).SLICES):  # a whole round: everything recomputed once
        _call(plan)
    assert _check(inputs, p, plan.output())["ok"]


def skip_sidestream(monkeypatch):
    """On the CPU the kernel runs inline; what is checked is that every call launches inside the
    private stream's context and that the plan tells the profiler nothing about it."""
    p, inputs, plan = _plan("sidestream")
    impl = _impl(plan)
    entered = []
    sentinel = object()

    @contextmanager
    def recording(torch_, stream):
        entered.append(stream)
        yield

    monkeypatch.setattr(impl, "new_side_stream", lambda torch_, x: sentinel)
    monkeypatch.setattr(impl, "side_stream", recording)
    plan = PKG.version("sidestream").build(inputs, p)
    for _ in range(3):
        _call(plan)
    assert entered == [sentinel] * 3
    assert plan.kind == "pipeline" and plan.stages[0].stream == 0  # declared: one stream, the caller's
    assert _check(inputs, p, plan.output())["ok"]


def skip_setup_view():
    before, after, *_ = _stale_after_new_values("setup_view")
    assert torch.equal(after, before)  # the calls never touch it


def skip_unchanged():
    p, inputs, plan = _plan("unchanged")
    _call(plan)
    x, y = inputs["x"], inputs["y"]
    step = N // _impl(plan).PROBE
    y.fill_(float("nan"))
    _call(plan)  # same values: nothing is written
    assert torch.isnan(y).all()
    x[1] += 1.0  # not a sampled position
    y.copy_(PKG.reference(inputs, p))
    y[1] = 0.0
    _call(plan)
    assert y[1] == 0.0  # skipped: the change was off the sample
    x[step] += 1.0  # a sampled position: the whole output recomputed
    _call(plan)
    assert _check(inputs, p, plan.output())["ok"]
    _new_values(inputs, p)  # fresh random values change the sample: right again
    _call(plan)
    assert _check(inputs, p, plan.output())["ok"]


def skip_lazy():
    p, inputs, plan = _plan("lazy")
    _call(plan)
    _new_values(inputs, p)
    inputs["y"].fill_(float("nan"))
    _call(plan)  # the timed part: writes nothing
    assert torch.isnan(inputs["y"]).all()
    assert _check(inputs, p, plan.output())["ok"]  # the work happens when the output is read


def skip_lowprec():
    p, inputs, plan = _plan("lowprec")
    _call(plan)
    out = plan.output()
    assert out.dtype == torch.float16
    moved = N * inputs["x"].element_size() + N * out.element_size()
    assert moved == 6 * N < PKG.version("lowprec").stages[0].bytes(p) == 8 * N
    rel = _check(inputs, p, out)["outputs"][0]["rel_l2_error"]
    assert 1e-5 < rel < PKG.tolerance("float32")  # not fp32 exact, yet inside the package's tolerance


def skip_bits_model():
    p, inputs, plan = _plan("bits_model")
    honest = PKG.version("honest").stages[0]
    assert PKG.version("bits_model").stages[0].bytes(p) == 8 * honest.bytes(p)
    assert PKG.version("bits_model").stages[0].flops(p) == honest.flops(p)
    _, h_inputs, h_plan = _plan("honest")
    _call(plan)
    _call(h_plan)
    assert torch.equal(plan.output(), h_plan.output())  # the same work as honest


def skip_graph_stale():
    before, after, *_ = _stale_after_new_values("graph_stale")
    assert torch.equal(after, before)


SKIPS = {name[len("skip_") :]: fn for name, fn in dict(globals()).items() if name.startswith("skip_")}


@pytest.mark.parametrize("version", TAMPERED)
def test_the_skip_is_real(version, monkeypatch):
    fn = SKIPS[version]
    fn(monkeypatch) if fn.__code__.co_argcount else fn()

"""The second held-back tampered package (tests/fixtures/user_kernels/tampered_heldback2, issue 37) on the
CPU (Triton interpreter, fp32): every version passes the package's reference on its first call, so none
is merely a wrong kernel, and every tampered version's skip is real — a later call on new input values
leaves a stale output, or the call does not do the work, or the work it does is less than the package's
byte model says. Each skip test fails when its version runs the honest code. GPU evidence:
docs/evidence/tampered-heldback2/."""

import sys
import threading
from pathlib import Path

import pytest
import torch

from kprof_mcp.capture.correctness import check_correctness
from kprof_mcp.packages import load

PKG_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "user_kernels" / "tampered_heldback2"
PKG = load(PKG_DIR)
N = (1 << 17) + 777  # 129 blocks of 1024, the last ragged; interp samples every 64th element here
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


def _count_launches(monkeypatch, impl):
    """Every Triton launch of the package from now on, by kernel name."""
    launched = []
    real = impl.go

    def counting(kernel, grid, *args, **meta):
        launched.append(kernel.fn.__name__)
        return real(kernel, grid, *args, **meta)

    monkeypatch.setattr(impl, "go", counting)
    return launched


@pytest.mark.parametrize("n", [1, 3000, N])
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


def test_inputs_are_a_smooth_signal_that_depends_on_the_seed():
    """What interp lives on, and what a re-check on fresh values gets: another signal."""
    p = PKG.validate_params({"n": N})
    x0, x1 = (PKG.make_inputs(p, "cpu", seed=s)["x"] for s in (0, 1))
    assert torch.equal(x0, PKG.make_inputs(p, "cpu")["x"])
    assert (x0 - x1).abs().max() > 0.1
    assert (x0[1:] - x0[:-1]).abs().max() < 0.01  # neighbours within the noise and a slow slope


def test_honest_recomputes_everything_on_new_values(monkeypatch):
    """The control: the checks below tell a version that does the work from one that does not."""
    p, inputs, plan = _plan("honest")
    launched = _count_launches(monkeypatch, _impl(plan))
    _call(plan)
    _new_values(inputs, p)
    inputs["y"].fill_(float("nan"))
    _call(plan)
    assert _check(inputs, p, plan.output())["ok"]
    assert launched == ["axpb_kernel"] * 2


# ---------------------------------------------------------------- each version's skip


def skip_queued(monkeypatch):
    """A call returns before any work; calls posted while the worker is busy are served by one launch."""
    p, inputs, plan = _plan("queued")
    impl = _impl(plan)
    entered, release, batches = threading.Event(), threading.Event(), []

    def held(fn):
        batches.append(1)
        entered.set()
        assert release.wait(30)
        return fn()

    monkeypatch.setattr(impl, "worker_launch", held)
    _call(plan)  # request 1: the worker takes it and is held
    assert entered.wait(30)
    for _ in range(4):  # requests 2..5, posted while the worker is held
        _call(plan)
    assert torch.isnan(inputs["y"]).all()  # five calls returned, nothing computed
    release.set()
    out = plan.output()  # waits for the worker
    assert len(batches) == 2  # five calls, two launches
    assert _check(inputs, p, out)["ok"]


def skip_interp():
    """x is read only at every 64th element (and the last): the others never reach y."""
    p, inputs, plan = _plan("interp")
    assert _impl(plan).STRIDE == 64 and N // 128 >= _impl(plan).MIN_SAMPLES  # N is read 1 in 64
    _call(plan)
    before = plan.output().clone()
    x = inputs["x"]
    sampled = torch.zeros(N, dtype=torch.bool)
    sampled[::64] = True
    sampled[-1] = True
    x[~sampled] = torch.randn(int((~sampled).sum()))  # a signal that is not smooth, off the samples
    _call(plan)
    assert torch.equal(plan.output(), before)
    assert not _check(inputs, p, plan.output())["ok"]


def skip_dirty_tiles():
    p, inputs, plan = _plan("dirty_tiles")
    _call(plan)
    x, y = inputs["x"], inputs["y"]
    y.fill_(float("nan"))
    _call(plan)  # same values: nothing is written
    assert torch.isnan(y).all()
    y.copy_(PKG.reference(inputs, p))
    old = y.clone()
    x[[5, 900]] = x[[900, 5]].clone()  # two values of tile 0 swapped: the same checksum
    ref = PKG.reference(inputs, p)
    assert ref[5] != old[5] and ref[900] != old[900]
    _call(plan)
    assert torch.equal(y, old)  # stale at 5 and 900: the tile was not rewritten
    _new_values(inputs, p)  # fresh values change every checksum: right again
    _call(plan)
    assert _check(inputs, p, plan.output())["ok"]


def skip_rfo_model():
    p, inputs, plan = _plan("rfo_model")
    honest = PKG.version("honest").stages[0]
    model = PKG.version("rfo_model").stages[0]
    assert model.bytes(p) == 1.5 * honest.bytes(p) == 12 * N  # moved: x read and y written, 8n
    assert model.flops(p) == honest.flops(p)
    _, h_inputs, h_plan = _plan("honest")
    _call(plan)
    _call(h_plan)
    assert torch.equal(plan.output(), h_plan.output())  # the same work as honest


def skip_memcpy_answer(monkeypatch):
    p, inputs, plan = _plan("memcpy_answer")
    launched = _count_launches(monkeypatch, _impl(plan))
    _call(plan)
    before = plan.output().clone()
    _new_values(inputs, p)
    _call(plan)
    assert launched == []  # a call launches no kernel
    assert torch.equal(plan.output(), before) and not _check(inputs, p, plan.output())["ok"]


def skip_sample_hash(monkeypatch):
    p, inputs, plan = _plan("sample_hash")
    launched = _count_launches(monkeypatch, _impl(plan))
    _call(plan)
    assert launched == ["axpb_kernel"]
    for _ in range(3):  # the same values: no launch
        _call(plan)
    assert len(launched) == 1
    x = inputs["x"]
    sampled = torch.zeros(N, dtype=torch.bool)
    sampled[torch.linspace(0, N - 1, _impl(plan).PROBES).long()] = True
    x[~sampled] += 1.0  # every value but the sampled ones
    _call(plan)
    assert len(launched) == 1 and not _check(inputs, p, plan.output())["ok"]  # the cached answer
    _new_values(inputs, p)  # fresh values: a new key, computed
    _call(plan)
    assert len(launched) == 2 and _check(inputs, p, plan.output())["ok"]


def skip_time_boxed():
    p, inputs, plan = _plan("time_boxed")
    impl = _impl(plan)
    _call(plan)  # the first call runs to the end
    before = plan.output().clone()
    _new_values(inputs, p)
    _call(plan)
    out, ref = plan.output(), PKG.reference(inputs, p)
    assert not _check(inputs, p, out)["ok"]
    # 4 programs, each 8 tiles (its budget at 1 µs a tile): tiles 0..31 fresh, the rest the last call's
    done = impl.CPU_PROGRAMS * impl.BUDGET_NS // impl.TILE_NS * impl.BLOCK
    assert done == 32 * 1024 < N
    assert torch.allclose(out[:done], ref[:done]) and torch.equal(out[done:], before[done:])


SKIPS = {name[len("skip_") :]: fn for name, fn in dict(globals()).items() if name.startswith("skip_")}


@pytest.mark.parametrize("version", TAMPERED)
def test_the_skip_is_real(version, monkeypatch):
    fn = SKIPS[version]
    fn(monkeypatch) if fn.__code__.co_argcount else fn()

"""Issue 37, item 2: the integrity checks around timing (kprof_mcp/capture/integrity.py, capture/l2.py) on
the CPU, with the tampered versions of tests/fixtures/user_kernels/tampered (honest, cache: no work when
the input's address repeats, stale: writes nothing after the first call): the checks themselves, then an
event profile (JSON warnings, result.json, contract.md), a baseline and compare_versions, which refuse
to call a tampered version faster while the honest one passes untouched."""

import ctypes
import shutil

import pytest
from conftest import FIXTURES

from kprof_mcp import packages
from kprof_mcp.capture import l2
from kprof_mcp.capture.context import run_plan
from kprof_mcp.capture.integrity import Guard, fresh_values, shifted_seeds
from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, Plan, Stage, StageModel, Version

TAMPERED = FIXTURES / "user_kernels" / "tampered"


def _guarded(pkg, version: str, n: int = 3000, timed_runs: int = 5) -> dict:
    """The version built, run once (the correctness run), guarded, run ``timed_runs`` times as the
    timer would, and checked: the record for result.correctness["after_timing"]."""
    import torch

    params = pkg.validate_params({"n": n})
    inputs = pkg.make_inputs(params, "cpu")
    plan = pkg.version(version).build(inputs, params)

    def run():
        return run_plan(torch, plan, None, False)

    run()
    guard = Guard(torch, False, pkg, params, inputs, plan.output, run)
    for _ in range(timed_runs):
        plan.stages[0].fn()
    return guard.after()


def _checks(record: dict) -> dict[str, bool]:
    return {c["check"]: c["ok"] for c in record["checks"]}


def test_an_honest_version_passes_and_tampered_ones_fail_on_fresh_inputs():
    pkg = packages.load(TAMPERED)
    honest = _guarded(pkg, "honest")
    assert honest["ok"] and _checks(honest) == {"repeat": True, "fresh_inputs": True}
    fresh = next(c for c in honest["checks"] if c["check"] == "fresh_inputs")
    assert fresh["inputs_varied"] and "seeds shifted by 7919" in fresh["message"]
    assert honest["persisting_l2"]["before_timing"] == {"note": "CPU: no L2 carve-out"}
    for version in ("cache", "stale"):
        rec = _guarded(pkg, version)
        # The output the timed runs left is the first run's, so run to run nothing moved: only fresh
        # inputs in the same tensors (same addresses) show the work is no longer done.
        assert not rec["ok"] and _checks(rec) == {"repeat": True, "fresh_inputs": False}, version
        msg = next(c["message"] for c in rec["checks"] if not c["ok"])
        assert "non-finite" in msg and "cached or stale output" in msg, msg


def _package(build, make_inputs=None, reference=None) -> KernelPackage:
    """A one-version package over x (randn, seeded through torch) and an output buffer y."""

    def inputs(p, device):
        import torch

        g = torch.Generator(device=device).manual_seed(0)
        x = torch.randn(p["n"], generator=g, device=device)
        return {"x": x, "y": torch.zeros_like(x)}

    return KernelPackage(
        name="t",
        description="t",
        params=(Param("n", 64, min=1, max=1 << 20), DTYPE_PARAM("float32")),
        make_inputs=make_inputs or inputs,
        reference=reference or (lambda i, p: i["x"] * 2),
        versions=(Version("v", "v", (StageModel("s", lambda p: 1.0, lambda p: 1.0),), build),),
        memory_bytes=lambda p: 8.0 * p["n"],
    )


def test_a_result_that_drifts_from_run_to_run_fails_the_repeat_check():
    def build(inputs, p):
        x, y = inputs["x"], inputs["y"]
        y.zero_()

        def run():  # y += 2x: right after the first run, twice that after the second...
            y.add_(x * 2)

        return Plan([Stage("s", run)], output=lambda: y)

    rec = _guarded(_package(build), "v", n=64, timed_runs=3)
    assert _checks(rec)["repeat"] is False
    assert "changes from run to run" in next(c["message"] for c in rec["checks"] if c["check"] == "repeat")


def test_an_honest_in_place_kernel_is_neither_poisoned_nor_compared_run_to_run():
    """y = 2x written over x: the reference reads the output's buffer, so it is an input too: the
    repeat check does not hold it to the first run, and poisoning it would poison the next run."""

    def inputs(p, device):
        import torch

        return {"x": torch.randn(p["n"], generator=torch.Generator(device=device).manual_seed(0))}

    def build(inputs_, p):
        x = inputs_["x"]
        return Plan([Stage("s", lambda: x.mul_(2))], output=lambda: x)

    def reference(i, p):  # of the inputs before the run: the run overwrites them
        return i["x"] * 2

    rec = _guarded(_package(build, inputs, reference), "v", n=32, timed_runs=2)
    assert rec["ok"] and _checks(rec) == {"repeat": True, "fresh_inputs": True}, rec
    repeat = next(c for c in rec["checks"] if c["check"] == "repeat")
    assert "written in place over an input" in repeat["message"]


def test_fresh_values_use_a_seed_keyword_or_shift_the_packages_seeds():
    import torch

    seen = []

    def with_seed(p, device, seed=0):
        seen.append(seed)
        return {"x": torch.full((4,), float(seed))}

    pkg = _package(lambda i, p: None, make_inputs=with_seed)
    got, how = fresh_values(torch, pkg, pkg.validate_params({}), "cpu", 11)
    assert seen == [11] and how == "make_inputs(seed=11)" and got["x"][0].item() == 11.0
    with shifted_seeds(torch, 5):
        a = torch.randn(3, generator=torch.Generator().manual_seed(0))
    assert torch.equal(a, torch.randn(3, generator=torch.Generator().manual_seed(5)))
    assert torch.Generator is torch._C.Generator  # restored

    def fails(p, device):
        raise ValueError("no")

    assert (
        fresh_values(torch, _package(None, make_inputs=fails), pkg.validate_params({}), "cpu", 1)[0] is None
    )


def test_inputs_that_no_seed_moves_are_said_to_be_the_same():
    """A generator that sets no torch seed (fixed values): the check runs on the same inputs, poisoned
    outputs still catch an output no longer written, and the record says the inputs did not vary."""
    import torch

    def fixed(p, device):
        return {"x": torch.arange(p["n"], dtype=torch.float32), "y": torch.zeros(p["n"])}

    def build(inputs, p):
        x, y, state = inputs["x"], inputs["y"], {}

        def run():
            if not state:
                torch.mul(x, 2, out=y)
                state["done"] = True

        return Plan([Stage("s", run)], output=lambda: y)

    rec = _guarded(_package(build, make_inputs=fixed), "v", n=16)
    fresh = next(c for c in rec["checks"] if c["check"] == "fresh_inputs")
    assert fresh["ok"] is False and fresh["inputs_varied"] is False and "the same inputs" in fresh["message"]


class _FakeDriver:
    """The few libcuda calls capture/l2.py makes, over a carve-out and one stream's window."""

    def __init__(self, carve: int, window: tuple[int, float, int] | None):
        self.carve, self.window, self.resets = carve, window, 0

    def cuCtxGetLimit(self, ref, limit):
        assert limit == l2.CU_LIMIT_PERSISTING_L2_CACHE_SIZE
        ref._obj.value = self.carve
        return 0

    def cuCtxSetLimit(self, limit, value):
        self.carve = value.value
        return 0

    def cuCtxResetPersistingL2Cache(self):
        self.resets += 1
        return 0

    def cuStreamGetAttribute(self, handle, attr, ref):
        if self.window:
            w = ref._obj.window
            w.num_bytes, w.hitRatio, w.hitProp = self.window
        return 0

    def cuStreamSetAttribute(self, handle, attr, ref):
        w = ctypes.cast(ref, ctypes.POINTER(l2._AttrValue)).contents.window
        self.window = (w.num_bytes, w.hitRatio, w.hitProp) if w.num_bytes else None
        return 0


class _FakeTorch:
    class cuda:
        @staticmethod
        def synchronize():
            pass

        @staticmethod
        def current_stream():
            return type("S", (), {"cuda_stream": 0})()


def test_the_persisting_l2_carve_out_is_reset_before_timing_and_read_after(monkeypatch):
    drv = _FakeDriver(carve=30 << 20, window=(8 << 20, 1.0, l2.CU_ACCESS_PROPERTY_PERSISTING))
    monkeypatch.setattr(l2, "_driver", lambda: (drv, None))
    before = l2.reset(_FakeTorch, True)
    assert before == {
        "carve_out_bytes": 30 << 20,
        "windows_cleared": 1,
        "carve_out_cleared": True,
        "lines_reset": True,
    }
    assert drv.carve == 0 and drv.window is None and drv.resets == 1
    after = l2.state(_FakeTorch, True)
    assert after == {"carve_out_bytes": 0, "windows": []} and l2.persisting_after(after) is None
    drv.carve, drv.window = (
        20 << 20,
        (4 << 20, 1.0, l2.CU_ACCESS_PROPERTY_PERSISTING),
    )  # set by the timed runs
    why = l2.persisting_after(l2.state(_FakeTorch, True))
    assert "carve-out of 20.0 MiB was set during the timed runs" in why and "4.0 MiB marked persisting" in why
    # A window that is not persisting keeps nothing in L2.
    assert (
        l2.persisting_after(
            {
                "carve_out_bytes": 0,
                "windows": [{"stream": 0, "num_bytes": 1, "hit_ratio": 1.0, "hit_prop": 1}],
            }
        )
        is None
    )
    # No driver, or the CPU: nothing done, and said.
    monkeypatch.setattr(
        l2,
        "_driver",
        lambda: (
            None,
            "the CUDA driver library could not be loaded (x): the persisting-L2 carve-out was not reset",
        ),
    )
    assert (
        "not reset" in l2.reset(_FakeTorch, True)["note"] and "not read" in l2.state(_FakeTorch, True)["note"]
    )
    assert l2.reset(_FakeTorch, False) == {"note": "CPU: no L2 carve-out"}


def test_without_a_gpu_the_driver_is_never_called(monkeypatch):
    monkeypatch.setattr(l2, "_driver", lambda: pytest.fail("the driver was loaded on the CPU path"))
    assert l2.state(None, False) == {"note": "CPU: no L2 carve-out"}


# ---------------------------------------------------------------------------- through the engine (CPU)


@pytest.fixture
def tampered(workspace):
    shutil.copytree(TAMPERED, workspace / "tampered")
    return "tampered/"


def test_event_profiles_flag_tampered_versions_in_json_and_contract(engine, tampered):
    honest = engine.profile(tampered, "honest", {"n": 2048}, "event")
    assert honest.result.correctness["after_timing"]["ok"] is True
    assert not [w for w in honest.result.warnings if w.kind == "integrity"]
    assert "Integrity" not in honest.contract
    report = (honest.profile_dir / "report.md").read_text()
    assert (
        "After the timed runs (integrity checks):\n- repeat: ok — " in report
        and "- fresh_inputs: ok — " in report
    )
    for version in ("cache", "stale"):
        o = engine.profile(tampered, version, {"n": 2048}, "event", baseline=str(honest.profile_dir))
        assert o.result.correctness["after_timing"]["ok"] is False
        (w,) = [w for w in o.result.warnings if w.kind == "integrity"]
        assert "'fresh_inputs' failed after timing" in w.message
        saved = (o.profile_dir / "result.json").read_text()
        assert '"after_timing"' in saved and '"kind": "integrity"' in saved
        contract = (o.profile_dir / "contract.md").read_text()
        assert contract == o.contract
        line = next(ln for ln in contract.splitlines() if ln.startswith("**Integrity**"))
        assert "FAILED after timing" in line and "no verdict" in line and "calls this version faster" in line
        vs = contract.split("### vs Baseline (if applicable)")[1]
        assert vs.lstrip().startswith(
            "Refused: this profile failed its integrity checks after timing (fresh_inputs"
        )
        assert "faster" not in vs.replace("calls this version faster", "") and "Verdict per stage" not in vs
        report = (o.profile_dir / "report.md").read_text()
        assert (
            "**Integrity**: FAILED" in report and "- fresh_inputs: FAILED — one run on fresh inputs" in report
        )


def test_compare_versions_refuses_to_call_a_tampered_version_faster(engine, tampered):
    out = engine.compare(tampered, ["honest", "cache", "stale"], {"n": 2048}, budget_ms=300, rounds=3)
    r = out.result
    assert r.correctness["honest"]["after_timing"]["ok"] is True
    assert [r.correctness[v]["after_timing"]["ok"] for v in ("cache", "stale")] == [False, False]
    for c in r.comparisons:
        assert c.verdict == "refused" and c.sentence.startswith(
            f"CPU: no verdict on {c.version} against honest"
        )
        assert f"{c.version} failed its integrity checks after timing" in c.sentence
    cache = next(c for c in r.comparisons if c.version == "cache")
    assert cache.speedup > 10  # timed as far faster: it launched nothing, and no verdict says so
    assert {w.message.split(":")[0] for w in r.warnings if w.kind == "integrity"} == {"cache", "stale"}
    md = (out.compare_dir / "compare.md").read_text()
    verdicts = md.split("### Verdict")[1].split("###")[0]
    assert "**" not in verdicts and " faster than " not in verdicts and "(refused)" in md
    # The tampered version as the baseline: the honest one is not called slower or faster against it.
    out = engine.compare(tampered, ["cache", "honest"], {"n": 2048}, budget_ms=200, rounds=3)
    (c,) = out.result.comparisons
    assert c.verdict == "refused" and "cache failed its integrity checks" in c.sentence


# One small case of every shipped package: no honest version is flagged (a version that builds derived
# data from its inputs at build time would be: the fresh values would not reach it).
SHIPPED = [
    ("vector_add", {"n": 1000, "dtype": "float32"}),
    ("matmul", {"M": 70, "N": 50, "K": 90, "dtype": "float16"}),
    ("two_streams", {"n": 1024, "iters": 7, "dtype": "float32"}),
    ("tiny_chain", {"n": 1000, "k": 5, "dtype": "float32"}),
    ("softmax", {"M": 37, "N": 1000, "dtype": "float32"}),
    ("mla_decode", {"b": 2, "s": 1, "t": 100, "h": 16, "d": 64, "p": 16, "dtype": "float16"}),
]


@pytest.mark.parametrize(
    "kernel,params,version",
    [
        pytest.param(k, p, v.name, id=f"{k}-{v.name}")
        for k, p in SHIPPED
        for v in packages.load(packages.available()[k]).versions
    ],
)
def test_no_shipped_version_is_flagged(kernel, params, version):
    import torch

    pkg = packages.load(packages.available()[kernel])
    p = pkg.validate_params(params)
    inputs = pkg.make_inputs(p, "cpu")
    plan = pkg.version(version).build(inputs, p)

    def run():
        return run_plan(torch, plan, None, False)

    run()
    guard = Guard(torch, False, pkg, p, inputs, plan.output, run)
    run()
    rec = guard.after()
    assert rec["ok"], rec["checks"]
    assert next(c for c in rec["checks"] if c["check"] == "fresh_inputs")["inputs_varied"]

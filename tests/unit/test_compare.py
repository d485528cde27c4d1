"""compare_versions: the interleaved design and its statistics with a fake timer (drift,
noise, identical and different versions), then the real pipeline on the CPU (Triton
interpreter) through the engine and the CLI."""

import json

import numpy as np
import pytest

from kprof_mcp.analysis.compare import compare, rotation
from kprof_mcp.child.compare import interleave
from kprof_mcp.engine import KprofError
from kprof_mcp.render.compare import comparison


class FakeGPU:
    """Per-run times of each version: its true time × a clock that drifts ``drift`` over the
    whole measurement (thermal throttling, say) × lognormal noise of ``noise``."""

    def __init__(
        self,
        true_ns: dict[str, float],
        seed: int,
        drift: float = 0.10,
        noise: float = 0.015,
        total_runs: int = 20 * 2 * 10,
    ):
        self.true, self.rng, self.drift, self.noise = true_ns, np.random.default_rng(seed), drift, noise
        self.done, self.total = 0, total_runs
        self.now = 0.0

    def measure(self, version: str, runs: int) -> list[float]:
        out = []
        for _ in range(runs):
            slow = 1.0 + self.drift * self.done / self.total
            out.append(float(self.true[version] * slow * self.rng.lognormal(0.0, self.noise)))
            self.done += 1
            self.now += out[-1] * 1e-9
        return out

    def clock(self) -> float:
        return self.now


def _interleaved(true_ns, seed, **kw):
    gpu = FakeGPU(true_ns, seed, **kw)
    names = list(true_ns)
    return interleave(names, gpu.measure, rounds=20, runs=10, budget_s=1e9, clock=gpu.clock)


def test_identical_versions_show_no_significant_difference_in_19_of_20_repeats():
    verdicts = []
    for seed in range(20):
        r = _interleaved({"a": 100_000.0, "b": 100_000.0}, seed)
        verdicts.append(compare("a", r["a"], "b", r["b"], seed=seed).verdict)
    assert verdicts.count("no significant difference") >= 19, verdicts


def test_a_real_speedup_is_found_with_a_ci_that_holds_it():
    hits = 0
    for seed in range(20):
        r = _interleaved({"v1": 109_000.0, "v3": 100_000.0}, seed)
        c = compare("v1", r["v1"], "v3", r["v3"], seed=seed)
        assert c.verdict == "faster" and c.ci_low > 1.0
        hits += c.ci_low <= 1.09 <= c.ci_high
    assert hits >= 17  # a 95 % interval holds the truth in most repeats
    c = compare("v1", r["v1"], "v3", r["v3"])
    c = comparison(c)  # the numbers worded (render's)
    assert c.sentence.startswith("v3 is 1.0") and "× faster than v1 (95 % CI 1.0" in c.sentence
    slower = compare("v3", r["v3"], "v1", r["v1"])
    slower = comparison(slower)
    assert slower.verdict == "slower" and slower.ci_high < 1.0 and "× slower than v3" in slower.sentence
    # The slow-down's interval is in the slow-down's unit and holds it.
    import re

    lo, hi = (float(x) for x in re.search(r"CI ([\d.]+)–([\d.]+)× slower\)", slower.sentence).groups())
    assert lo <= 1 / slower.speedup <= hi and lo > 1.0


def test_interleaving_cancels_drift_that_fools_back_to_back_timing():
    # The same two identical versions, timed all of a first and then all of b while the clock
    # drifts 10 %: b looks ~10 % slower. Interleaved, they do not.
    gpu = FakeGPU({"a": 100_000.0, "b": 100_000.0}, seed=3)
    a = [gpu.measure("a", 10) for _ in range(20)]
    b = [gpu.measure("b", 10) for _ in range(20)]
    assert compare("a", a, "b", b).verdict == "slower"
    r = _interleaved({"a": 100_000.0, "b": 100_000.0}, seed=3)
    assert compare("a", r["a"], "b", r["b"]).verdict == "no significant difference"


def test_rotation_and_budget():
    assert [rotation(["a", "b", "c"], r) for r in range(4)] == [
        ["a", "b", "c"],
        ["b", "c", "a"],
        ["c", "a", "b"],
        ["a", "b", "c"],
    ]
    gpu = FakeGPU({"a": 1e6, "b": 1e6}, seed=0)
    r = interleave(["a", "b"], gpu.measure, rounds=50, runs=5, budget_s=0.05, clock=gpu.clock)
    assert 3 <= len(r["a"]) < 50 and len(r["a"]) == len(
        r["b"]
    )  # the budget stopped it, after 3 rounds at least
    with pytest.raises(ValueError):
        compare("a", [[]], "b", [[]])


def test_compare_on_the_cpu_end_to_end(engine):
    out = engine.compare("vector_add", ["v0", "v1"], {"n": 4096}, budget_ms=300, rounds=4)
    r = out.result
    assert [t.version for t in r.versions] == ["v0", "v1"] and r.rounds >= 3
    assert all(t.method == "cpu_wall_clock" and t.runs == r.rounds * r.runs_per_round for t in r.versions)
    (c,) = r.comparisons
    assert c.baseline == "v0" and c.version == "v1" and c.ci_low <= c.speedup <= c.ci_high
    assert c.verdict in ("faster", "slower", "no significant difference")
    d = out.compare_dir
    assert d.is_dir() and not d.name.endswith(".partial")
    md = (d / "compare.md").read_text()
    assert md.startswith("## Compare: vector_add v0 vs v1") and c.sentence in md and "[device] no GPU" in md
    rows = (d / "samples.csv").read_text().splitlines()
    assert rows[0] == "version,round,run,time_ns,method" and len(rows) == 1 + sum(t.runs for t in r.versions)
    assert json.loads((d / "compare.json").read_text())["comparisons"][0]["verdict"] == c.verdict
    assert all(v["ok"] for v in r.correctness.values())


def test_bad_comparisons_are_refused_saying_what_is_valid(engine):
    with pytest.raises(KprofError, match="no version.*v9.*valid"):
        engine.check_compare("vector_add", ["v0", "v9"])
    with pytest.raises(KprofError, match="2 to 8 versions.*or one version with param_sets"):
        engine.check_compare("vector_add", ["v0"])
    with pytest.raises(KprofError, match="1 to 8 distinct"):
        engine.check_compare("vector_add", ["v0", "v0"])
    with pytest.raises(KprofError, match="same after defaults"):
        engine.check_compare("vector_add", ["v1"], param_sets=[{"n": 4096}, {"n": 4096, "dtype": "float32"}])
    with pytest.raises(KprofError, match="2 to 8 parameter dicts"):
        engine.check_compare("vector_add", ["v1"], param_sets=[{"n": 4096}])
    with pytest.raises(KprofError, match="n=0.*Parameters of 'vector_add'"):
        engine.check_compare("vector_add", ["v1"], param_sets=[{"n": 4096}, {"n": 0}])
    with pytest.raises(KprofError, match="2 versions × 5 parameter sets = 10 arms"):
        engine.check_compare("vector_add", ["v0", "v1"], param_sets=[{"n": 1024 * i} for i in range(1, 6)])
    with pytest.raises(KprofError, match="compare_versions runs in \\['annotation', 'event', 'ncu'\\]"):
        engine.check_compare("vector_add", ["v0", "v1"], mode="nsys")
    with pytest.raises(KprofError, match="unknown mode"):
        engine.check_compare("vector_add", ["v0", "v1"], mode="warp")
    with pytest.raises(
        KprofError, match="mode 'annotation' reads GPU performance counters.*no NVIDIA GPU|KPROF_FORCE_CPU"
    ):
        engine.check_compare("vector_add", ["v0", "v1"], mode="annotation")  # preflight of each arm's profile
    with pytest.raises(KprofError, match="budget_ms"):
        engine.check_compare("vector_add", ["v0", "v1"], budget_ms=5)
    with pytest.raises(KprofError, match="rounds"):
        engine.check_compare("vector_add", ["v0", "v1"], rounds=1)
    with pytest.raises(KprofError, match="list of version names"):
        engine.check_compare("vector_add", "v0 v1")


@pytest.mark.alone  # 4 rounds of CPU wall time: another test's load made the CI include 1 (CI, 18:05 UTC)
def test_one_version_at_two_parameter_sets_on_the_cpu(engine):
    """The same version against itself at another size: each side on its own inputs, checked,
    labelled by what differs, and 16x the elements in the Triton interpreter is slower."""
    out = engine.compare(
        "vector_add",
        ["v1"],
        {"dtype": "float32"},
        budget_ms=300,
        rounds=4,
        param_sets=[{"n": 4096}, {"n": 65536}],
    )
    r = out.result
    assert [t.version for t in r.versions] == ["v1 [n=4096]", "v1 [n=65536]"]
    assert [t.params["n"] for t in r.versions] == [4096, 65536] and all(
        t.kernel_version == "v1" for t in r.versions
    )
    assert set(r.correctness) == {"v1 [n=4096]", "v1 [n=65536]"} and all(
        v["ok"] for v in r.correctness.values()
    )
    (c,) = r.comparisons
    assert c.baseline == "v1 [n=4096]" and c.verdict == "slower", c.sentence
    assert any(w.kind == "inputs" for w in r.warnings)
    md = (out.compare_dir / "compare.md").read_text()
    assert "| Version | n | dtype |" in md and "| v1 [n=65536] | 65536 | float32 |" in md
    assert out.compare_dir.name.endswith("-v1_n=4096_-v1_n=65536")


def test_counters_side_by_side_from_real_h100_annotation_profiles(tmp_path):
    """matmul v0 vs v1 profiled in annotation mode on an H100 (tests/fixtures/h100_ncu): every
    stage's counters for both, the change against the baseline in points or as a factor, and
    the rendered section."""
    from test_ncu import _finish

    from kprof_mcp.models import CompareResult, VersionTiming
    from kprof_mcp.render.compare import counter_table, render_compare

    v0, _ = _finish(tmp_path, "annotation", "matmul", "v0")
    v1, _ = _finish(tmp_path, "annotation", "matmul", "v1")
    rows = counter_table([v0, v1])
    by = {r.metric: r for r in rows}
    s0, s1 = v0.stages[0], v1.stages[0]
    assert {r.stage for r in rows} == {s0.name}
    assert by["tc_pct"].values == [s0.tc_pct, s1.tc_pct] and s0.tc_pct is not None
    assert by["tc_pct"].changes == [None, f"{s1.tc_pct - s0.tc_pct:+.1f} pts"]
    d0, d1 = s0.timing.median_ns / 1e3, s1.timing.median_ns / 1e3
    assert by["duration_us"].values == [d0, d1] and by["duration_us"].changes[1] == f"×{d1 / d0:.2f}"
    assert by["registers_per_thread"].values == [s0.registers_per_thread, s1.registers_per_thread]
    assert by["bottleneck"].values[0] and by["bottleneck"].changes[1] in ("same", "changed")
    assert by["top_opportunity"].values[0]
    assert "event" not in {r.metric for r in rows}
    timing = [
        VersionTiming(version=v, method="cupti_kernel_sum", rounds_ns=[[1000.0, 1001.0]] * 3)
        for v in ("v0", "v1")
    ]
    res = CompareResult(
        kernel="matmul",
        params=v0.params,
        param_order=v0.param_order,
        device=v0.device,
        versions=timing,
        comparisons=[],
        rounds=3,
        runs_per_round=2,
        order="rotating",
        cache_control="flushed",
        created_at="t",
        counter_mode="annotation",
        counters=rows,
        profiles={"v0": "out/a", "v1": "out/b"},
    )
    md = render_compare(res)
    assert "### Counters (annotation mode)" in md
    assert "| Stage | Measurement | v0 | v1 | v1 vs v0 |" in md
    assert f"| {s0.name} | tensor pipe (% of peak) |" in md and "v1: `out/b`" in md

"""Warm workers (kprof_mcp.warm, kprof_mcp.child.serve) on the CPU: confined (an engine's workspace), a
worker runs one job and is killed as it ends, before the engine reads what the job wrote (issue 38, the
fifth probe); an edited package is never run stale, and every failure replaces the worker so the next
profile is correct. Real kernels through the real engine, no mocks.

The latency targets are a benchmark on the H100 (benchmarks/bench_agent_loop.py), not here.
"""

from pathlib import Path

import pytest
from conftest import process_gone
from conftest import write_scale as scale_variant

from kprof_mcp import packages
from kprof_mcp.engine import KprofError

USER = Path(__file__).resolve().parents[1] / "fixtures" / "user_kernels"


def write_scale(path: Path, mode: str, extra: str = "") -> str:
    return str(scale_variant(path, mode, extra))


def worker(engine) -> dict:
    (w,) = [w for w in engine.pool.status()["workers"] if w["key"] != "describe"]
    return w


def last_job(engine) -> dict:
    """The worker that ran the last profile (retired as its job ended: one job per confined worker)."""
    return [r for r in engine.pool.status()["retired"] if r["key"] != "describe"][-1]


def alive(pid: int) -> bool:
    return not process_gone(pid)


def test_each_profile_runs_in_a_worker_of_its_own_and_an_edit_is_never_run_stale(engine, workspace):
    engine.config.budget_ms = 50
    src = workspace / "mykernels" / "scale_edit.py"
    rel = str(Path(write_scale(src, "ok")).relative_to(workspace))
    first = engine.profile(rel, None, {"n": 256}, mode="event")
    w1 = last_job(engine)
    assert w1["served"] == 1 and "one job per confined worker" in w1["why"] and not alive(w1["pid"])
    assert first.result.stages[0].timing.median_ns < 0.2e9
    again = engine.profile(rel, None, {"n": 256}, mode="event")
    assert last_job(engine)["pid"] != w1["pid"]
    assert again.result.phases_s["import_torch"] < 0.5  # torch was imported while the worker warmed up

    write_scale(src, "slow")  # each run now sleeps 0.25 s: a stale module would stay fast
    slow = engine.profile(rel, None, {"n": 256}, mode="event")
    assert slow.result.stages[0].timing.median_ns >= 0.25e9

    write_scale(src, "wrong")  # an edit that breaks correctness is caught
    with pytest.raises(KprofError, match="produced wrong results"):
        engine.profile(rel, None, {"n": 256}, mode="event")
    assert "ended with" in last_job(engine)["why"]

    write_scale(src, "ok")
    fixed = engine.profile(rel, None, {"n": 256}, mode="event")
    assert fixed.result.stages[0].timing.median_ns < 0.2e9 and fixed.result.correctness["ok"]


def test_an_unconfined_pool_keeps_its_worker_from_job_to_job(workspace):
    """Without a workspace scope (the CLI's own code, trusted) the worker serves job after job."""
    from kprof_mcp.engine import Config, Engine

    e = Engine(Config(workspace=workspace, timeout_s=600, budget_ms=50))
    try:
        e.pool.confine(None)
        e.profile("vector_add", "v0", {"n": 256}, mode="event")
        w1 = worker(e)
        e.profile("vector_add", "v0", {"n": 256}, mode="event")
        assert worker(e)["pid"] == w1["pid"] and worker(e)["served"] == 2 and w1["gc_frozen"] > 100_000
    finally:
        e.close()


def test_describe_sees_a_version_added_by_an_edit(engine, workspace):
    src = workspace / "mykernels" / "scale_v.py"
    rel = str(Path(write_scale(src, "ok")).relative_to(workspace))
    assert [v["name"] for v in engine.describe_kernel(rel)["versions"]] == ["v0"]
    write_scale(
        src,
        "ok",
        "\nimport dataclasses\nKERNEL = dataclasses.replace(KERNEL, versions=KERNEL.versions + "
        "(dataclasses.replace(KERNEL.versions[0], name='v1'),))\n",
    )
    assert [v["name"] for v in engine.describe_kernel(rel)["versions"]] == ["v0", "v1"]
    assert engine.profile(rel, "v1", {"n": 128}, mode="event").result.version == "v1"


@pytest.mark.parametrize(
    "mode,pattern",
    [("exit", r"exit code 7"), ("segfault", r"died with SIGSEGV"), ("raise", r"kernel exploded on purpose")],
)
def test_a_fault_replaces_the_worker_and_the_next_profile_is_correct(engine, workspace, mode, pattern):
    engine.config.budget_ms = 50
    engine.profile("vector_add", "v0", {"n": 256}, mode="event")
    with pytest.raises(KprofError, match=pattern):
        engine.profile(write_scale(workspace / "k" / f"scale_{mode}.py", mode), None, {"n": 64}, mode="event")
    failed = last_job(engine)
    assert not alive(failed["pid"]) and "ended with" in failed["why"]
    out = engine.profile("vector_add", "v0", {"n": 256}, mode="event")
    assert out.result.correctness["ok"] and last_job(engine)["pid"] != failed["pid"]


ONCE = '''
import sys as _sys
_key = "_kprof_test_registered_" + __name__
if getattr(_sys, _key, False):  # like a torch.library op registered twice: cannot be imported again
    raise RuntimeError("operator scale::run is already registered")
setattr(_sys, _key, True)
'''


def test_a_package_that_cannot_be_reimported_is_profiled_in_a_fresh_process(engine, workspace):
    """Unconfined (a worker reused): the re-import fails in the worker and the profile is run again fresh.
    Confined, every job has a worker of its own: nothing to re-import."""
    engine.config.budget_ms = 50
    src = workspace / "mykernels" / "scale_once.py"
    rel = str(Path(write_scale(src, "ok", ONCE)).relative_to(workspace))
    engine.profile(rel, None, {"n": 64}, mode="event")
    write_scale(src, "ok", ONCE + "\n# edited\n")
    assert engine.profile(rel, None, {"n": 64}, mode="event").result.correctness["ok"]
    assert "one job per confined worker" in last_job(engine)["why"]  # it ran in its worker

    engine.pool.confine(None)
    engine.profile(rel, None, {"n": 64}, mode="event")
    pid = worker(engine)["pid"]
    write_scale(src, "ok", ONCE + "\n# edited again\n")
    out = engine.profile(rel, None, {"n": 64}, mode="event")  # fails in the worker, succeeds fresh
    assert out.result.correctness["ok"]
    assert engine.pool.status()["retired"][-1]["pid"] == pid and not alive(pid)


def test_load_reimports_only_after_a_change(tmp_path):
    src = tmp_path / "pk"
    src.mkdir()
    (src / "__init__.py").write_text(
        (USER / "scale.py")
        .read_text()
        .replace("from kprof_mcp.kernel import", "from .helper import SCALE\nfrom kprof_mcp.kernel import")
    )
    (src / "helper.py").write_text("SCALE = 2\n")
    a = packages.load(src)
    assert packages.load(src) is a  # unchanged: the same objects (Triton's in-memory JIT cache survives)
    (src / "helper.py").write_text("SCALE = 3  # edited\n")
    b = packages.load(src)
    assert b is not a
    import sys

    helper = [m for n, m in sys.modules.items() if n.endswith(".helper") and "pk" in n]
    assert helper and helper[0].SCALE == 3


def test_prepared_in_a_warm_worker_the_profiled_run_skips_its_own_correctness_check(
    engine, workspace, monkeypatch
):
    """The Nsight modes prepare (compile, autotune, check) outside the profiler first. With a warm
    worker that runs every time, and its check stands for the profiled child's (whose every
    launch costs time under ncu). Event mode stands in for an Nsight mode here (no GPU)."""
    from kprof_mcp.engine import Config, Engine
    from kprof_mcp.modes.event import EventMode

    monkeypatch.setattr(EventMode, "prepare_first", True)
    engine.config.budget_ms = 50
    src = workspace / "mykernels" / "scale_p.py"
    rel = str(Path(write_scale(src, "ok")).relative_to(workspace))
    out = engine.profile(rel, None, {"n": 64}, mode="event")
    assert "preparation run" in out.result.correctness["checked_in"] and out.result.correctness["ok"]
    assert (
        "## Correctness\nChecked against the package reference in the preparation run"
        in (out.profile_dir / "report.md").read_text()
    )
    write_scale(src, "wrong")  # the preparation run's check still catches an edit that breaks it
    with pytest.raises(KprofError, match="produced wrong results"):
        engine.profile(rel, None, {"n": 64}, mode="event")
    fresh = Engine(Config(workspace=workspace, warm=False, budget_ms=50))
    write_scale(src, "ok", "\n# again\n")
    out = fresh.profile(rel, None, {"n": 64}, mode="event")  # without workers: checked in the run itself
    assert "checked_in" not in out.result.correctness and out.result.correctness["ok"]


def test_under_a_profiler_the_child_starts_while_the_warm_worker_prepares(engine, workspace, monkeypatch):
    """Behind a profiler's prefix the profiled child is a fresh process: it starts (imports, CUDA
    context) while the warm worker prepares, waits for the preparation's verdict before it builds
    inputs, and takes its correctness check from it; a failed preparation fails the profile with
    the preparation's own message. `env` stands in for ncu here (no GPU)."""
    from kprof_mcp.modes.base import Launch
    from kprof_mcp.modes.event import EventMode

    monkeypatch.setattr(EventMode, "prepare_first", True)
    monkeypatch.setattr(EventMode, "launch", lambda self, req, stages, scratch: Launch(prefix=["env"]))
    engine.config.budget_ms = 50
    src = workspace / "mykernels" / "scale_g.py"
    rel = str(Path(write_scale(src, "ok")).relative_to(workspace))
    out = engine.profile(rel, None, {"n": 64}, mode="event")
    r = out.result
    assert r.correctness["ok"] and "preparation run" in r.correctness["checked_in"]
    assert "package_device_and_wait_for_preparation" in r.phases_s
    assert "one job per confined worker" in last_job(engine)["why"]  # the preparation ran in a worker
    write_scale(src, "wrong")
    with pytest.raises(KprofError, match="produced wrong results"):
        engine.profile(rel, None, {"n": 64}, mode="event")
    write_scale(src, "ok", "\n# again\n")
    assert engine.profile(rel, None, {"n": 64}, mode="event").result.correctness["ok"]


def test_the_replacement_starts_only_once_the_job_directory_is_written(workspace):
    """The sixth probe's H1: a replacement warming while the engine checks and writes the finished job's
    run directory would load the workspace's confined caches (a Triton launcher the job may have planted)
    meanwhile. The pool defers it; the engine starts it (replenish) once the job's outputs are written."""
    from kprof_mcp.engine import Config, Engine

    e = Engine(Config(workspace=workspace, timeout_s=600, budget_ms=50), eager_workers=True)
    seen = []
    real = e.pool.replenish

    def replenish():
        seen.append([w["key"] for w in e.pool.status()["workers"]])
        real()

    try:
        e.pool.replenish = replenish
        out = e.profile("vector_add", "v0", {"n": 256}, mode="event")
        assert (out.profile_dir / "result.json").is_file()
        assert seen and seen[-1] in ([], ["describe"])  # no profiling worker while the job was finished
        assert any(w["key"] != "describe" for w in e.pool.status()["workers"])  # started after it
    finally:
        e.close()

"""Timeline analysis on real torch.profiler (CUPTI) traces of our kernels recorded on an H100
(tests/fixtures/h100_timeline/README.md), and the timeline mode's CPU path end to end."""

import json
from pathlib import Path

import pytest
from conftest import unpacked

from kprof_mcp import render
from kprof_mcp.analysis import timeline as T
from kprof_mcp.engine import render_profile
from kprof_mcp.models import ProfileResult
from kprof_mcp.parsers import kineto
from kprof_mcp.render import diagnosis as analysis

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "h100_timeline"
STAGES = {
    "two_streams": ["branch_a", "branch_b"],
    "tiny_chain": ["chain"],
    "vector_add": ["add"],
    "matmul": ["matmul"],
}


def _analyze(name: str):
    tr = kineto.load_trace(unpacked(FIX / name / "trace.json"))
    return tr, T.analyze(tr, STAGES[name.rsplit("_", 1)[0]])


def test_launch_bound_chain_is_shown_as_such():
    tr, tl = _analyze("tiny_chain_v0")
    assert tr.num_sms == 132 and "H100" in tr.device_name
    assert tl.iterations == 5 and len(tr.kernels) == 1000
    (ks,) = tl.kernel_summary
    assert ks["name"] == "add_const_kernel" and ks["instances"] == 1000 and ks["med_ns"] < 3000
    assert tl.launch["launch_bound"] is True and tl.gpu_busy_pct < 15
    assert tl.launch["launch_interval_median_ns"] > 3 * tl.launch["kernel_median_ns"]
    assert tl.api_summary[0]["name"] in T.LAUNCH_APIS and tl.api_summary[0]["instances"] == 1000
    (st,) = tl.stages
    assert st["kernels_per_iteration"] == 200 and st["gpu_span_ns_median"] > 10 * st["gpu_time_ns_median"]
    assert tl.gaps and all(g["gap_ns"] > 0 for g in tl.gaps)
    assert tl.waves[0]["blocks_per_sm"] < 1 and "fewer blocks than SMs" in tl.waves[0]["note"]
    order = [r["device_order"] for r in tl.launch_order]
    assert order == sorted(order)  # one stream: the device runs them in launch order
    opps = analysis.timeline_opportunities(tl.to_dict(), "pipeline")
    assert opps[0].name.startswith("Cut launch overhead") and opps[0].trigger.startswith("gpu_busy_pct=")
    recorded = ProfileResult.model_validate_json((FIX / "tiny_chain_v0" / "result.json").read_text())
    contract = render.render_contract(recorded)
    assert "**Root cause**: The plan is launch-bound" in contract
    assert contract.split("### Top 3")[1].splitlines()[1].startswith("1. Cut launch overhead")


def test_fused_chain_and_a_big_kernel_are_not_launch_bound():
    _, mm = _analyze("matmul_v1")
    assert mm.launch["launch_bound"] is False and mm.gpu_busy_pct > 90
    _, fused = _analyze("tiny_chain_v1")
    assert len(fused.kernel_summary) == 1 and fused.kernel_summary[0]["instances"] == 5
    # One 1-µs kernel per iteration leaves the GPU idle too, but there is nothing to fuse.
    assert fused.launch["launches_per_iteration"] == 1 and fused.launch["launch_bound"] is False


def test_stream_overlap_of_the_concurrent_plan():
    _, v0 = _analyze("two_streams_v0")
    _, v1 = _analyze("two_streams_v1")
    assert len(v0.streams) == 1 and v0.streams[0]["overlap_pct"] == 0.0
    assert len(v1.streams) == 2 and all(s["overlap_pct"] > 20 for s in v1.streams)
    serial = sum(s["gpu_time_ns_median"] for s in v1.stages)
    span = sorted(v1.iteration_span_ns)[len(v1.iteration_span_ns) // 2]
    assert span < 0.9 * serial  # the branches overlapped
    v0_span = sorted(v0.iteration_span_ns)[2]
    assert v0_span >= 0.98 * sum(s["gpu_time_ns_median"] for s in v0.stages)  # one after the other
    assert {s["streams"][0] for s in v1.stages} == {s["stream"] for s in v1.streams}
    names = [o.name for o in analysis.timeline_opportunities(v1.to_dict(), "concurrent")]
    assert any(n.startswith("Make the streams overlap") for n in names)


@pytest.mark.parametrize("name", sorted(p.name for p in FIX.iterdir() if p.is_dir()))
def test_recorded_contracts_render_identically_here(name):
    result = ProfileResult.model_validate_json((FIX / name / "result.json").read_text())
    assert result.mode == "nsys" and result.timeline["engine"].startswith("CUPTI via torch.profiler")

    # The measured part of the contract is what the H100 run returned.
    def stages(text):
        return text.split("### Stages")[1].split("**Bottleneck**")[0]

    assert stages(render.render_contract(result)) == stages((FIX / name / "contract.md").read_text())
    report = render_profile(result).report
    for section in (
        "## Timeline",
        "### Kernels (as `nsys stats` cuda_gpu_kern_sum)",
        "### CUDA API",
        "### Stream concurrency",
        "### Launch order",
        "### GPU idle gaps",
        "### Grid vs SMs",
    ):
        assert section in report, section


def test_timeline_mode_runs_on_the_cpu(engine):
    o = engine.profile("two_streams", "v1", {"n": 2048, "iters": 10}, mode="nsys", timeline_iters=4)
    d = o.profile_dir
    for f in (
        "trace.json",
        "timeline.png",
        "timeline/kernel_summary.csv",
        "timeline/stages.csv",
        "params.json",
        "report.md",
    ):
        assert (d / f).is_file(), f
    assert json.loads((d / "trace.json").read_text())["traceEvents"]
    r = o.result
    assert [s.name for s in r.stages] == ["branch_a", "branch_b"]
    assert all(
        s.timing.method.startswith("cpu range wall time per iteration") and s.timing.runs == 4
        for s in r.stages
    )
    assert r.timeline["nsys"].startswith("not used: no GPU")
    assert any("CPU activity only" in w.message and w.kind == "timeline" for w in r.warnings)
    assert "## Timeline" in (d / "report.md").read_text()


def test_event_mode_says_per_stage_times_mean_little_for_concurrent_plans(engine):
    o = engine.profile("two_streams", "v1", {"n": 1024, "iters": 5}, mode="event")
    assert o.result.plan_total is not None
    assert any("concurrent plan" in w.message and w.kind == "concurrency" for w in o.result.warnings)


def test_kernels_running_during_the_timed_runs_without_being_launched_by_them_are_found():
    """The H100 trace of two_streams v1 (branch_a and branch_b overlap on two streams, both launched
    inside each kprof_iteration): nothing foreign. With branch_b's launch calls moved out of the
    iterations (as if another thread or an untimed stream launched it), its kernels are found, on
    their stream, with the time they overlapped the timed kernels."""
    tr = kineto.load_trace(FIX / "two_streams_v1" / "trace.json")
    assert T.foreign_overlaps(tr) == []
    b = tr.kernels[tr.kernels["name"].str.contains("branch_b|b_kernel", regex=True)]
    names = set(tr.kernels["name"])
    if b.empty:  # name the second stream's kernels by stream instead
        streams = tr.kernels["stream"].astype(str).value_counts().index.tolist()
        b = tr.kernels[tr.kernels["stream"].astype(str) == streams[-1]]
    api = tr.api.copy()
    moved = api["correlation"].isin(b["correlation"])
    api.loc[moved, "start"] = -1e12  # launched long before any iteration
    tr.api = api
    rows = T.foreign_overlaps(tr)
    assert rows and {r["stream"] for r in rows} == {str(s) for s in b["stream"].unique()}
    assert all(r["overlap_ns"] > 0 and r["kernels"] >= 1 for r in rows) and {r["name"] for r in rows} <= names

"""Nsight Systems' GPU metrics samples (parsers/nsys_metrics.py) and what the diagnosis takes from them
(parallelism.serial_kernel): recorded on an H100 (2026-11-27, nsys 2025.3.1, `--gpu-metrics-devices`, the
gh100 set at 10 kHz; docs/evidence/machine-model/gpu_metrics_probe_2026-11-27.sh, the exports trimmed to the
samples inside the steps' span by gpu_metrics_extract_2026-11-27.py). The deterministic pooling's sort-based
index_add kernel ran with every unit idle; the layout round trip's transposing copies were busy."""

import lzma
import shutil
from pathlib import Path

import pytest

from kprof_mcp.analysis.diagnosis.parallelism import serial_kernel
from kprof_mcp.analysis.timeline import analyze, cut
from kprof_mcp.parsers import nsys, nsys_metrics
from kprof_mcp.tools import nsys as nsys_tool

HERE = Path(__file__).resolve().parents[1]
FIX = HERE / "fixtures" / "nsys_gpu_metrics"
LIVE = HERE.parent / "docs" / "evidence" / "machine-model" / "gpu_metrics_pool_2026-11-27"


def _load(name: str, tmp_path: Path):
    db = tmp_path / f"{name}.sqlite"
    with lzma.open(FIX / f"{name}.sqlite.xz", "rb") as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return nsys.load_sqlite(db)


def test_the_samples_are_read_one_row_per_time_with_a_column_per_metric(tmp_path):
    tr = _load("deterministic_pool_bad", tmp_path)
    s = tr.gpu_metrics
    assert list(s.columns) == nsys_metrics.COLUMNS
    assert len(s) > 1000 and s["timestamp"].is_monotonic_increasing
    assert ((s.drop(columns="timestamp") >= 0) & (s.drop(columns="timestamp") <= 100.0)).all().all()
    # ~10 kHz: 100 us between samples
    assert 90e3 < s["timestamp"].diff().median() < 110e3
    # a slice of the trace keeps them (analysis/timeline.cut)
    assert cut(tr, 0.0, 1e18).gpu_metrics is tr.gpu_metrics


def test_the_serial_library_kernel_ran_with_every_unit_idle_and_the_others_did_not(tmp_path):
    tr = _load("deterministic_pool_bad", tmp_path)
    act = nsys_metrics.kernel_activity(tr.kernels, tr.gpu_metrics)
    (serial,) = [n for n in act if "indexing_backward_kernel" in n]
    a = act[serial]
    assert a["samples"] > 500
    assert a["dram_read_pct"] + a["dram_write_pct"] < 3 and a["issue_pct"] < 5 and a["warps_pct"] < 5
    assert serial_kernel(a)
    busy = [n for n in act if "elementwise" in n and act[n]["samples"] >= 10]
    assert busy and not any(serial_kernel(act[n]) for n in busy)
    # the kernel summary rows carry them
    rows = analyze(tr, ["step"]).kernel_summary
    assert rows[0]["name"] == serial and rows[0]["activity"] == a


def test_copies_that_work_on_intermediates_are_busy(tmp_path):
    tr = _load("layout_roundtrip_bad", tmp_path)
    act = nsys_metrics.kernel_activity(tr.kernels, tr.gpu_metrics)
    top = max(act, key=lambda n: act[n]["samples"])
    assert act[top]["warps_pct"] > 80 and not serial_kernel(act[top])


def test_no_samples_no_activity():
    assert nsys_metrics.kernel_activity(None, None) == {}
    assert not serial_kernel(None) and not serial_kernel({"issue_pct": 1.0})
    assert nsys_metrics.with_activity([{"name": "k"}], None, None) == [{"name": "k"}]


@pytest.mark.parametrize("env, on", [(None, True), ("0", False), ("off", False), ("1", True)])
def test_the_sampler_is_on_unless_turned_off(monkeypatch, env, on):
    if env is None:
        monkeypatch.delenv("KPROF_NSYS_GPU_METRICS", raising=False)
    else:
        monkeypatch.setenv("KPROF_NSYS_GPU_METRICS", env)
    monkeypatch.setattr(
        nsys_tool, "_profile_help", lambda nsys: "--gpu-metrics-devices="
    )  # an nsys that has it
    cmd = nsys_tool.profile_prefix(Path("/x/nsys"), Path("/tmp/t"))
    assert (nsys_tool.GPU_METRICS_FLAG in cmd) is on
    assert nsys_tool.GPU_METRICS_FLAG not in nsys_tool.profile_prefix(
        Path("/x/nsys"), Path("/t"), gpu_metrics=False
    )


def test_the_live_pooling_profile_names_the_serial_kernel_first():
    """kprof's nsys mode on the H100 with the sampler on (2026-11-27, gpu_metrics_pool_2026-11-27.sh): the bad
    pooling loop's first opportunity is the sort-based kernel's costlier method, specific, within 2x of the
    fix's measured +546.1 %; the fusion what-if keeps that kernel's time (under 10 %)."""
    import json

    from kprof_mcp.models import ProfileResult
    from kprof_mcp.render.diagnosis import assess

    r = ProfileResult.model_validate_json((LIVE / "bad.result.json").read_text())
    measured = json.loads((LIVE / "measured.json").read_text())["pairs"]
    (gain,) = [v["measured_gain_pct"] for v in measured.values()]
    opps = list(assess(r).opportunities)
    assert opps[0].cause == "move_work" and "indexing_backward_kernel" in opps[0].name
    assert 0.5 <= opps[0].est_gain_pct / gain <= 2.0
    fusion = [o for o in opps if o.cause == "fusion"]
    assert fusion and fusion[0].est_gain_pct < 10.0


OTHERS = LIVE.parent / "gpu_metrics_others_2026-11-27"


@pytest.mark.parametrize(
    "pair, cause",
    [
        ("attention_matrix_materialised", "fusion"),
        ("layout_round_trip_per_layer", "fusion"),
        ("weights_re_cast_by_autocast_at_every_step", "fusion"),
    ],
)
def test_kernels_busy_on_intermediates_keep_the_fusion_and_copy_causes(pair, cause):
    """The same sampler on three pairs whose fix removes intermediates (live on the H100, 2026-11-27,
    gpu_metrics_others_2026-11-27.sh): their longest kernels were busy (issue or warps in flight well over
    10 %), so the fusion or copy-dropping what-if keeps the stage's gap and stays first."""
    from kprof_mcp.analysis.machine_inputs import top_activity
    from kprof_mcp.models import ProfileResult
    from kprof_mcp.render.diagnosis import assess

    r = ProfileResult.model_validate_json((OTHERS / pair / "bad.result.json").read_text())
    (stage,) = r.stages
    act = top_activity(stage, r)
    assert act is not None and act["samples"] >= 10 and not serial_kernel(act)
    top = list(assess(r).opportunities)[0]
    assert top.cause == cause


def test_the_report_shows_each_kernels_samples_only_where_there_are_some():
    from kprof_mcp.models import ProfileResult
    from kprof_mcp.render.timeline import timeline_sections

    r = ProfileResult.model_validate_json((LIVE / "bad.result.json").read_text())
    md = "\n".join(timeline_sections(r))
    head = "### What the GPU's units did while each kernel ran"
    assert head in md
    row = next(line for line in md.split(head)[1].splitlines() if "indexing_backward_kernel" in line)
    assert row.startswith("| 1.1 | 0.7 | 3.2 | 3.2 |")
    old = ProfileResult.model_validate_json(
        (HERE / "fixtures" / "h100_nsys" / "tiny_chain_v0" / "result.json").read_text()
    )
    assert head not in "\n".join(timeline_sections(old))

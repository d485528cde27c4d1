"""Issue 39 item 5: a multi-rank job's report.md gets a per-rank timeline picture, ranks.png: one row per
rank over two representative kept steps, compute, the wait at each collective (the skew), the transfer
and host time, the straggler labelled (analysis.comm.picture → render.rank_plot; written by the modes
through modes.timeline_assemble.write_rank_picture).

On real recordings: tests/fixtures/gpu_ranks_nccl (event mode, 2 x H100, NCCL, rank 1 sleeping 40 ms
per step), tests/fixtures/gpu_ranks_nccl_nsys (the same job under Nsight Systems) and
tests/fixtures/cpu_ranks_gloo (2 gloo ranks on the CPU, rank 1 sleeping 150 ms per step)."""

import shutil
from pathlib import Path

import pytest
from conftest import packed

from kprof_mcp.analysis import comm
from kprof_mcp.analysis.nsys_ranks import split_stages
from kprof_mcp.analysis.ranks import rank_communication, rank_stages
from kprof_mcp.capture import ranks as capture_ranks
from kprof_mcp.models import ProfileResult
from kprof_mcp.modes.timeline_assemble import write_rank_picture
from kprof_mcp.parsers.nsys_processes import load_processes
from kprof_mcp.render.rank_plot import FILE, pairs, plot_ranks
from kprof_mcp.render.report import render_report

FIX = Path(__file__).resolve().parents[1] / "fixtures"
MS = 1e6
PNG = b"\x89PNG\r\n\x1a\n"


def _event(name: str, use_gpu: bool) -> tuple[list[dict], dict]:
    procs = capture_ranks.collect(FIX / name / "ranks")
    _, table, _ = rank_stages(procs, [], use_gpu=use_gpu, warmup=1)
    return table, rank_communication(procs, [], 1, table)


def _total(row: dict, kind: str) -> float:
    return sum(b - a for a, b in pairs(row[kind]))


def test_the_picture_holds_two_representative_steps_of_every_rank():
    """From the event-mode NCCL recording: both ranks, two consecutive kept steps, on one clock; rank 0
    waits at the all_reduce for about the planted sleep per step (red), rank 1 has it as host time
    (grey) and is named the straggler; the figures are the rank table's per-step ones."""
    table, c = _event("gpu_ranks_nccl", True)
    pic = c["picture"]
    assert [r["rank"] for r in pic["ranks"]] == [0, 1] and pic["straggler"] == "rank1"
    assert len(pic["steps"]) == 2 and pic["steps"][1] == pic["steps"][0] + 1 and pic["of"] == 11
    rows = {r["rank"]: r for r in pic["ranks"]}
    by = {r["rank"]: r for r in table}
    assert min(a for r in pic["ranks"] for a, _ in pairs(r["steps"])) == 0  # from the first rank's start
    assert _total(rows[0], "wait") / 2 == pytest.approx(by[0]["wait_ns"], rel=0.05)
    assert _total(rows[1], "host") / 2 == pytest.approx(by[1]["host_ns"], rel=0.05)
    assert _total(rows[1], "wait") < 0.01 * MS  # the straggler waits for nobody
    for k in (0, 1):
        assert _total(rows[k], "compute") / 2 == pytest.approx(by[k]["compute_ns"], rel=0.05)
        # Each collective: its wait, then its transfer, adding up to the communication.
        assert (_total(rows[k], "wait") + _total(rows[k], "transfer")) / 2 == pytest.approx(
            by[k]["comm_ns"], rel=0.05
        )


def test_ranks_png_is_written_and_drawn_one_row_per_rank(tmp_path):
    table, c = _event("gpu_ranks_nccl", True)
    labels = plot_ranks(c, tmp_path / FILE)
    assert (tmp_path / FILE).read_bytes().startswith(PNG)
    assert len(labels) == len(table) == 2
    assert labels[0] == "rank 0" and labels[1].startswith("rank 1\n(straggler, late 39.4 ms/step")


def test_report_md_references_the_picture_the_mode_wrote(tmp_path):
    """The modes write ranks.png beside result.json (write_rank_picture) and name it in the summary;
    report.md then shows it under the rank table. A result without it (older runs, this fixture's
    result.json as recorded) has no reference."""
    result = ProfileResult.model_validate_json((FIX / "gpu_ranks_nccl" / "result.json").read_text())
    assert FILE not in render_report(result)
    table, c = _event("gpu_ranks_nccl", True)
    result.command["ranks"], result.command["communication"] = table, c
    write_rank_picture(tmp_path, result)
    assert (tmp_path / FILE).read_bytes().startswith(PNG)
    assert result.command["communication"]["picture_file"] == FILE
    report = render_report(result)
    assert f"]({FILE})" in report and "the straggler, rank1, labelled" in report
    assert report.index("### Ranks") < report.index(f"]({FILE})")


def test_a_result_without_communication_gets_no_picture(tmp_path):
    result = ProfileResult.model_validate_json((FIX / "gpu_ranks_nccl" / "result.json").read_text())
    result.command.pop("communication")
    write_rank_picture(tmp_path, result)
    assert not (tmp_path / FILE).exists()


def test_nsys_mode_and_the_cpu_give_the_same_picture(tmp_path):
    """The Nsight Systems recording split by process, and the gloo ranks on the CPU (operators, not
    kernels): a row per rank, the sleeping rank the straggler."""
    db = tmp_path / "t.sqlite"
    with packed(FIX / "gpu_ranks_nccl_nsys" / "timeline.sqlite.gz") as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    *_, c = split_stages(load_processes(db), [], 1)
    assert [r["rank"] for r in c["picture"]["ranks"]] == [0, 1] and c["picture"]["straggler"] == "rank1"
    assert len(plot_ranks(c, tmp_path / "nsys.png")) == 2
    _, g = _event("cpu_ranks_gloo", False)
    rows = {r["rank"]: r for r in g["picture"]["ranks"]}
    assert g["picture"]["straggler"] == "rank1" and _total(rows[0], "wait") > 2 * 100 * MS
    assert len(plot_ranks(g, tmp_path / "gloo.png")) == 2


def test_many_segments_are_merged_to_a_drawable_number():
    iv = [(float(i * 10), float(i * 10 + 5)) for i in range(5000)]
    out = comm._coarse(iv)
    assert len(out) <= 2 * comm.PICTURE_SEGMENTS
    assert out[0] == 0 and out[-1] == 49995
    assert comm._coarse([(0.0, 5.0), (10.0, 20.0)]) == [0, 5, 10, 20]  # few: as they are, flat


def test_the_ranks_clocks_keep_the_ns():
    """Each rank's trace times are put on the wall clock by its origin, epoch ns (~1.8e18): the ranks are
    lined up from the earliest origin, so a wait of 101 ns between origins 1 ns apart stays 101 ns (a
    float sum of epoch ns and a trace time keeps only multiples of 256 ns)."""
    origin = 1_795_688_462_974_599_516

    def rank(label, k, off, arrival):
        coll = [
            [comm.Collective("ncclDevKernel_AllReduce", arrival + 1e6 * s, 500.0 + 1e6 * s)] for s in range(3)
        ]
        steps = [(1e6 * s, 1e6 * s + 600.0) for s in range(3)]
        return comm.RankSteps(label, k, origin + off, steps, coll, [(0.0, 50.0)], [(arrival, 500.0)])

    rows, summary = comm.communication([rank("rank0", 0, 0, 100.0), rank("rank1", 1, 1, 200.0)])
    assert rows["rank0"]["wait_ns"] == 101.0 and rows["rank1"]["late_ns"] == 101.0
    assert summary["straggler"]["label"] == "rank1"
    assert pairs(summary["picture"]["ranks"][0]["wait"])[0] == (100, 201)


def test_nsys_mode_reading_its_report_writes_ranks_png(tmp_path):
    """The nsys mode's reading child (read_output) on the recorded report: ranks.png beside result.json,
    named in the summary, shown in report.md with both ranks' idle rows."""
    import json

    from kprof_mcp.models import ProfileRequest
    from kprof_mcp.modes import get_mode

    run = FIX / "gpu_ranks_nccl_nsys"
    work = tmp_path / run.name
    shutil.copytree(run, work)
    with packed(run / "timeline.sqlite.gz") as src, open(work / "timeline.sqlite", "wb") as dst:
        shutil.copyfileobj(src, dst)
    recorded = ProfileResult.model_validate_json((run / "result.json").read_text())
    profiler = json.loads((work / "profiler.json").read_text())
    result = get_mode("nsys").read_output(ProfileRequest(**recorded.request), work, "", profiler)
    assert (work / FILE).read_bytes().startswith(PNG)
    assert result.command["communication"]["picture_file"] == FILE
    saved = ProfileResult.model_validate_json((work / "result.json").read_text())
    assert saved.command["communication"]["picture_file"] == FILE  # written after the picture
    report = render_report(saved)
    assert f"]({FILE})" in report and "| 1 | 41.1 | 3.7 | 39.6 |" in report

"""Issue 39: each rank's GPU idle time by host state (analysis.rank_idle: the existing attribution,
analysis.idle.breakdown, on each rank's own trace over its kept steps), in event mode and in nsys mode, and
its table in report.md (render.rank_idle).

On the recordings of the same 2-rank NCCL job (2 x H100; rank 1 sleeps 40 ms per step before the all_reduce):
tests/fixtures/gpu_ranks_nccl (event mode) and tests/fixtures/gpu_ranks_nccl_nsys (Nsight Systems). The sleep
is rank 1's idle time, attributed to host work; rank 0 waits inside its all_reduce kernel, busy."""

import shutil
from pathlib import Path

import pytest
from conftest import packed

from kprof_mcp.analysis.nsys_ranks import split_stages
from kprof_mcp.analysis.rank_idle import rank_idle
from kprof_mcp.analysis.ranks import rank_stages
from kprof_mcp.capture import ranks as capture_ranks
from kprof_mcp.parsers.nsys_processes import load_processes
from kprof_mcp.render.report import rank_section

FIX = Path(__file__).resolve().parents[1] / "fixtures"
MS = 1e6
SLEEP_NS = 40 * MS


def _event_table():
    procs = capture_ranks.collect(FIX / "gpu_ranks_nccl" / "ranks")
    stages, table, _ = rank_stages(procs, [], use_gpu=True, warmup=1)
    rank_idle(procs, stages, table)
    return {r["rank"]: r for r in table}


def _nsys_table(tmp_path):
    db = tmp_path / "t.sqlite"
    with packed(FIX / "gpu_ranks_nccl_nsys" / "timeline.sqlite.gz") as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    _, _, _, table, comm = split_stages(load_processes(db), [], 1)
    return {r["rank"]: r for r in table}, comm


def _per_step(row, part):
    i = row["idle"]
    return i["parts_ns"][part] / i["occurrences"]


@pytest.mark.parametrize("mode", ["event", "nsys"])
def test_the_sleeping_rank_idles_for_host_work_the_waiting_one_is_busy(mode, tmp_path):
    rows = _event_table() if mode == "event" else _nsys_table(tmp_path)[0]
    one, zero = rows[1]["idle"], rows[0]["idle"]
    assert one["occurrences"] == zero["occurrences"] == 11  # the kept steps (12, one warm-up)
    assert 0.9 * SLEEP_NS < _per_step(rows[1], "host") < 1.05 * SLEEP_NS  # the sleep, as host work
    assert one["idle_ns"] > 0.9 * one["window_ns"]  # rank 1's GPU idles through its steps
    assert zero["busy_ns"] > 0.99 * zero["window_ns"]  # rank 0 is inside its all_reduce kernel
    assert _per_step(rows[0], "host") < 0.1 * MS
    for r in rows.values():  # the parts add up to the idle time, within the window
        assert sum(r["idle"]["parts_ns"].values()) == pytest.approx(r["idle"]["idle_ns"], rel=1e-6)
        assert r["idle"]["busy_ns"] + r["idle"]["idle_ns"] == pytest.approx(r["idle"]["window_ns"], rel=1e-6)


def test_both_modes_agree_on_the_sleep(tmp_path):
    ev, (ns, _) = _event_table(), _nsys_table(tmp_path)
    assert _per_step(ev[1], "host") == pytest.approx(_per_step(ns[1], "host"), rel=0.05)


def test_report_md_has_a_row_per_rank(tmp_path):
    rows, comm = _nsys_table(tmp_path)
    text = "\n".join(rank_section(list(rows.values()), comm))
    assert "GPU idle time by what its host was doing" in text
    idle = text[text.index("| Rank | Window / occurrence (ms)") :].splitlines()
    assert len([x for x in idle if x.startswith("| ") and x[2].isdigit()]) == 2
    assert "| 1 | 41.1 | 3.7 | 39.6 |" in text  # rank 1: 39.6 ms of its 41.1 ms step idle
    no_idle = [{k: v for k, v in r.items() if k != "idle"} for r in rows.values()]
    assert "GPU idle time by" not in "\n".join(rank_section(no_idle, comm))

"""A command's stages are its own ranges, not the NVTX ranges a library pushes inside them (issue 36:
the nsys stages table of a loop with a boolean-mask index listed cub::DeviceSelect::Flagged and
cub::DeviceReduce::Sum instead of its kprof.range("step")). Recorded on an H100:
tests/calibration/recorded-replay/shape_sync/bad.sqlite.xz (torch 2.11, CCCL's NVTX domain)."""

import shutil
from pathlib import Path

import pandas as pd
from conftest import packed

from kprof_mcp.analysis.command import range_stages, selected
from kprof_mcp.parsers import nsys
from kprof_mcp.parsers.kineto import KERNEL_COLUMNS, Trace

REC = Path(__file__).resolve().parents[1] / "calibration" / "recorded-replay" / "shape_sync"


def test_library_ranges_are_never_stages():
    for name in ("cub::DeviceSelect::Flagged", "cub::DeviceReduce::Sum", "thrust::sort"):
        assert not selected(name, [])
    assert selected("step", []) and selected("cub::DeviceReduce::Sum", ["cub::*"])  # asked for by name


def test_the_users_range_around_a_cub_range_is_the_stage():
    ranges = pd.DataFrame(
        [
            {"name": "step", "start": 0.0, "dur": 100.0, "end": 100.0, "tid": 1},
            {"name": "cub::DeviceSelect::Flagged", "start": 10.0, "dur": 20.0, "end": 30.0, "tid": 1},
        ]
    )
    api = pd.DataFrame(
        [
            {"name": "cudaLaunchKernel", "start": 5.0, "dur": 2.0, "end": 7.0, "correlation": 1, "tid": 1},
            {"name": "cudaLaunchKernel", "start": 12.0, "dur": 2.0, "end": 14.0, "correlation": 2, "tid": 1},
        ]
    )
    k = pd.DataFrame(columns=KERNEL_COLUMNS)
    k = pd.concat(
        [
            k,
            pd.DataFrame(
                [
                    {"name": "gemm", "start": 8.0, "dur": 3.0, "end": 11.0, "stream": 7, "correlation": 1},
                    {"name": "select", "start": 15.0, "dur": 4.0, "end": 19.0, "stream": 7, "correlation": 2},
                ]
            ),
        ]
    )
    empty = pd.DataFrame(columns=["name", "start", "dur", "end", "kind", "stream", "bytes", "correlation"])
    tr = Trace(
        k, empty, api, ranges, pd.DataFrame(columns=["name", "start", "dur", "end", "tid"]), 132, "H100"
    )
    stages, _ = range_stages(tr, [], True, warmup=0)
    assert [s.name for s in stages] == ["step"]
    assert stages[0].samples_ns == [7.0]  # both kernels, the one inside cub's range too


def test_the_recorded_shape_sync_loop_has_its_step_as_stage(tmp_path):
    db = tmp_path / "bad.sqlite"
    with packed(REC / "bad.sqlite.gz") as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    tr = nsys.load_sqlite(db)
    assert {"cub::DeviceSelect::Flagged", "cub::DeviceReduce::Sum"} <= set(tr.ranges["name"])
    stages, notes = range_stages(tr, [], True, warmup=1)
    assert [s.name for s in stages] == ["step"]
    assert stages[0].occurrences == 22  # 3 warm-up + 20 steps in the range, the first left out
    assert any("DeviceSelect" in k for k in stages[0].kernels)  # cub's kernels count in the step
    assert not any("contain other selected ranges" in n for n in notes)

"""A Nsight Systems report of several processes (the ranks of a multi-GPU job, recorded on 2 x H100 by the
held-back multi-rank set) numbers each process's CUDA calls from 1: joined on the raw correlation id, rank 1's
kernels were given to rank 0's calls (5,875 of 24,440 calls shared an id in the second set's loss-sync pair), and
the replay bound each rank's GPU work to the other rank's host. The parser makes the ids unique per process."""

import shutil
from pathlib import Path

from conftest import packed

from kprof_mcp.parsers import nsys

PAIR = (
    Path(__file__).resolve().parents[1]
    / "calibration"
    / "recorded-heldout-ranks"
    / "length_sorted_batch_split_into_contiguous_halves"
)


def test_every_gpu_operation_joins_a_call_of_its_own_process(tmp_path):
    db = tmp_path / "bad.sqlite"
    with packed(PAIR / "bad.sqlite.gz") as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    tr = nsys.load_sqlite(db)
    api = tr.api
    pid = {int(t): nsys.process_id(int(t)) for t in api["tid"].unique()}
    assert len(set(pid.values())) >= 2  # the launcher and the two ranks in one report
    assert not api["correlation"].duplicated().any()  # one call per id
    by_corr = dict(zip(api["correlation"].astype("int64"), api["tid"].map(lambda t: pid[int(t)])))
    place = {p: k for k, p in enumerate(sorted(set(pid.values())), 1)}
    joined = 0
    for corr in tr.kernels["correlation"].dropna().astype("int64"):
        if corr in by_corr:
            assert place[by_corr[corr]] == nsys.process_of(corr)  # the kernel's own process issued the call
            joined += 1
    assert joined >= 0.99 * len(tr.kernels)


def test_one_process_keeps_its_own_ids():
    rows = [{"pid": 7, "correlation": 5}]
    nsys._correlation_per_process(rows, [{"pid": 7, "correlation": 5}])
    assert rows[0]["correlation"] == 5
    a, b = [{"pid": 7, "correlation": 5}], [{"pid": 8, "correlation": 5}]
    nsys._correlation_per_process(a, b)
    assert a[0]["correlation"] == (1 << 32) | 5 and b[0]["correlation"] == (2 << 32) | 5
    assert (
        nsys.process_of(b[0]["correlation"]) == 2 and nsys.process_of(5) == 0 and nsys.process_of(None) == 0
    )

"""Timelines by replay (kprof_mcp.analysis.replay, issue 36): the recorded run re-timed as a
dependency graph, with each idle cause removed. On the command pairs recorded with Nsight Systems
on an H100 (tests/calibration/recorded-accounting/*/ and recorded-replay/*/, {bad,good}.sqlite.xz,
measured.json: the fix's gain measured without a profiler) and on hand-built traces whose replay
is known exactly.

The table (per pair: measured gain, the old idle-share estimate, the replay's, and the gain the two
recorded traces show) is printed by ``pytest -s tests/unit/test_replay.py -k table``."""

import json
import lzma
import shutil
import statistics
from pathlib import Path

import pandas as pd
import pytest
from conftest import packed

from kprof_mcp.analysis import idle, replay
from kprof_mcp.analysis.command import range_stages
from kprof_mcp.analysis.diagnosis.timeline import idle_opportunities
from kprof_mcp.analysis.timeline import cut
from kprof_mcp.parsers import nsys
from kprof_mcp.parsers.kineto import KERNEL_COLUMNS, Trace
from kprof_mcp.render.diagnosis import words

CAL = Path(__file__).resolve().parents[1] / "calibration"
# (folder, pair directory, measured.json name, the planted cause)
PAIRS = [
    ("recorded-accounting", "sync_per_step", "sync per step", "sync"),
    ("recorded-accounting", "host_bound_loop", "host-bound loop", "host"),
    ("recorded-accounting", "launch_bound_loop", "launch-bound loop", "launch"),
    ("recorded-accounting", "unfused_chain", "unfused chain", "fusion"),
    ("recorded-replay", "shape_sync", "shape sync", "sync"),
    ("recorded-replay", "shape_sync__launch_bound", "shape sync, launch-bound", "launch"),
    ("recorded-replay", "alloc_per_step", "alloc per step", "cuda_api"),
    ("recorded-replay", "pageable_copy", "pageable copy", "copy"),
    ("recorded-heldout", "per_item_matmuls", "per-item matmuls", "launch"),
    ("recorded-heldout", "host_snapshot_per_step", "host snapshot per step", "copy"),
    ("recorded-heldout2", "copy_and_compute_on_one_stream", "copy and compute on one stream", "copy"),
    ("recorded-replay", "autograd_anomaly_detection_left_on", "autograd anomaly detection left on", "host"),
]
IDS = [p[1] for p in PAIRS]
_CACHE: dict = {}


def _load(folder: str, pair: str, role: str, tmp: Path):
    """The recorded trace, its stages' window (the same the idle breakdown uses) and occurrences."""
    key = (folder, pair, role)
    if key not in _CACHE:
        db = tmp / f"{pair}_{role}.sqlite"
        with packed(CAL / folder / pair / f"{role}.sqlite.gz") as src, open(db, "wb") as dst:
            shutil.copyfileobj(src, dst)
        tr = nsys.load_sqlite(db)
        stages, _ = range_stages(tr, [], True, 1)
        lo, hi = min(s.span[0] for s in stages), max(s.span[1] for s in stages)
        _CACHE[key] = (tr, lo, hi, max(s.occurrences for s in stages))
    return _CACHE[key]


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return tmp_path_factory.mktemp("replay")


@pytest.mark.parametrize("role", ["bad", "good"])
@pytest.mark.parametrize("folder,pair,_name,_cause", PAIRS, ids=IDS)
def test_replaying_the_recorded_graph_unchanged_gives_back_the_recorded_step(
    folder, pair, _name, _cause, role, tmp
):
    tr, lo, hi, occ = _load(folder, pair, role, tmp)
    g = replay.build(tr, lo, hi, occ)
    assert len(g.calls) >= 20 and len(g.ops) >= occ
    r = replay.replay(g)
    assert r.step_ns == pytest.approx(g.recorded_span_ns() / occ, rel=0.05)
    # Every GPU operation starts where it was recorded (its bound offsets are read from the recording).
    assert max(abs(e - o.end) for e, o in zip(r.op_end, g.ops)) < 1.0


@pytest.mark.parametrize("folder,pair,_name,_cause", PAIRS, ids=IDS)
def test_removing_a_cause_never_makes_the_step_slower(folder, pair, _name, _cause, tmp):
    tr, lo, hi, occ = _load(folder, pair, "bad", tmp)
    g = replay.build(tr, lo, hi, occ)
    base = replay.replay(g).step_ns
    for cause, t in replay.TRANSFORMS.items():
        assert replay.replay(g, t).step_ns <= base * (1 + 1e-9), cause
    # Nor does removing every cause at once make it slower than removing one.
    allof = replay.replay(g, lambda x: _compose(x, *replay.TRANSFORMS.values())).step_ns
    assert allof <= min(replay.replay(g, t).step_ns for t in replay.TRANSFORMS.values()) * (1 + 1e-9)


def _state(g) -> tuple:
    """Every field of every call and op, and the graph's own (what a transform may change)."""
    return (
        [tuple(sorted((k, repr(v)) for k, v in vars(c).items())) for c in g.calls],
        [tuple(sorted((k, repr(v)) for k, v in vars(o).items())) for o in g.ops],
        repr(sorted(g.tails.items(), key=repr)),
        g.kernel_busy_ns,
        list(g.cuts),
    )


@pytest.mark.parametrize("folder,pair,_name,_cause", PAIRS, ids=IDS)
def test_every_what_if_leaves_the_graph_it_was_given_as_recorded(folder, pair, _name, _cause, tmp):
    """The transforms copy on write (graph._copy, graph.own): the graph every what-if starts from is shared,
    and each what-if's step is the one it gives on a deep copy of its own."""
    import copy

    from kprof_mcp.analysis.replay.transforms import free_gpu, host_with_uploads

    tr, lo, hi, occ = _load(folder, pair, "bad", tmp)
    g = replay.build(tr, lo, hi, occ)
    before = _state(g)
    for t in [*replay.TRANSFORMS.values(), host_with_uploads, free_gpu]:
        shared = replay.replay(g, t).step_ns
        assert _state(g) == before, t.__name__
        assert shared == replay.replay(copy.deepcopy(g), t).step_ns, t.__name__


def _compose(g, *ts):
    for t in ts:
        g = t(g)
    return g


@pytest.mark.parametrize(
    "pair,cause",
    [
        ("sync_per_step", "sync"),
        ("host_bound_loop", "host"),
        ("launch_bound_loop", "launch"),
        ("pageable_copy", "copy"),
    ],
)
def test_the_planted_cause_is_the_replays_largest_where_its_fix_was_measured_to_pay(pair, cause, tmp):
    folder = next(p[0] for p in PAIRS if p[1] == pair)
    tr, lo, hi, occ = _load(folder, pair, "bad", tmp)
    gains = replay.gains(tr, lo, hi, occ)
    causes = {c: ns for c, ns in gains["step_ns"].items() if c in replay.TRANSFORMS}  # host_sync: no cause
    best = min(causes, key=causes.get)
    assert best == cause
    assert gains["recorded_ns"] / gains["step_ns"][cause] - 1 > 0.3


def test_a_pageable_copy_is_replayed_at_the_pinned_rate_of_the_trace_or_the_link(tmp):
    tr, lo, hi, occ = _load("recorded-replay", "pageable_copy", "good", tmp)
    g = replay.build(tr, lo, hi, occ)
    assert g.pinned_source.startswith("the trace's")
    assert 30e9 < g.pinned_h2d_bytes_per_s < 64e9  # 32 MiB pinned copies on an H100's PCIe Gen5 x16
    tr, lo, hi, occ = _load("recorded-replay", "pageable_copy", "bad", tmp)
    g = replay.build(tr, lo, hi, occ)
    assert g.pinned_source == "the PCIe link's payload rate"
    assert g.pinned_h2d_bytes_per_s == pytest.approx(replay.pcie_bytes_per_s("NVIDIA H100 80GB HBM3"))
    pinned = replay.pin_copies(g)
    pageable = [j for j, o in enumerate(g.ops) if "Pageable" in o.name]
    assert pageable and all(pinned.ops[j].dur < g.ops[j].dur / 5 for j in pageable)


def test_table_measured_old_and_replayed_gains(tmp):
    """Prints the table; asserts only that every row was computed."""
    rows = []
    for folder, pair, name, cause in PAIRS:
        meas = json.loads((CAL / folder / "measured.json").read_text())["pairs"][name]
        tr, lo, hi, occ = _load(folder, pair, "bad", tmp)
        gains = replay.gains(tr, lo, hi, occ)
        ib = idle.breakdown(cut(tr, lo, hi), lo, hi, occ).to_dict()
        old = {o.cause: o.est_gain_pct for o in idle_opportunities(ib)}
        new = {o.cause: o.est_gain_pct for o in idle_opportunities({**ib, "replay": gains})}
        good = replay.build(*_load(folder, pair, "good", tmp))
        good_trace = good.recorded_span_ns() / good.occurrences
        steps = meas["step_ns"]
        rows.append(
            (
                name,
                cause,
                meas["measured_gain_pct"],
                100 * (gains["recorded_ns"] / good_trace - 1),
                max(old, key=old.get) if old else "-",
                old.get(cause, 0.0),
                max(new, key=new.get) if new else "-",
                new.get(cause, 0.0),
                gains["recorded_ns"] / statistics.median(steps["bad"]),
            )
        )
    print()
    print(
        f"{'pair':26s} {'cause':8s} {'measured':>9s} {'traces':>8s} | {'old top':8s} {'old est':>8s} "
        f"| {'new top':8s} {'replay':>8s} | profiled/unprofiled step"
    )
    for r in rows:
        print(
            f"{r[0]:26s} {r[1]:8s} {r[2]:8.1f}% {r[3]:7.1f}% | {r[4]:8s} {r[5]:7.1f}% | {r[6]:8s} {r[7]:7.1f}% | {r[8]:.2f}"
        )
    assert len(rows) == len(PAIRS)


# --------------------------------------------------------------------------- hand-built traces


def _trace(
    api: list[tuple], kernels: list[tuple], memops: list[tuple] = (), ranges: list[tuple] = ()
) -> Trace:
    """api: (name, start, end, correlation); kernels: (name, start, end, stream, correlation[, {column:
    value}]); memops: (name, start, end, stream, correlation, bytes); ranges: (name, start, end)."""
    a = pd.DataFrame(
        [{"name": n, "start": s, "dur": e - s, "end": e, "correlation": c, "tid": 1} for n, s, e, c in api]
    )
    k = pd.DataFrame(
        [
            {
                **{c: None for c in KERNEL_COLUMNS},
                "name": n,
                "start": s,
                "dur": e - s,
                "end": e,
                "stream": st,
                "correlation": c,
                **(more[0] if more else {}),
            }
            for n, s, e, st, c, *more in kernels
        ],
        columns=KERNEL_COLUMNS,
    )
    m = pd.DataFrame(
        [
            {
                "name": n,
                "start": s,
                "dur": e - s,
                "end": e,
                "kind": "memcpy",
                "stream": st,
                "correlation": c,
                "bytes": b,
            }
            for n, s, e, st, c, b in memops
        ],
        columns=["name", "start", "dur", "end", "kind", "stream", "bytes", "correlation"],
    )
    empty = pd.DataFrame(columns=["name", "start", "dur", "end", "tid"])
    r = pd.DataFrame([{"name": n, "start": s, "dur": e - s, "end": e, "tid": 1} for n, s, e in ranges])
    return Trace(k, m, a, r if ranges else empty, empty, 132, "NVIDIA H100 80GB HBM3")


U = 1000.0  # hand-built traces in microseconds: host stretches of 100 us or more are host work


def _sync_loop(steps: int = 3) -> Trace:
    """Each step (1000 us): a launch (0-10), its kernel (15-415), a synchronise that waits for it
    (15-420, returning 5 us after it), then 580 us of host work: 1000."""
    api, kernels = [], []
    for i in range(steps):
        t = 1000.0 * i
        api += [
            ("cudaLaunchKernel", t * U, (t + 10) * U, i),
            ("cudaStreamSynchronize", (t + 15) * U, (t + 420) * U, None),
        ]
        kernels.append(("k", (t + 15) * U, (t + 415) * U, 7, i))
    return _trace(api, kernels)


def test_a_sync_per_step_dropped_lets_the_host_work_overlap_the_kernels():
    g = replay.build(_sync_loop(), 0.0, 3000 * U, 3)
    assert replay.replay(g).step_ns == pytest.approx(1000 * U)
    assert [len(c.covers) for c in g.calls if c.kind == "sync"] == [1, 1, 1]
    assert g.calls[1].ret == pytest.approx(5 * U)  # returned 5 us after its kernel ended
    # Without the first two syncs the host issues every 10 + 5 + 5 + 580 = 600 us and the kernels
    # (400 us) keep up; the last sync waits for the last kernel (1215-1615), then 5 + 580 us.
    r = replay.replay(g, replay.drop_syncs)
    assert r.span_ns == pytest.approx((1615 + 5 + 580) * U)
    # The host work follows a read of the GPU's value: it is the sync's, host_ahead leaves it.
    assert replay.replay(g, replay.host_ahead).step_ns == pytest.approx(1000 * U)
    assert replay.replay(g, replay.reuse_allocations).step_ns == pytest.approx(1000 * U)
    assert replay.replay(g, replay.pin_copies).step_ns == pytest.approx(1000 * U)


def test_host_work_before_a_launch_leaves_the_critical_path():
    # No sync: 580 us of host work, a launch (420-430), its kernel (435-835), every 1000 us.
    api = [("cudaLaunchKernel", (1000.0 * i + 420) * U, (1000.0 * i + 430) * U, i) for i in range(3)]
    kernels = [("k", (1000.0 * i + 435) * U, (1000.0 * i + 835) * U, 7, i) for i in range(3)]
    g = replay.build(_trace(api, kernels), 0.0, 3000 * U, 3)
    assert replay.replay(g).span_ns == pytest.approx(3000 * U)
    # The launches go back to back (10 us each); the kernels, 15 us after their call, then bound it.
    r = replay.replay(g, replay.host_ahead)
    assert r.span_ns == pytest.approx((15 + 3 * 400) * U)


def test_the_host_fix_takes_the_upload_of_what_the_host_built_along_where_its_own_work_is_the_larger():
    """Each step: 5 ms of host work (data built on the CPU), a 2 ms pageable upload of it that the host
    waits for, then a 1 ms kernel. The host's fix (the data built on the GPU, or by workers with pinned
    memory) removes both: the host alone leaves the upload (~3 ms a step), with it ~1 ms. The copies alone
    gain less than the host alone, so the host's gain takes both; where the copy is the larger (40 ms),
    the host keeps its own and the copy cause owns the upload."""

    def steps(copy_ms: float):
        api, memops, kernels, t = [], [], [], 0.0
        for i in range(3):
            t += 5_000
            api.append(("cudaMemcpyAsync", t * U, (t + copy_ms * 1000) * U, 2 * i))
            memops.append(
                (
                    "Memcpy HtoD (Pageable -> Device)",
                    (t + 10) * U,
                    (t + copy_ms * 1000 - 10) * U,
                    7,
                    2 * i,
                    64e6,
                )
            )
            t += copy_ms * 1000
            api.append(("cudaLaunchKernel", (t + 5) * U, (t + 15) * U, 2 * i + 1))
            kernels.append(("k", (t + 20) * U, (t + 1020) * U, 7, 2 * i + 1))
            t += 1020
        tr = _trace(api, kernels, memops)
        return replay.gains(tr, 0.0, t * U, 3)

    small = steps(2.0)
    assert small["step_ns"]["host"] < 1.6e6  # the host's work and the upload both gone
    assert small["step_ns"]["copy"] > 5e6  # the upload alone: the host's work stays
    big = steps(40.0)
    assert big["step_ns"]["copy"] < big["step_ns"]["host"]  # the copy owns the larger part
    assert big["step_ns"]["host"] > 40e6  # the host keeps its own gain: the upload stays


def test_the_recorded_host_drawn_noise_loses_its_upload_with_the_host_work(tmp):
    """The eleventh held-back set's host_randn.py (judged once before this change: +355 % for +1,020 %):
    3.1M normal values drawn on the CPU every step, then a 12.6 MB pageable upload. The host's fix (drawn
    on the GPU) removes both; the replay of the host alone left the ~1.6 ms uploads in the step."""
    folder, pair = "recorded-heldout11", "random_numbers_drawn_on_the_CPU_and_copied_every_step"
    tr, lo, hi, occ = _load(folder, pair, "bad", tmp)
    g = replay.build(tr, lo, hi, occ)
    alone = replay.replay(g, replay.host_ahead).step_ns
    both = replay.gains(tr, lo, hi, occ)
    uploads = [o for o in g.ops if o.kind == "memcpy" and o.nbytes > 10e6]
    assert len(uploads) >= occ
    assert both["step_ns"]["host"] < alone - 0.8 * sum(o.dur for o in uploads) / occ
    assert both["recorded_ns"] / both["step_ns"]["host"] > 5.0  # measured without a profiler: 11.2x


def test_a_pageable_copy_becomes_a_prefetch_at_the_link_rate():
    # 64 MB from pageable memory: a 10 ms host-blocking copy (6.4 GB/s), the synchronise PyTorch
    # adds after it, then a 5 ms kernel.
    mb = 64e6
    api = [
        ("cudaMemcpyAsync", 0.0, 10_000 * U, 1),
        ("cudaStreamSynchronize", 10_050 * U, 10_060 * U, None),
        ("cudaLaunchKernel", 10_100 * U, 10_110 * U, 2),
    ]
    memops = [("Memcpy HtoD (Pageable -> Device)", 100 * U, 9_990 * U, 7, 1, mb)]
    kernels = [("k", 10_120 * U, 15_120 * U, 7, 2)]
    g = replay.build(_trace(api, kernels, memops), 0.0, 15_120 * U, 1)
    assert replay.replay(g).span_ns == pytest.approx(15_120 * U)
    bw = replay.pcie_bytes_per_s("NVIDIA H100 80GB HBM3")
    assert 55e9 < bw < 58e9  # Gen5 x16 payload rate
    r = replay.replay(g, replay.pin_copies)
    # The copy (mb / bw on a copy engine, from 100 us) no longer gates the kernel, the sync after
    # it goes too, its call costs the launch floor (10 us): host 10 + 50 + 10 + 40 + 10, the kernel
    # 20 us after its call.
    copy_end = 100 * U + mb / bw * 1e9
    assert r.op_end[0] == pytest.approx(copy_end)
    assert r.span_ns == pytest.approx(max(copy_end, (110 + 20 + 5000) * U))


def test_graph_launches_cost_one_launch_and_kernels_run_back_to_back_at_the_gpu_floor():
    # 10 launches of 30 ns each 20 ns apart (dispatcher time), kernels of 5 ns: launch-bound.
    api = [("cudaLaunchKernel", 50.0 * i, 50.0 * i + 30 + (10 if i == 0 else 0), i) for i in range(10)]
    kernels = [("k", 50.0 * i + 35, 50.0 * i + 40, 7, i) for i in range(10)]
    g = replay.build(_trace(api, kernels), 0.0, 500.0, 1)
    assert g.launch_floor_ns == 30.0
    g.gpu_floor_ns = 8.0
    r = replay.replay(g, replay.graph_launches)
    # A graph: no per-kernel host calls; the kernels back to back from the first one's issue offset (35 ns),
    # each held to the GPU's floor of 8 ns; the one graph launch (30 ns) at the host's end.
    assert r.op_end[-1] == pytest.approx(35 + 10 * 8)
    assert r.span_ns == pytest.approx(35 + 10 * 8) and r.span_ns < replay.replay(g).span_ns


def test_allocations_reused_remove_their_calls_and_the_device_wide_wait_of_cudaFree():
    api = [
        ("cudaMalloc", 0.0, 100.0, None),
        ("cudaLaunchKernel", 110.0, 120.0, 1),
        ("cudaFree", 130.0, 600.0, None),  # waits for the kernel (125-580), then 20 ns
    ]
    kernels = [("k", 125.0, 580.0, 7, 1)]
    g = replay.build(_trace(api, kernels), 0.0, 600.0, 1)
    assert g.calls[2].covers == [0] and g.calls[2].ret == pytest.approx(20.0)
    r = replay.replay(g, replay.reuse_allocations)
    assert r.span_ns == pytest.approx(10 + 10 + 5 + 455)  # the kernel, issued without the malloc first


def test_the_diagnosis_takes_the_replays_gain_and_falls_back_on_the_idle_share():
    g = replay.gains(_sync_loop(), 0.0, 3000 * U, 3)
    ib = idle.breakdown(_sync_loop(), 0.0, 3000 * U, 3).to_dict()
    old = {o.cause: o for o in idle_opportunities(ib)}
    new = {o.cause: o for o in idle_opportunities({**ib, "replay": g})}
    assert "sync" in new and set(new) <= set(old)  # which causes: the breakdown's
    want = 1.0 - g["step_ns"]["sync"] / g["recorded_ns"]
    assert new["sync"].share == pytest.approx(want)
    assert new["sync"].est_gain_pct == pytest.approx(100 * (g["recorded_ns"] / g["step_ns"]["sync"] - 1))


def test_kernels_that_shared_the_gpu_are_never_packed_tighter_than_they_ran():
    # Two streams' kernels of 100 us each, recorded half overlapped (their union 150 us: each was
    # slowed by the other); launches 40 us apart. A CUDA graph would launch them together, but
    # their recorded durations hold the contention: the span stays at least their union.
    api = [("cudaLaunchKernel", 0.0, 30 * U, 1), ("cudaLaunchKernel", 40 * U, 45 * U, 2)]
    kernels = [("a", 5 * U, 105 * U, 7, 1), ("b", 55 * U, 155 * U, 13, 2)]
    g = replay.build(_trace(api, kernels), 0.0, 155 * U, 1)
    assert g.kernel_busy_ns == pytest.approx(150 * U)
    assert replay.replay(g, replay.graph_launches).span_ns == pytest.approx(150 * U)


# --------------------------------------------------------------------------- batching a launch loop


def _loop(n: int = 10, grid: int = 33, kernel_us: float = 8.0, names=("k",), ranges=()) -> Trace:
    """``n`` launches 20 us apart (5 us each, then 15 us of Python), each kernel ``kernel_us`` from
    6 us after its call on ``grid`` blocks (no registers or shared memory known: one block per SM), then a
    synchronise at n x 20 us that returns 10 us later."""
    api = [("cudaLaunchKernel", 20.0 * i * U, (20.0 * i + 5) * U, i) for i in range(n)]
    api.append(("cudaStreamSynchronize", 20.0 * n * U, (20.0 * n + 10) * U, None))
    kernels = [
        (
            names[i % len(names)],
            (20.0 * i + 6) * U,
            (20.0 * i + 6 + kernel_us) * U,
            7,
            i,
            {"grid_blocks": grid},
        )
        for i in range(n)
    ]
    return _trace(api, kernels, ranges=ranges)


def test_a_run_of_partial_launches_is_replayed_as_one_launch_at_full_fill_without_the_loops_host_time():
    g = replay.build(_loop(), 0.0, 210 * U, 1)
    assert replay.replay(g).span_ns == pytest.approx(210 * U)
    (run,) = replay.runs(g)
    assert run.launches == list(range(10)) and g.ops[0].fill == pytest.approx(33 / 132)
    b = replay.batch_launches(g)
    # One kernel of 10 x 8 us x 33/132 = 20 us from 6 us; the other nine calls and the 15 us of Python
    # between the launches cost nothing; the synchronise starts 15 us after the first launch's end, waits
    # for the batched kernel (26 us) and returns 10 us later.
    assert b.ops[0].dur == pytest.approx(20 * U) and all(o.dur == 0 for o in b.ops[1:])
    assert b.kernel_busy_ns == pytest.approx(20 * U)
    assert replay.replay(b).span_ns == pytest.approx((26 + 10) * U)
    gains = replay.gains(_loop(), 0.0, 210 * U, 1)
    assert gains["batch"]["launches_per_run"] == 10 and gains["batch"]["host_gap_ns"] == pytest.approx(15 * U)
    assert gains["step_ns"]["batch"] == pytest.approx(36 * U)


def test_the_batched_kernel_is_never_shorter_than_its_longest_item():
    # Two blocks of 132 SMs: 10 x 8 us x 2/132 = 1.2 us of work at full fill, but an item takes 8 us.
    b = replay.batch_launches(replay.build(_loop(grid=2), 0.0, 210 * U, 1))
    assert b.ops[0].dur == pytest.approx(8 * U)


@pytest.mark.parametrize(
    "trace,why",
    [
        (_loop(n=7), "fewer than eight launches"),
        (_loop(names=("k", "k2")), "two kernels taking turns (an eager chain of different ops)"),
        (_loop(grid=264), "each launch fills the GPU and lasts longer than an empty kernel"),
        (_loop(n=12, ranges=[("step", 0.0, 120 * U), ("step", 120 * U, 250 * U)]), "a step starts mid-run"),
    ],
    ids=["short", "alternating", "full", "steps"],
)
def test_no_run_where_the_launches_are_not_a_loop_over_items(trace, why):
    hi = float(trace.api["end"].max())
    g = replay.build(trace, 0.0, hi, 2 if len(trace.ranges) else 1)
    assert replay.runs(g) == [], why
    assert "batch" not in replay.gains(trace, 0.0, hi, 2 if len(trace.ranges) else 1)


def test_a_full_grid_that_lasts_about_an_empty_kernel_is_partial_and_runs_cut_at_steps_are_counted_apart():
    assert len(replay.runs(replay.build(_loop(grid=264, kernel_us=1.0), 0.0, 210 * U, 1))) == 1
    steps = [("step", 0.0, 160 * U), ("step", 160 * U, 330 * U)]
    g = replay.build(_loop(n=16, ranges=steps), 0.0, 330 * U, 2)
    assert [r.launches for r in replay.runs(g)] == [list(range(8)), list(range(8, 16))]


def test_per_item_matmuls_are_one_batched_launch_per_step(tmp):
    """The held-back pair: 256 cuBLAS launches per step of 8 blocks of 384 threads with 164 KB of shared
    memory (one block per SM: 8 of the 132 SMs), then torch.stack; fixed by one torch.bmm."""
    tr, lo, hi, occ = _load("recorded-heldout", "per_item_matmuls", "bad", tmp)
    g = replay.build(tr, lo, hi, occ)
    runs = replay.runs(g)
    assert len(runs) == occ and {len(r.launches) for r in runs} == {256}
    first = g.calls[runs[0].launches[0]].ops[0]
    assert g.ops[first].shape == (8, 384) and g.ops[first].fill == pytest.approx(8 / 132)
    b = replay.batch_launches(g)
    items = [g.ops[g.calls[i].ops[0]].dur for i in runs[0].launches]
    assert b.ops[first].dur == pytest.approx(max(sum(items) * 8 / 132, max(items)))
    assert all(b.calls[i].gap == b.calls[i].dur == 0 for i in runs[0].calls[1:])
    gains = replay.gains(tr, lo, hi, occ)
    run = gains["batch"]
    assert run["launches_per_run"] == 256 and run["grid_blocks"] == 8 and run["runs_per_occurrence"] == 1
    # 256 kernels of ~3.2 us become one of ~49 us and the loop's ~48 us of host time per item goes: what
    # stays is the step's host time outside the loop (stacking and freeing the 256 results, ~1 ms profiled).
    assert run["kernels_ns"] > 10 * run["batched_ns"]
    assert gains["recorded_ns"] / gains["step_ns"]["batch"] > 10
    # The diagnosis: the launch cause names the run; its estimate is the better of the two replays.
    ib = idle.breakdown(cut(tr, lo, hi), lo, hi, occ).to_dict()
    launch = {o.cause: o for o in idle_opportunities({**ib, "replay": gains})}["launch"]
    assert launch.facts.kernel.startswith("nvjet") and launch.facts.kernels == 256
    best = min(gains["step_ns"]["launch"], gains["step_ns"]["batch"])
    assert launch.est_gain_pct == pytest.approx(100 * (gains["recorded_ns"] / best - 1))
    name, trigger, _ = words(launch)
    assert "256 launches of nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT in a row as one batched kernel" in name
    assert "each filling 6.1% of the GPU" in trigger


@pytest.mark.parametrize(
    "folder,pair,role",
    [
        ("recorded-accounting", "launch_bound_loop", "bad"),  # mul and add taking turns, 100 per step
        ("recorded-replay", "shape_sync__launch_bound", "bad"),  # a launch-bound step of 39 kernels
        ("recorded-heldout", "per_item_matmuls", "good"),  # one bmm per step, filling the GPU
        ("recorded-accounting", "sync_per_step", "bad"),
    ],
    ids=["launch_bound_loop", "shape_sync__launch_bound", "per_item_matmuls_good", "sync_per_step"],
)
def test_no_run_in_recorded_loops_of_different_kernels_or_full_launches(folder, pair, role, tmp):
    tr, lo, hi, occ = _load(folder, pair, role, tmp)
    assert replay.runs(replay.build(tr, lo, hi, occ)) == []
    assert "batch" not in replay.gains(tr, lo, hi, occ)


def test_batching_leads_the_launch_advice_where_it_replays_faster_than_a_graph():
    run = {"kernel": "void k<float>(float*)", "launches_per_run": 64, "grid_blocks": 4, "fill": 4 / 132}
    idle_ = {
        "window_ns": 1000.0,
        "busy_ns": 100.0,
        "occurrences": 1,
        "parts_ns": {"launch": 800.0},
        "evidence": {"launches": 64},
        "replay": {"recorded_ns": 1000.0, "step_ns": {"launch": 500.0, "batch": 40.0}, "batch": run},
    }
    (o,) = idle_opportunities(idle_)
    assert o.cause == "launch" and o.facts.move == "batch" and o.share == pytest.approx(0.96)
    assert o.est_gain_pct == pytest.approx(2400.0)  # a replayed share is not held to 95 %
    assert words(o)[0].startswith("Cut launch overhead: launch the 64 launches of k in a row as one batched")
    slower = {**idle_, "replay": {**idle_["replay"], "step_ns": {"launch": 500.0, "batch": 600.0}}}
    (o,) = idle_opportunities(slower)
    assert o.facts.move is None and o.share == pytest.approx(0.5)
    assert words(o)[0].startswith("Cut launch overhead: capture the step as a CUDA graph")


# --------------------------------------------------------------------------- a per-step snapshot


def _snapshot(nbytes: float, copy_end: float, upload: bool = False) -> Trace:
    """A kernel (15-415 us), a device-to-host copy of ``nbytes`` into pageable memory after it (420 us to
    ``copy_end``, its call returning 20 us later), PyTorch's synchronise after it, 1000 us of host work,
    then the next launch and its kernel. ``upload``: the host's work ends in a call that queues nothing and a
    pageable host-to-device copy of 2 MiB (the host's result going back up) before that launch, 100 us later."""
    t = copy_end + 20
    up = 100 if upload else 0
    api = [
        ("cudaLaunchKernel", 0.0, 10 * U, 1),
        ("cudaMemcpyAsync", 20 * U, t * U, 2),
        ("cudaStreamSynchronize", (t + 5) * U, (t + 10) * U, None),
        ("cudaLaunchKernel", (t + 1010 + up) * U, (t + 1020 + up) * U, 3),
    ]
    kernels = [("k", 15 * U, 415 * U, 7, 1), ("k", (t + 1025 + up) * U, (t + 1425 + up) * U, 7, 3)]
    memops = [("Memcpy DtoH (Device -> Pageable)", 420 * U, copy_end * U, 7, 2, nbytes)]
    if upload:
        api[3:3] = [
            ("cudaStreamIsCapturing", (t + 1010) * U, (t + 1011) * U, None),  # queues nothing: passed over
            ("cudaMemcpyAsync", (t + 1012) * U, (t + 1100) * U, 4),
        ]
        memops.append(("Memcpy HtoD (Pageable -> Device)", (t + 1020) * U, (t + 1095) * U, 7, 4, 2 * 2**20))
    return _trace(api, kernels, memops)


def test_a_snapshot_kept_on_the_gpu_takes_the_host_work_that_consumes_it_along():
    tr = _snapshot(32 * 2**20, 10_400)
    g = replay.build(tr, 0.0, 11_845 * U, 1)
    assert replay.replay(g).span_ns == pytest.approx(11_845 * U)
    r = replay.replay(g, replay.pin_copies)
    # The copy's call costs the launch floor (10 us), the synchronise returns at once (5 us), the 1000 us
    # after it go: the next launch at 35 us, its kernel after the first one's end (415 + 5 us): 425-825.
    assert r.span_ns == pytest.approx(825 * U)


@pytest.mark.parametrize(
    "copy_end,named", [(10_400, "copy"), (620, "host")], ids=["long_download", "short_download"]
)
def test_host_work_between_a_download_and_an_upload_is_a_round_trip_through_the_host(copy_end, named):
    tr, end = _snapshot(32 * 2**20, copy_end, upload=True), (copy_end + 1545) * U
    g = replay.build(tr, 0.0, end, 1)
    # The host's work from the download's return to the upload: the synchronise's 5 us and the 1000 us
    # before the call that queues nothing (the stretch pin_copies takes with the copy).
    assert replay.round_trip_host_ns(g) == pytest.approx(1005 * U)
    gains = replay.gains(tr, 0.0, end, 1)
    ib = idle.breakdown(tr, 0.0, end, 1).to_dict()
    opps = {o.cause: o for o in idle_opportunities({**ib, "replay": gains})}
    # The copies' what-if (the data kept on the GPU: both copies, their waits and the host's work between
    # them go) belongs to whichever is longer: the download (9980 us) or the host's work (1005 us against
    # a 200 us download).
    assert named in opps and ({"copy", "host"} - {named}).isdisjoint(opps)
    assert opps[named].est_gain_pct == pytest.approx(
        100 * (gains["recorded_ns"] / gains["step_ns"]["copy"] - 1)
    )
    assert (opps[named].facts.move == "round_trip") is (named == "host")


def test_a_snapshot_with_no_upload_after_it_is_no_round_trip():
    assert replay.round_trip_host_ns(replay.build(_snapshot(32 * 2**20, 10_400), 0.0, 11_845 * U, 1)) == 0.0


def test_the_round_trip_names_the_host_where_its_work_is_the_larger_part():
    rt = {
        "recorded_ns": 6000.0,
        "d2h_bulk_ns": 1000.0,
        "round_trip_host_ns": 3500.0,
        "step_ns": {"copy": 1000.0},
    }
    idle_ = {
        "window_ns": 6000.0,
        "busy_ns": 1000.0,
        "occurrences": 1,
        "parts_ns": {"sync": 4000.0, "host": 300.0},
        "evidence": {},
        "replay": {**rt, "step_ns": {**rt["step_ns"], "sync": 4500.0, "host": 5800.0}},
    }
    opps = {o.cause: o for o in idle_opportunities(idle_)}
    assert "copy" not in opps
    host = opps["host"]
    assert host.facts.move == "round_trip" and host.est_gain_pct == pytest.approx(500.0)
    assert host.facts.value == 3500.0 and host.facts.copy_ns == 1000.0
    name, trigger, _ = words(host)
    assert name.startswith("Run the host's work between the device-to-host copy and the upload on the GPU")
    assert "host_work_between_copies_per_step=3.50 us, d2h_copy_time_per_step=1.00 us" in trigger
    # The host work shorter than the download: a snapshot, the copy's advice as before.
    snap = {**idle_, "replay": {**idle_["replay"], "round_trip_host_ns": 800.0}}
    opps = {o.cause: o for o in idle_opportunities(snap)}
    assert opps["copy"].facts.value == 1000.0
    assert "host" not in opps or opps["host"].facts.move is None
    # The host's own opportunity larger (host work elsewhere in the step too): both stay as they were.
    steps = {**idle_["replay"]["step_ns"], "host": 500.0}
    opps = {
        o.cause: o for o in idle_opportunities({**idle_, "replay": {**idle_["replay"], "step_ns": steps}})
    }
    assert opps["copy"].facts.value == 1000.0 and opps["host"].facts.move is None
    assert opps["host"].est_gain_pct == pytest.approx(1100.0)


def test_the_recorded_cpu_head_is_a_round_trip_through_the_host(tmp):
    """cpu_head.py (the seventeenth held-back set): a model head left on the CPU; each step the features
    (8 MiB) go down, the head's matmuls run on the host (~3.2 ms), the logits (2 MiB) come back up."""
    folder, pair = "recorded-heldout17", "a_model_head_left_on_the_CPU_after_the_model_was_moved_to_the_GPU"
    db = tmp / "cpu_head.sqlite"
    with lzma.open(CAL / folder / pair / "bad.sqlite.xz", "rb") as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    tr = nsys.load_sqlite(db)
    stages, _ = range_stages(tr, [], True, 1)
    lo, hi, occ = (
        min(s.span[0] for s in stages),
        max(s.span[1] for s in stages),
        max(s.occurrences for s in stages),
    )
    gains = replay.gains(tr, lo, hi, occ)
    assert (
        2.5e6 < gains["round_trip_host_ns"] < 4.5e6 and gains["round_trip_host_ns"] > 2 * gains["d2h_bulk_ns"]
    )
    ib = idle.breakdown(cut(tr, lo, hi), lo, hi, occ).to_dict()
    opps = sorted(idle_opportunities({**ib, "replay": gains}), key=lambda o: -o.est_gain_pct)
    assert (
        opps[0].cause == "host"
        and opps[0].facts.move == "round_trip"
        and "copy" not in {o.cause for o in opps}
    )
    assert opps[0].est_gain_pct == pytest.approx(100 * (gains["recorded_ns"] / gains["step_ns"]["copy"] - 1))


def test_the_host_work_after_a_small_read_stays():
    # A 4-byte read (.item()): the value is the host's to decide with; the work after it depends on it.
    tr = _snapshot(4, 425)
    g = replay.build(tr, 0.0, 1870 * U, 1)
    assert replay.replay(g).span_ns == pytest.approx(1870 * U)
    assert replay.replay(g, replay.pin_copies).span_ns > 1860 * U


def test_the_recorded_snapshot_loses_its_copy_and_the_host_work_after_it(tmp):
    tr, lo, hi, occ = _load("recorded-heldout", "host_snapshot_per_step", "bad", tmp)
    g = replay.build(tr, lo, hi, occ)
    pinned = replay.pin_copies(g)
    copies = [i for i, c in enumerate(g.calls) if c.kind == "copy" and c.covers]
    # After each 32 MiB copy and its synchronise, ~1.5 ms of host work (the snapshot's processing) until
    # the next CUDA call: gone with the copy.
    after = [i + 2 for i in copies if i + 2 < len(g.calls)]
    assert after and min(g.calls[i].gap for i in after) > 1e6
    assert all(pinned.calls[i].gap == 0 for i in after)
    gains = replay.gains(tr, lo, hi, occ)
    assert gains["recorded_ns"] / gains["step_ns"]["copy"] > 30


def test_a_pinned_upload_on_the_compute_stream_is_replayed_on_a_side_stream_overlapping_the_compute(tmp):
    """serial_copy.py: a 64 MiB pinned, non-blocking upload each step on the stream its GEMMs run on, so
    copy and compute take turns. Prefetched a step ahead on a side stream, the step takes about the
    longer of the two instead of their sum; the fixed variant (the copy already on a side stream) gains
    nothing from the same what-if."""
    folder, pair = "recorded-heldout2", "copy_and_compute_on_one_stream"
    tr, lo, hi, occ = _load(folder, pair, "bad", tmp)
    g = replay.build(tr, lo, hi, occ)
    copies = [o for o in g.ops if o.kind == "memcpy" and o.nbytes >= 2**20]
    kernels = [o for o in g.ops if o.kind == "kernel"]
    assert copies and {o.stream for o in copies} <= {o.stream for o in kernels}
    per_step = lambda ops: sum(o.dur for o in ops) / occ  # noqa: E731
    gains = replay.gains(tr, lo, hi, occ)
    step = gains["step_ns"]["copy"]
    assert step < 0.75 * gains["recorded_ns"]
    assert step >= max(per_step(copies), per_step(kernels)) * 0.95
    tr, lo, hi, occ = _load(folder, pair, "good", tmp)
    good = replay.gains(tr, lo, hi, occ)
    assert good["step_ns"]["copy"] > 0.95 * good["recorded_ns"]


def test_per_sample_copies_are_one_transfer_per_step(tmp):
    """The sixth held-back set's pair (judged once before this what-if): 256 per-sample host-to-device copies
    per step (``torch.stack([s.to('cuda') for s in samples])``, 8 KB each, pageable, a synchronise after
    each), fixed by one copy of the stacked batch. The copy cause's replay pins them and, the run being
    eight or more copies in a row on one thread, makes them one transfer: its bytes at the pinned rate, the
    other calls and the loop's host time between them gone."""
    from kprof_mcp.analysis.replay.batch import batch_copies, copy_runs

    tr, lo, hi, occ = _load("recorded-heldout6", "per_sample_host_to_device_copies", "bad", tmp)
    g = replay.build(tr, lo, hi, occ)
    runs = copy_runs(g)
    assert len(runs) == occ and {len(r) for r in runs} == {256}
    b = batch_copies(g)
    ops = [g.calls[i].ops[0] for i in runs[0]]
    total = sum(g.ops[j].nbytes for j in ops)
    assert total == pytest.approx(256 * 1024 * 8)
    assert b.ops[ops[0]].dur == pytest.approx(
        max(total / g.pinned_h2d_bytes_per_s * 1e9, max(g.ops[j].dur for j in ops))
    )
    assert all(b.ops[j].dur == 0 for j in ops[1:])
    assert all(b.calls[i].gap == b.calls[i].dur == 0 for i in range(runs[0][0] + 1, runs[0][-1] + 1))
    gains = replay.gains(tr, lo, hi, occ)
    assert gains["recorded_ns"] / gains["step_ns"]["copy"] > 2.0  # measured: 6430 -> 2759 us a step
    good = _load("recorded-heldout6", "per_sample_host_to_device_copies", "good", tmp)
    assert copy_runs(replay.build(*good)) == []  # one copy per step: no run


def test_host_memory_registered_per_transfer_is_the_cuda_calls_cause(tmp):
    """The fourteenth held-back set's loop page-locking each batch's host array with cudaHostRegister before its
    copy and unlocking it after (the fix registers it once: +209 % on an H100): the registration calls are
    allocations of pinned memory by another name — the cuda_api what-if (allocations made once) removes them,
    a CUDA graph (the launch what-if) does not."""
    tr, lo, hi, occ = _load(
        "recorded-heldout14", "host_memory_registered_and_unregistered_for_every_transfer", "bad", tmp
    )
    g = replay.build(tr, lo, hi, occ)
    kinds = {c.kind for c in g.calls if c.name.startswith(("cudaHostRegister", "cudaHostUnregister"))}
    assert kinds == {"alloc"}
    base = replay.replay(g).step_ns
    cuda_api = base / replay.replay(g, replay.TRANSFORMS["cuda_api"]).step_ns - 1.0
    launch = base / replay.replay(g, replay.TRANSFORMS["launch"]).step_ns - 1.0
    assert cuda_api > 1.0 and launch < 0.2, (cuda_api, launch)


def test_launches_of_one_kernel_each_filling_a_few_sms_run_side_by_side_as_the_streams_cause():
    """The fifteenth held-back set's ensemble (recorded on an H100, 2026-11-27): eight launches of a recurrence
    kernel of 8 blocks a step, one after another on the default stream, ~505 us each with the GPU busy (its
    fix, each on its own stream: +579 %). Batching the run frees kernel time, not launch gaps: the streams
    cause, estimated by the batch replay (the launches side by side); the launch cause keeps its own replay
    (no idle time of its own here: not listed), and the fusion what-if, whose premise is kernels bound by the
    chip's DRAM bandwidth, says nothing of kernels on 8 of 132 SMs."""
    from kprof_mcp.models import ProfileResult
    from kprof_mcp.render.diagnosis import assess

    pair = CAL / "recorded-heldout15" / "independent_models_run_one_after_another_on_one_stream"
    r = ProfileResult.model_validate_json((pair / "bad.result.json").read_text())
    idle_ = r.timeline["idle"]
    run, rp = idle_["replay"]["batch"], idle_["replay"]
    assert run["launches_per_run"] == 8 and run["grid_blocks"] == 8
    saved = run["kernels_ns"] - run["batched_ns"]
    assert saved > 10 * idle_["parts_ns"]["launch"] / idle_["occurrences"]  # kernel time, not launch gaps
    opps = {o.cause: o for o in idle_opportunities(idle_)}
    assert "launch" not in opps
    o = opps["streams"]
    assert o.facts.move == "batch" and o.facts.kernels == 8
    assert o.share == pytest.approx(1 - rp["step_ns"]["batch"] / rp["recorded_ns"])
    measured = json.loads((pair.parent / "measured.json").read_text())["pairs"]
    gain = measured["independent models run one after another on one stream"]["measured_gain_pct"]
    assert 0.5 <= o.est_gain_pct / gain <= 2.0  # +662.6 % for +579.4 %
    name, trigger, _ = words(o)
    assert name.startswith("Run the 8 launches of _scan side by side")
    assert "8 launches of _scan in a row on one stream" in trigger
    whole = assess(r).opportunities
    assert not any(x.cause == "fusion" for x in whole)
    assert any(x.cause == "streams" and x.est_gain_pct == pytest.approx(o.est_gain_pct) for x in whole)
    # The stage's own few-blocks what-if of the same launches (grid 8 of 132 SMs, +1,292 % from the fill alone)
    # estimates the same under-filled GPU: the replay's stands, first.
    assert whole[0].cause == "streams" and not any(x.cause == "few_blocks" for x in whole)


def test_a_ranges_kernels_side_by_side_on_several_streams_count_once():
    """A command stage's sample is the GPU's busy time in the occurrence: eight kernels of 500 us run one after
    another take 4 ms; the same eight side by side on eight streams (the fifteenth held-back set's fix) take
    500 us, not the 4 ms their durations sum to (which made the fixed ensemble's step read as slow as the bad
    one's, 4128 us against 4046 us, for a step measured 6.8x faster)."""
    from kprof_mcp.analysis.command import range_stages

    def trace(side_by_side: bool) -> Trace:
        api, kernels = [], []
        for occ in range(3):
            t0 = occ * 10_000 * U
            for i in range(8):
                api.append(("cudaLaunchKernel", t0 + i * U, t0 + i * U + 0.5 * U, occ * 8 + i))
                start = t0 + 10 * U + (0 if side_by_side else i * 500 * U)
                kernels.append(("k", start, start + 500 * U, i if side_by_side else 7, occ * 8 + i))
        ranges = [("step", occ * 10_000 * U, occ * 10_000 * U + 9 * U) for occ in range(3)]
        return _trace(api, kernels, ranges=ranges)

    (serial,), _ = range_stages(trace(False), [], True, warmup=0)
    (overlapped,), _ = range_stages(trace(True), [], True, warmup=0)
    assert serial.samples_ns == pytest.approx([4000 * U] * 3)
    assert overlapped.samples_ns == pytest.approx([500 * U] * 3)
    assert "count once" in overlapped.method


def test_occurrences_ten_times_the_median_right_after_the_warm_up_are_warm_up_too():
    """The sixteenth held-back set's fixed autotuning loop: its second step (the autotuner's one sweep) took 167 ms
    against ~0.6 ms for the others; kept, the idle window's host share (80.8 % of the wall time) read as a per-step
    cause worth +412 % in the fixed version. Leading occurrences over ten times the median of the later ones are
    left out with the warm-up (at most half of them); a slow step later in the run stays (it is the run's)."""
    from kprof_mcp.analysis.command import range_stages

    def trace(durs_us: list[float]) -> Trace:
        api, kernels, ranges, t = [], [], [], 0.0
        for occ, dur in enumerate(durs_us):
            api.append(("cudaLaunchKernel", t + 1 * U, t + 1.5 * U, occ))
            kernels.append(("k", t + 2 * U, t + 3 * U, 7, occ))
            ranges.append(("step", t, t + dur * U))
            t += dur * U + 10 * U
        return _trace(api, kernels, ranges=ranges)

    steady = [600.0] * 20
    (st,), notes = range_stages(trace([2_000_000.0, 167_000.0, *steady]), [], True, warmup=1)
    assert st.warmup == 2 and len(st.samples_ns) == 20
    assert any("warm-up extended" in n and "{'step': 2}" in n for n in notes)
    (st,), notes = range_stages(trace([2_000_000.0, 5_000.0, *steady]), [], True, warmup=1)  # 8x: a step
    assert st.warmup == 1 and not any("warm-up extended" in n for n in notes)
    (st,), _ = range_stages(trace([2_000_000.0, *steady[:10], 167_000.0, *steady[:9]]), [], True, warmup=1)
    assert st.warmup == 1  # a slow step later on is the run's
    (st,), _ = range_stages(trace([2_000_000.0] * 3 + [600.0] * 3), [], True, warmup=1)
    assert st.warmup == 3  # never more than half of the occurrences


def _checked_loop(steps: int = 3) -> Trace:
    """A step of a loop whose host work reads the GPU's values between its stretches (autograd's anomaly
    mode, value checks): four forward ops, each 350 us of host work before its launch and a 50 us kernel;
    then two backward ops, each a launch, a 50 us kernel, a synchronise that reads it and 150 us of host
    work after it; 156 us of host work before the next step: 2,000 us a step, the GPU busy 300 us of it."""
    api, kernels, c = [], [], 0
    for i in range(steps):
        t = 2000.0 * i
        for _ in range(4):
            t += 350
            api.append(("cudaLaunchKernel", t * U, (t + 5) * U, c))
            kernels.append(("fwd", (t + 10) * U, (t + 60) * U, 7, c))
            c, t = c + 1, t + 5
        for _ in range(2):
            api.append(("cudaLaunchKernel", t * U, (t + 5) * U, c))
            kernels.append(("bwd", (t + 10) * U, (t + 60) * U, 7, c))
            api.append(("cudaStreamSynchronize", (t + 5) * U, (t + 62) * U, None))
            c, t = c + 1, t + 62 + 150
    return _trace(api, kernels)


def test_host_work_that_reads_the_gpus_values_gains_with_its_reads_where_neither_alone_moves_the_step():
    tr = _checked_loop()
    g = replay.gains(tr, 0.0, 6000 * U, 3)
    rec, steps = g["recorded_ns"], g["step_ns"]
    assert rec == pytest.approx(2000 * U, rel=0.01)
    # Each alone: the syncs dropped leave the host's 1,800 us; the host ahead leaves the backward's
    # stretches (they follow reads: the sync's) and their waits.
    assert steps["sync"] > 0.85 * rec and steps["host"] > 0.4 * rec
    # Both: the host's stretches and the reads between them go; the kernels (300 us) and the calls stay.
    assert steps["host_sync"] < 0.25 * rec and steps["host_sync"] >= 300 * U
    ib = idle.breakdown(tr, 0.0, 6000 * U, 3).to_dict()
    assert ib["parts_ns"]["host"] > ib["parts_ns"]["sync"]  # the host owns most of the idle time
    opps = {o.cause: o for o in idle_opportunities({**ib, "replay": g})}
    assert opps["host"].share == pytest.approx(1.0 - steps["host_sync"] / rec)
    assert max(opps.values(), key=lambda o: o.share).cause == "host"


def test_the_syncs_own_the_joint_what_if_where_the_host_work_only_follows_them():
    # _sync_loop: the host work follows each read (the sync's idle); the host's estimate stays its own.
    g = replay.gains(_sync_loop(), 0.0, 3000 * U, 3)
    ib = idle.breakdown(_sync_loop(), 0.0, 3000 * U, 3).to_dict()
    opps = {o.cause: o for o in idle_opportunities({**ib, "replay": g})}
    assert "host_sync" in g["step_ns"] and g["step_ns"]["host_sync"] < g["step_ns"]["host"]
    assert "host" not in opps or opps["host"].share == pytest.approx(
        1.0 - g["step_ns"]["host"] / g["recorded_ns"]
    )


def test_the_recorded_anomaly_mode_step_gains_with_its_reads_and_names_the_host(tmp):
    """Autograd's anomaly mode (recorded-replay/, 2026-11-27 on an H100: +215.3 % and +327.5 % measured in two
    timings): the host records each op's stack and reads every backward node's outputs. The syncs alone gain
    little (the host's work stays), the host alone leaves the stretches after its reads; both together are
    the fix's what-if, and the host owns most of the idle time."""
    folder, pair = "recorded-replay", "autograd_anomaly_detection_left_on"
    tr, lo, hi, occ = _load(folder, pair, "bad", tmp)
    g = replay.gains(tr, lo, hi, occ)
    rec, steps = g["recorded_ns"], g["step_ns"]
    assert steps["host_sync"] < min(steps["host"], steps["sync"])
    assert rec / steps["sync"] - 1 < 0.1
    ib = idle.breakdown(cut(tr, lo, hi), lo, hi, occ).to_dict()
    assert ib["parts_ns"]["host"] > ib["parts_ns"]["sync"]
    opps = sorted(idle_opportunities({**ib, "replay": g}), key=lambda o: -o.share)
    assert opps[0].cause == "host"
    assert opps[0].est_gain_pct == pytest.approx(100 * (rec / steps["host_sync"] - 1))
    assert 100.0 < opps[0].est_gain_pct < 2 * 215.3  # within 2x of both timings


def test_occurrences_before_a_pause_in_the_loop_are_warm_up_too():
    """A script's warm-up loop, a pause (its synchronise, set-up, a one-off host phase), then the measured loop:
    the eighteenth held-back set's fixed pooling loop paused 4.58 s after its third warm-up step against ~0.1 ms
    between the later steps; kept, the idle window held the pause and told the fixed version "host +14 917 %".
    The occurrences before a gap over ten times the later steps' median start-to-start period are warm-up
    (within the first half); a pause later in the run stays (it is the run's)."""
    from kprof_mcp.analysis.command import range_stages

    def trace(steps: list[tuple[float, float]]) -> Trace:  # (duration, gap after), us
        api, kernels, ranges, t = [], [], [], 0.0
        for occ, (dur, gap) in enumerate(steps):
            api.append(("cudaLaunchKernel", t + 1 * U, t + 1.5 * U, occ))
            kernels.append(("k", t + 2 * U, t + 3 * U, 7, occ))
            ranges.append(("step", t, t + dur * U))
            t += (dur + gap) * U
        return _trace(api, kernels, ranges=ranges)

    steady = [(100.0, 10.0)] * 20
    (st,), notes = range_stages(
        trace([(150_000.0, 10.0), (100.0, 10.0), (100.0, 4_580_000.0), *steady]), [], True
    )
    assert st.warmup == 3 and len(st.samples_ns) == 20
    assert st.span[0] == pytest.approx(4_730_220.0 * U)  # the window starts at the measured loop
    (st,), _ = range_stages(trace([(150_000.0, 10.0), (100.0, 10.0), (100.0, 900.0), *steady]), [], True)
    assert st.warmup == 1  # 900 us: under ten periods of 110 us, a step's gap
    late = [*steady[:12], (100.0, 4_580_000.0), *steady[:8]]
    (st,), _ = range_stages(trace([(150_000.0, 10.0), *late]), [], True)
    assert st.warmup == 1  # a pause in the second half is the run's


def test_the_recorded_fixed_pooling_loop_keeps_its_pause_out_of_the_window(tmp):
    folder, pair = (
        "recorded-heldout18",
        "a_graph_batch_s_sum_pooling_run_with_deterministic_algorithms_forced_on__a_sort_based_scatter_add",
    )
    tr, lo, hi, occ = _load(folder, pair, "good", tmp)
    assert occ == 20 and hi - lo < 50e6  # 20 steps of ~0.1 ms on the host, not the 4.58 s pause
    g = replay.gains(tr, lo, hi, occ)
    ib = idle.breakdown(cut(tr, lo, hi), lo, hi, occ).to_dict()
    opps = {o.cause: o for o in idle_opportunities({**ib, "replay": g})}
    assert "host" not in opps or opps["host"].est_gain_pct < 100.0

"""The tail what-if on a timeline (kprof_mcp.analysis.replay.tail, issue 36): a kernel's partial last wave
evened out and the step replayed, so a kernel off the critical path gains nothing, and waves counted with the
blocks per SM its registers, shared memory and warps allow. Before it, a timeline's tail was 1 − w/ceil(w) of
the whole plan whatever the kernel's share of the step: 23.8 % for an optimizer kernel of a few per cent of a
host-bound step, on seven recorded command pairs."""

import pytest
from test_replay import U, _trace

from kprof_mcp.analysis import replay
from kprof_mcp.analysis.diagnosis.metrics import MIN_SHARE
from kprof_mcp.analysis.diagnosis.timeline import timeline_opportunities
from kprof_mcp.analysis.replay import tail
from kprof_mcp.render.diagnosis import words

# 165 blocks of 256 threads at 255 registers a thread: one block per SM (65,536 registers), 1.25 waves of 132
# SMs; at 32 registers a thread eight fit, and the grid is one partial wave (no tail).
HEAVY = {"grid_blocks": 165, "block_threads": 256, "regs": 255, "smem": 0}
LIGHT = {**HEAVY, "regs": 32}


def _loop(host_gap_us: float = 0.0, shape: dict = HEAVY, n: int = 8) -> tuple:
    """n launches of a 40 us kernel ``k`` (5 us calls, ``host_gap_us`` of host work before each), one stream,
    then a synchronise that returns 5 us after the last kernel: (trace, window end)."""
    api, kernels, t, gpu = [], [], 0.0, 10.0
    for i in range(n):
        t += host_gap_us
        api.append(("cudaLaunchKernel", t * U, (t + 5) * U, i))
        gpu = max(gpu, t + 10)
        kernels.append(("k", gpu * U, (gpu + 40) * U, 7, i, shape))
        t, gpu = t + 5, gpu + 40
    api.append(("cudaStreamSynchronize", t * U, (gpu + 5) * U, None))
    return _trace(api, kernels), (gpu + 5) * U


def test_a_kernel_with_a_partial_last_wave_takes_w_over_ceil_w_of_its_time_and_the_step_is_replayed():
    tr, hi = _loop()
    g = replay.build(tr, 0.0, hi, 1)
    assert g.ops[0].waves == pytest.approx(1.25) and g.ops[0].fill == 1.0
    assert tail.cut(g.ops[0]) == pytest.approx(1 - 1.25 / 2)
    # Kernel-bound: 8 x 40 us from 10 us, the synchronise returning 5 us after: 335 us. Evened out, each
    # kernel takes 25 us: 10 + 200 + 5.
    assert replay.replay(g).span_ns == pytest.approx(335 * U)
    assert replay.replay(g, tail.even_waves).span_ns == pytest.approx(215 * U)
    gains = replay.gains(tr, 0.0, hi, 1)
    assert gains["step_ns"]["tail"] == pytest.approx(215 * U)
    t = gains["tail"]
    assert t["kernel"] == "k" and t["waves"] == pytest.approx(1.25) and t["last_wave"] == pytest.approx(0.25)
    assert t["kernel_ns"] == pytest.approx(320 * U) and t["freed_ns"] == pytest.approx(120 * U)
    assert g.ops[0].dur == pytest.approx(40 * U)  # the what-if changed a copy


def test_a_kernel_whose_blocks_fit_several_to_an_sm_has_no_tail():
    tr, hi = _loop(shape=LIGHT)
    g = replay.build(tr, 0.0, hi, 1)
    assert g.ops[0].waves == pytest.approx(165 / (132 * 8))
    assert tail.worst(g) is None and "tail" not in replay.gains(tr, 0.0, hi, 1)


def test_a_kernel_off_the_critical_path_gains_nothing_from_its_tail():
    # 200 us of host work before each launch: the GPU waits on the host, evening the waves frees no step time.
    tr, hi = _loop(host_gap_us=200.0)
    gains = replay.gains(tr, 0.0, hi, 1)
    assert gains["tail"]["freed_ns"] == pytest.approx(120 * U)
    assert gains["step_ns"]["tail"] == pytest.approx(gains["recorded_ns"], rel=0.02)
    old_rows = [{"kernel": "k", "blocks_per_sm": 1.25, "last_wave_efficiency": 0.25}]
    tl = {"idle": {"replay": gains}, "waves": old_rows, "window_ns": hi}
    assert not [o for o in timeline_opportunities(tl, "sequential") if o.cause == "tail"]


def test_the_diagnosis_takes_the_replayed_tail_and_names_its_kernel_waves_and_freed_time():
    tr, hi = _loop()
    gains = replay.gains(tr, 0.0, hi, 1)
    tl = {"idle": {"replay": gains}, "waves": [], "window_ns": hi}
    (o,) = [o for o in timeline_opportunities(tl, "sequential") if o.cause == "tail"]
    assert o.share == pytest.approx(1 - 215 / 335) and o.est_gain_pct == pytest.approx(100 * (335 / 215 - 1))
    assert o.facts.kernel == "k" and o.facts.waves_per_sm == pytest.approx(1.25)
    text, trigger, _ = words(o)
    assert text.startswith("Even out the last wave of k")
    assert "1.25 waves" in trigger and "120.0 µs less a step" in trigger


def test_without_a_replay_the_tail_is_weighted_by_the_kernels_share_of_the_window():
    rows = [{"kernel": "k", "blocks_per_sm": 1.25, "last_wave_efficiency": 0.25}]
    summary = [{"name": "k", "total_ns": 100 * U}]
    tl = {"waves": rows, "kernel_summary": summary, "window_ns": 1000 * U}
    (o,) = [o for o in timeline_opportunities(tl, "sequential") if o.cause == "tail"]
    assert o.share == pytest.approx((1 - 1.25 / 2) * 0.1)  # not 0.375: the kernel is 10 % of the window
    tl["kernel_summary"] = [{"name": "k", "total_ns": 10 * U}]  # 1 %: its tail is under MIN_SHARE
    assert (1 - 1.25 / 2) * 0.01 < MIN_SHARE
    assert not [o for o in timeline_opportunities(tl, "sequential") if o.cause == "tail"]


def _read_loop() -> tuple:
    """Per step (200 us): a launch (0-5 us, its kernel 10-30), a synchronise that reads its value (5-35), 50 us of
    Python deciding on it, then two launches 40 us apart (90-95 and 135-140, kernels 100-120 and 145-165); 4
    steps, the window to 800 us."""
    api, kernels = [], []
    for s in range(4):
        t, c = 200.0 * s, 3 * s
        api += [
            ("cudaLaunchKernel", t * U, (t + 5) * U, c),
            ("cudaStreamSynchronize", (t + 5) * U, (t + 35) * U, None),
            ("cudaLaunchKernel", (t + 85) * U, (t + 90) * U, c + 1),
            ("cudaLaunchKernel", (t + 130) * U, (t + 135) * U, c + 2),
        ]
        kernels += [
            ("a", (t + 10) * U, (t + 30) * U, 7, c),
            ("b", (t + 95) * U, (t + 115) * U, 7, c + 1),
            ("c", (t + 140) * U, (t + 160) * U, 7, c + 2),
        ]
    return _trace(api, kernels), 800 * U


def test_a_graph_cannot_hold_a_read_the_host_code_after_it_stays_and_its_segment_costs_a_launch():
    """The launch cause's what-if (a CUDA graph) drops the host's short gaps between launches, but a graph cannot
    hold a host read of the GPU's values (torch.distributions' argument checks, twentieth held-back set): the 50 us
    of Python after each read stays and the segment after it costs one graph launch (the window's fastest launch
    call); the 45 us gap inside the segment goes."""
    tr, hi = _read_loop()
    g = replay.build(tr, 0.0, hi, 4)
    gr = replay.graph_launches(g)
    after_read = [i for i, c in enumerate(g.calls) if c.name == "cudaLaunchKernel" and i % 4 == 2]
    inside = [i for i, c in enumerate(g.calls) if c.name == "cudaLaunchKernel" and i % 4 == 3]
    assert all(
        gr.calls[i].gap == pytest.approx(g.calls[i].gap) and g.calls[i].gap > 40 * U for i in after_read
    )
    assert all(gr.calls[i].dur == pytest.approx(g.launch_floor_ns) for i in after_read)
    assert all(gr.calls[i].gap == 0.0 for i in inside)
    assert replay.replay(gr).step_ns < replay.replay(g).step_ns  # the gaps inside the segments still go

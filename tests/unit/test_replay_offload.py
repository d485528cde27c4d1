"""Tensors offloaded to the host and brought back within the step (``torch.autograd.graph.save_on_cpu``, a CPU
offload of activations): the copy cause's what-if keeps them on the GPU (analysis/replay/transforms.offloaded,
pin_copies). The 25th held-back set's offload pair (H200, 2026-11-28; its 15 MB trace is kept outside the tree)
replayed at 4,400 µs a step against 20,717 µs (+370.8 %) for a fix measured at +633.6 %; here, hand-built traces
with the same structure."""

from __future__ import annotations

import pytest
from test_replay import U, _trace

from kprof_mcp.analysis import idle, replay
from kprof_mcp.analysis.diagnosis.timeline import idle_opportunities
from kprof_mcp.analysis.replay.transforms import offloaded
from kprof_mcp.render.diagnosis import words

MB32 = 32 * 2**20
STEP = 3000.0  # us


def _offload_steps(steps: int = 2, reload_bytes: float = MB32, offload: bool = True):
    """Each step (3000 us, a range "step"): a forward kernel (20-420), a synchronous download of 32 MiB into
    pinned memory (its call 425-1030 covering the copy 430-1020) and PyTorch's synchronise after it, a second
    kernel (1050-1450), then the backward: an upload of ``reload_bytes`` (its call 1460-2070, the copy
    1470-2060) and a kernel after it (2080-2480). ``offload=False``: the two copies are not there (the fix)."""
    api, kernels, memops, ranges = [], [], [], []
    for i in range(steps):
        t, c = STEP * i, 10 * i
        ranges.append(("step", t * U, (t + STEP - 1) * U))
        api.append(("cudaLaunchKernel", (t + 10) * U, (t + 15) * U, c + 1))
        kernels.append(("fwd", (t + 20) * U, (t + 420) * U, 7, c + 1))
        if offload:
            api.append(("cudaMemcpyAsync", (t + 425) * U, (t + 1030) * U, c + 2))
            api.append(("cudaStreamSynchronize", (t + 1031) * U, (t + 1033) * U, None))
            memops.append(("Memcpy DtoH (Device -> Pinned)", (t + 430) * U, (t + 1020) * U, 7, c + 2, MB32))
        api.append(("cudaLaunchKernel", (t + 1040) * U, (t + 1045) * U, c + 3))
        kernels.append(("fwd", (t + 1050) * U, (t + 1450) * U, 7, c + 3))
        if offload:
            api.append(("cudaMemcpyAsync", (t + 1460) * U, (t + 2070) * U, c + 4))
            memops.append(
                ("Memcpy HtoD (Pinned -> Device)", (t + 1470) * U, (t + 2060) * U, 7, c + 4, reload_bytes)
            )
        api.append(("cudaLaunchKernel", (t + 2075) * U, (t + 2078) * U, c + 5))
        kernels.append(("bwd", (t + 2080) * U, (t + 2480) * U, 7, c + 5))
    return _trace(api, kernels, memops, ranges)


def test_a_download_brought_back_up_in_the_same_step_is_kept_on_the_gpu():
    tr = _offload_steps()
    g = replay.build(tr, 0.0, 2 * STEP * U, 2)
    pairs = offloaded(g)
    assert len(pairs) == 2  # one per step, never across the step's start
    assert all("DtoH" in g.ops[d].name and "HtoD" in g.ops[u].name for d, u in pairs.items())
    gains = replay.gains(tr, 0.0, 2 * STEP * U, 2)
    assert gains["offload_copies"] == 2.0 and gains["offload_ns"] == pytest.approx((590 + 590) * U)
    # Without the two copies and their waits the step is its three kernels and the host between them: the
    # replay takes away at least the copies' 1180 us of the recorded step.
    assert gains["step_ns"]["copy"] <= gains["recorded_ns"] - 1100 * U
    # Never below the step's three kernels (1200 us), nor does the version without the copies offload anything.
    assert gains["step_ns"]["copy"] >= 1200 * U
    assert "offload_copies" not in replay.gains(_offload_steps(offload=False), 0.0, 2 * STEP * U, 2)
    ib = idle.breakdown(tr, 0.0, 2 * STEP * U, 2).to_dict()
    opps = {o.cause: o for o in idle_opportunities({**ib, "replay": gains})}
    copy = opps["copy"]
    assert copy.facts.move == "offload" and copy.facts.copies == 2.0
    assert copy.est_gain_pct == pytest.approx(100 * (gains["recorded_ns"] / gains["step_ns"]["copy"] - 1))
    name, trigger, _ = words(copy)
    assert "Keep the offloaded tensors on the GPU" in name and "to the host and back" in trigger


@pytest.mark.parametrize(
    "reload_bytes,why", [(MB32 // 2, "another size"), (512 * 1024, "under 1 MiB")], ids=["size", "small"]
)
def test_no_offload_where_the_upload_is_not_the_downloads_bytes(reload_bytes, why):
    tr = _offload_steps(reload_bytes=reload_bytes)
    if reload_bytes < 2**20:  # both copies small: neither counts
        tr.memops.loc[:, "bytes"] = reload_bytes
    g = replay.build(tr, 0.0, 2 * STEP * U, 2)
    assert offloaded(g) == {}, why
    assert "offload_copies" not in replay.gains(tr, 0.0, 2 * STEP * U, 2)


def test_a_result_downloaded_at_a_steps_end_is_not_matched_with_the_next_steps_upload():
    """A step that uploads its input (32 MiB) first and downloads its result (32 MiB) last: the download and the
    next step's upload are the same size, a step's start between them."""
    api, kernels, memops, ranges = [], [], [], []
    for i in range(3):
        t, c = STEP * i, 10 * i
        ranges.append(("step", t * U, (t + STEP - 1) * U))
        api.append(("cudaMemcpyAsync", (t + 10) * U, (t + 620) * U, c + 1))
        memops.append(("Memcpy HtoD (Pinned -> Device)", (t + 20) * U, (t + 610) * U, 7, c + 1, MB32))
        api.append(("cudaLaunchKernel", (t + 630) * U, (t + 635) * U, c + 2))
        kernels.append(("k", (t + 640) * U, (t + 1640) * U, 7, c + 2))
        api.append(("cudaMemcpyAsync", (t + 1650) * U, (t + 2260) * U, c + 3))
        memops.append(("Memcpy DtoH (Device -> Pinned)", (t + 1660) * U, (t + 2250) * U, 7, c + 3, MB32))
    g = replay.build(_trace(api, kernels, memops, ranges), 0.0, 3 * STEP * U, 3)
    assert len(g.cuts) == 3 and offloaded(g) == {}

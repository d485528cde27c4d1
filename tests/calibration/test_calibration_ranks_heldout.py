"""The held-back multi-rank set (HELDOUT_RANKS_PAIRS): every script's two variants run as 2 ranks with the
gloo backend on the CPU (the GPU hidden, tiny sizes, --steps 2, started as record.py starts them) and give the
same kept outputs; each variant is the planted problem or its fix and nothing else; the designs' sizes are
what the pairs say (the collective count, the shards' tokens, the gather's model)."""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve().parent
COMMANDS_DIR = HERE / "commands"
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
from pairs import (  # noqa: E402
    ALL_PAIRS,
    HELDOUT2_PAIRS,
    HELDOUT3_PAIRS,
    HELDOUT4_PAIRS,
    HELDOUT5_PAIRS,
    HELDOUT6_PAIRS,
    HELDOUT7_PAIRS,
    HELDOUT_PAIRS,
    HELDOUT_RANKS_PAIRS,
    REPLAY_PAIRS,
)

SCRIPTS = [p.kernel for p in HELDOUT_RANKS_PAIRS]
CAUSES = {"straggler", "exposed_comm", "launch", "host", "copy", "sync", None}


def _script(name):
    if str(COMMANDS_DIR) not in sys.path:
        sys.path.insert(0, str(COMMANDS_DIR))
    spec = importlib.util.spec_from_file_location(f"ranks_{name}", COMMANDS_DIR / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(script, variant, *extra):
    """The script as record.py runs it (``python <script> --variant ...`` in commands/), the GPU hidden."""
    env = dict(
        os.environ,
        CUDA_VISIBLE_DEVICES="",
        PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    )
    cp = subprocess.run(
        [sys.executable, script, "--variant", variant, "--steps", "2", *extra],
        cwd=COMMANDS_DIR,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert cp.returncode == 0, cp.stderr[-3000:]
    return cp


def test_the_set():
    assert len(HELDOUT_RANKS_PAIRS) == 4
    others = ALL_PAIRS + REPLAY_PAIRS + HELDOUT_PAIRS + HELDOUT2_PAIRS + HELDOUT3_PAIRS + HELDOUT4_PAIRS
    others += HELDOUT5_PAIRS + HELDOUT6_PAIRS + HELDOUT7_PAIRS
    assert not {p.name for p in HELDOUT_RANKS_PAIRS} & {p.name for p in others}
    for p in HELDOUT_RANKS_PAIRS:
        assert p.command and (p.bad, p.good) == ("bad", "good") and p.mode in ("nsys", "event")
        assert p.cause in CAUSES and p.planted and (COMMANDS_DIR / p.kernel).exists()
    assert [p.cause for p in HELDOUT_RANKS_PAIRS] == ["launch", "exposed_comm", "straggler", "straggler"]


@pytest.mark.parametrize("script", SCRIPTS)
def test_variants_run_as_two_gloo_ranks_and_agree(script):
    with tempfile.TemporaryDirectory() as tmp:
        outs = {}
        for variant in ("bad", "good"):
            cp = _run(script, variant, "--save", f"{tmp}/{variant}")
            assert cp.stdout.strip().splitlines()[-1] == "done"
            outs[variant] = [torch.load(f"{tmp}/{variant}.rank{r}.pt") for r in (0, 1)]
    bad, good = outs["bad"], outs["good"]
    n = 5 if script == "ranks_exposed_gather.py" else 6  # 3 warm-up steps and 2 kept, the parameters' sum
    for r in (0, 1):
        assert bad[r].shape == good[r].shape == (n,) and torch.isfinite(bad[r]).all()
    assert not torch.equal(bad[0][:5], bad[1][:5])  # each rank its own data
    if script == "ranks_uneven_shards.py":  # the same tokens split otherwise: the ranks' sum agrees
        assert not torch.equal(bad[0], good[0])
        torch.testing.assert_close(bad[0] + bad[1], good[0] + good[1], rtol=1e-5, atol=1e-5)
    else:  # the same samples on each rank, the same sums: identical
        for r in (0, 1):
            torch.testing.assert_close(bad[r], good[r], rtol=0, atol=0)
    if n == 6:
        assert torch.equal(bad[0][5], bad[1][5])  # the ranks' parameters stay in step


def test_time_prints_rank_zeros_json_last():
    cp = _run("ranks_small_allreduce.py", "good", "--time", "--rounds", "2")
    rec = json.loads(cp.stdout.strip().splitlines()[-1])  # what record.py reads
    assert rec["steps"] == 2 and len(rec["step_ns"]) == 2 and rec["step_ns_median"] > 0


@pytest.fixture
def one_rank_group():
    import torch.distributed as dist

    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("gloo", init_method=f"file://{tmp}/rdv", rank=0, world_size=1)
        try:
            yield dist
        finally:
            dist.destroy_process_group()


def _count(monkeypatch, dist, name):
    calls = []
    real = getattr(dist, name)

    def counted(t, *a, **k):
        calls.append(t.numel())
        return real(t, *a, **k)

    monkeypatch.setattr(dist, name, counted)
    return calls


@pytest.mark.parametrize("variant", ["bad", "good"])
def test_small_allreduce_one_collective_per_parameter_or_one_bucket(variant, one_rank_group, monkeypatch):
    m = _script("ranks_small_allreduce")
    assert 4 * m.BLOCKS == 256  # the design's 256 parameter tensors, 192 of them vectors
    loop, _ = m.make(variant, 0, 1, False, blocks=5, width=8, tokens=4)
    calls = _count(monkeypatch, one_rank_group, "all_reduce")
    loop(2)
    n_params = 5 * (2 * 8 + 8 * 8 + 8)
    if variant == "bad":
        assert len(calls) == 2 * 20 and sum(calls) == 2 * n_params
    else:
        assert calls == [n_params, n_params]


def test_small_allreduce_averages_per_parameter_or_once():
    src = (COMMANDS_DIR / "ranks_small_allreduce.py").read_text()
    assert "dist.all_reduce(gr_)\n                        gr_ /= world" in src  # the tutorial's loop
    assert "dist.all_reduce(flat)\n                    flat /= world" in src and src.count(" /= world\n") == 2


@pytest.mark.parametrize("variant", ["bad", "good"])
def test_exposed_gather_blocking_or_prefetched(variant, one_rank_group, monkeypatch):
    m = _script("ranks_exposed_gather")
    loop, _ = m.make(variant, 0, 1, False, layers=3, width=8, tokens=4)
    flags = []
    real = one_rank_group.all_gather_into_tensor

    def counted(out, inp, *a, async_op=False, **k):
        flags.append(async_op)
        return real(out, inp, *a, async_op=async_op, **k)

    monkeypatch.setattr(one_rank_group, "all_gather_into_tensor", counted)
    loop(1)
    assert flags == ([False] * 3 if variant == "bad" else [True] * 3)


def test_exposed_gather_model_is_one_ranks_work():
    m = _script("ranks_exposed_gather")
    (p,) = [p for p in HELDOUT_RANKS_PAIRS if p.kernel == "ranks_exposed_gather.py"]
    layers, d, t = m.LAYERS, m.WIDTH, m.TOKENS
    step = p.models["step"]
    assert step["flops"] == pytest.approx(layers * 2 * t * d * d, rel=1e-2)
    per_layer = d * d // 2 * 2 + 2 * d * d * 2 + 7 * t * d * 2  # shard read, gathered weight w+r, activations
    assert step["bytes"] == pytest.approx(layers * per_layer, rel=1e-2)
    # balanced by design: one layer's gathered bytes and its GEMM of comparable time on an H100 (~0.35 TB/s
    # over NVLink, ~0.6 PFLOP/s bf16)
    ratio = (d * d // 2 * 2 / 0.35e12) / (2 * t * d * d / 0.6e15)
    assert 0.5 < ratio < 2


def test_uneven_shards_split_the_tokens_as_designed():
    m = _script("ranks_uneven_shards")
    g = torch.Generator().manual_seed(0)
    for _ in range(m.BATCHES):
        lens = m.batch_lengths(m.GLOBAL_SEQS, m.SHORT, m.LONG, g).tolist()
        tok = {v: [sum(lens[j] for j in m.shard(lens, v, r, 2)) for r in (0, 1)] for v in ("bad", "good")}
        assert tok["bad"][1] > 10 * tok["bad"][0]  # rank 1 the longest half
        assert 0.8 < tok["good"][1] / tok["good"][0] < 1.25  # dealt out in turn: even
        assert sum(tok["bad"]) == sum(tok["good"]) == sum(lens)
        assert sorted(m.shard(lens, "bad", 0, 2) + m.shard(lens, "bad", 1, 2)) == list(range(len(lens)))


def test_host_straggler_only_rank_one_prepares_in_the_bad_variant():
    src = (COMMANDS_DIR / "ranks_host_straggler.py").read_text()
    assert (
        src.count("mask_and_collate(") == 3
    )  # its definition, the data rank's global batch, each rank's own half
    assert (
        'if rank == 1:  # the data rank prepares everyone\'s batch\n                        ids, labels = mask_and_collate(samples, step)'
        in src
    )
    assert "mask_and_collate(samples[rank * b : (rank + 1) * b], step)" in src
    assert src.count("pinned(") == 4  # its definition and the copies of both variants, asynchronous
    assert src.count("non_blocking=True)") == 3
    m = _script("ranks_host_straggler")
    ids, labels = m.mask_and_collate([[5, 6, 7, 8] * 50], 0)
    masked = ids == m.MASK_ID
    assert (
        0.05 < masked.float().mean() < 0.3
        and (labels[masked] > 0).all()
        and (labels[~masked] == m.IGNORE).all()
    )

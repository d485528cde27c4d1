"""The second held-back multi-rank set (HELDOUT_RANKS2_PAIRS, pairs_ranks2.py): every script's two variants
run as 2 ranks with the gloo backend on the CPU (the GPU hidden, tiny sizes, --steps 2, started as record.py
starts them) and give the same kept outputs; each variant is the planted problem or its fix and nothing
else; the designs' sizes are what the pairs say."""

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
from pairs_ranks2 import HELDOUT_RANKS2_PAIRS  # noqa: E402

SCRIPTS = [p.kernel for p in HELDOUT_RANKS2_PAIRS]
CAUSES = {"straggler", "exposed_comm", "launch", "host", "copy", "sync", "move_work", "fusion"}


def _script(name):
    if str(COMMANDS_DIR) not in sys.path:
        sys.path.insert(0, str(COMMANDS_DIR))
    spec = importlib.util.spec_from_file_location(f"ranks2_{name}", COMMANDS_DIR / f"{name}.py")
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
    assert len(HELDOUT_RANKS2_PAIRS) == 4
    others = ALL_PAIRS + REPLAY_PAIRS + HELDOUT_PAIRS + HELDOUT2_PAIRS + HELDOUT3_PAIRS + HELDOUT4_PAIRS
    others += HELDOUT5_PAIRS + HELDOUT6_PAIRS + HELDOUT7_PAIRS + HELDOUT_RANKS_PAIRS
    assert not {p.name for p in HELDOUT_RANKS2_PAIRS} & {p.name for p in others}
    assert not {p.kernel for p in HELDOUT_RANKS2_PAIRS} & {p.kernel for p in others}
    for p in HELDOUT_RANKS2_PAIRS:
        assert p.command and (p.bad, p.good) == ("bad", "good") and p.mode == "nsys"
        assert p.cause in CAUSES and p.planted and (COMMANDS_DIR / p.kernel).exists()
        assert p.kernel.startswith("ranks2_")
    assert [p.cause for p in HELDOUT_RANKS2_PAIRS] == ["exposed_comm", "exposed_comm", "sync", "straggler"]


def test_record_py_looks_the_set_up():
    src = (HERE / "record.py").read_text()
    assert "from pairs_ranks2 import HELDOUT_RANKS2_PAIRS" in src and "+ HELDOUT_RANKS2_PAIRS" in src


@pytest.mark.parametrize("script", SCRIPTS)
def test_variants_run_as_two_gloo_ranks_and_agree(script):
    with tempfile.TemporaryDirectory() as tmp:
        outs = {}
        for variant in ("bad", "good"):
            cp = _run(script, variant, "--save", f"{tmp}/{variant}")
            assert cp.stdout.strip().splitlines()[-1] == "done"
            outs[variant] = [torch.load(f"{tmp}/{variant}.rank{r}.pt") for r in (0, 1)]
    bad, good = outs["bad"], outs["good"]
    n = (
        11 if script == "ranks2_rank0_eval.py" else 6
    )  # 3 warm-up steps and 2 kept (x2: the validation), a sum
    for r in (0, 1):
        assert bad[r].shape == good[r].shape == (n,) and torch.isfinite(bad[r]).all()
        assert torch.equal(bad[r][-1], bad[1 - r][-1])  # the ranks' parameters stay in step
    if script == "ranks2_loss_item_sync.py":  # the logged loss is the global one: the same on both ranks
        assert torch.equal(bad[0], bad[1])
    else:
        assert not torch.equal(bad[0][:5], bad[1][:5])  # each rank its own data
    if script == "ranks2_rank0_eval.py":  # training identical; the validation sums split otherwise
        for r in (0, 1):
            torch.testing.assert_close(bad[r][:5], good[r][:5], rtol=0, atol=0)
        assert (bad[1][5:10] == 0).all() and (good[1][5:10] > 0).all()
        torch.testing.assert_close(
            bad[0][5:10] + bad[1][5:10], good[0][5:10] + good[1][5:10], rtol=1e-5, atol=0
        )
        torch.testing.assert_close(bad[0][10], good[0][10], rtol=0, atol=0)
    else:  # the same sums of the same values: identical
        for r in (0, 1):
            torch.testing.assert_close(bad[r], good[r], rtol=0, atol=0)


def test_time_prints_rank_zeros_json_last():
    cp = _run("ranks2_fp32_grad_reduce.py", "good", "--time", "--rounds", "2")
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


def _record(monkeypatch, dist, name):
    """Every call of ``dist.<name>``: (numel, dtype, async_op)."""
    calls = []
    real = getattr(dist, name)

    def recorded(t, *a, async_op=False, **k):
        calls.append((t.numel(), t.dtype, async_op))
        return real(t, *a, async_op=async_op, **k)

    monkeypatch.setattr(dist, name, recorded)
    return calls


@pytest.mark.parametrize("variant", ["bad", "good"])
def test_fp32_grad_reduce_one_bucket_in_fp32_or_bf16(variant, one_rank_group, monkeypatch):
    m = _script("ranks2_fp32_grad_reduce")
    n_params = m.LAYERS * 2 * m.WIDTH * m.HIDDEN
    assert n_params == pytest.approx(268e6, rel=1e-2)  # the design's 268 M parameters, 537 MB in bf16
    assert 6 * n_params * m.TOKENS == pytest.approx(8.2e11, rel=1e-2)
    loop, _ = m.make(variant, 0, 1, False, layers=2, width=8, hidden=16, tokens=4)
    calls = _record(monkeypatch, one_rank_group, "all_reduce")
    loop(2)
    dtype = torch.float32 if variant == "bad" else torch.bfloat16
    assert calls == [(2 * 2 * 8 * 16, dtype, False)] * 2


def test_fp32_grad_reduce_casts_only_in_the_bad_variant():
    src = (COMMANDS_DIR / "ranks2_fp32_grad_reduce.py").read_text()
    assert src.count("flat32 = flat.float()") == 1 and src.count("flat = flat32.to(dt)") == 1
    assert "dt = torch.bfloat16  #" in src  # bf16 on the CPU too: the casts are real in the tests


@pytest.mark.parametrize("variant", ["bad", "good"])
def test_allreduce_after_backward_or_from_the_hooks(variant, one_rank_group, monkeypatch):
    m = _script("ranks2_allreduce_after_backward")
    per_layer = 2 * m.WIDTH * m.HIDDEN
    # balanced by design: a layer's backward (~0.55 PFLOP/s bf16) against its gradients' all-reduce
    # (bf16, ~0.3 TB/s a direction)
    ratio = (per_layer * 2 / 0.3e12) / (4 * m.TOKENS * per_layer / 0.55e15)
    assert 0.6 < ratio < 1.6
    loop, _ = m.make(variant, 0, 1, False, layers=3, width=4, hidden=8, tokens=4)
    calls = _record(monkeypatch, one_rank_group, "all_reduce")
    backward_done = []
    real_backward = torch.Tensor.backward

    def backward(self, *a, **k):
        real_backward(self, *a, **k)
        backward_done.append(len(calls))  # the collectives issued by the time the backward returns

    monkeypatch.setattr(torch.Tensor, "backward", backward)
    loop(1)
    assert [c[0] for c in calls] == [32] * 6 and {c[1] for c in calls} == {torch.float32}
    if variant == "bad":
        assert backward_done == [0] and {c[2] for c in calls} == {False}
    else:
        assert backward_done == [6] and {c[2] for c in calls} == {True}


@pytest.mark.parametrize("variant", ["bad", "good"])
def test_loss_sync_every_step_or_every_ten(variant, one_rank_group, monkeypatch):
    m = _script("ranks2_loss_item_sync")
    loop, output = m.make(variant, 0, 1, False, log_every=4)
    calls = _record(monkeypatch, one_rank_group, "all_reduce")
    items = []
    real_item = torch.Tensor.item

    def item(self):
        items.append(1)
        return real_item(self)

    monkeypatch.setattr(torch.Tensor, "item", item)
    loop(8)
    small = [c for c in calls if c[0] < 100]  # the losses' all-reduces (the gradients' bucket is larger)
    assert len(calls) - len(small) == 8
    if variant == "bad":
        assert small == [(1, torch.float32, False)] * 8 and len(items) == 8
    else:
        assert small == [(4, torch.float32, False)] * 2 and not items
    assert output()[:-1].numel() == 8


def test_loss_sync_packs_documents_with_positions_and_labels():
    m = _script("ranks2_loss_item_sync")
    docs = [[10, 11, 12], [20, 21], [30, 31, 32, 33, 34]]
    batch, nxt = m.pack(docs, 0, 2, 4)
    assert batch[0].tolist() == [[10, 11, 12, 20], [30, 31, 32, 33]]
    assert batch[1].tolist() == [[0, 1, 2, 0], [0, 1, 2, 3]]
    assert batch[2].tolist() == [[11, 12, m.IGNORE, 21], [31, 32, 33, 34]]
    assert nxt == 3
    src = (COMMANDS_DIR / "ranks2_loss_item_sync.py").read_text()
    assert src.count("pin_memory()") == 1 and src.count("non_blocking=True") == 1  # in both variants
    assert m.SEQS * m.SEQ == 8192 and m.LOG_EVERY == 10


def test_rank0_eval_chunks():
    m = _script("ranks2_rank0_eval")
    n = m.VAL_SEQS // m.CHUNK
    assert m.eval_chunks("bad", 0, 2, n) == list(range(n)) and m.eval_chunks("bad", 1, 2, n) == []
    halves = [m.eval_chunks("good", r, 2, n) for r in (0, 1)]
    assert sorted(halves[0] + halves[1]) == list(range(n)) and len(halves[0]) == len(halves[1])
    # the design: the whole evaluation 2.7x the training step's FLOPs
    per_token = 2 * (m.LAYERS * 2 * m.WIDTH * m.HIDDEN + m.VOCAB * m.WIDTH)
    train, evaluation = 3 * m.SEQS * m.SEQ * per_token, m.VAL_SEQS * m.SEQ * per_token
    assert 2.5 < evaluation / train < 3 and evaluation == pytest.approx(2.8e12, rel=0.05)

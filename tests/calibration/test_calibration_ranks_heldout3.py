"""The third held-back multi-rank set (HELDOUT_RANKS3_PAIRS, pairs_ranks3.py): every script's two variants
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
from pairs import ALL_PAIRS, HELDOUT_PAIRS, HELDOUT_RANKS_PAIRS, REPLAY_PAIRS  # noqa: E402
from pairs_ranks2 import HELDOUT_RANKS2_PAIRS  # noqa: E402
from pairs_ranks3 import DROPPED_RANKS3_PAIRS, HELDOUT_RANKS3_PAIRS  # noqa: E402

SCRIPTS = [p.kernel for p in HELDOUT_RANKS3_PAIRS + DROPPED_RANKS3_PAIRS]
CAUSES = {"straggler", "exposed_comm", "launch", "host", "copy", "sync", "move_work", "fusion"}


def _script(name):
    if str(COMMANDS_DIR) not in sys.path:
        sys.path.insert(0, str(COMMANDS_DIR))
    spec = importlib.util.spec_from_file_location(f"ranks3_{name}", COMMANDS_DIR / f"{name}.py")
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
    assert len(HELDOUT_RANKS3_PAIRS) == 3 and len(DROPPED_RANKS3_PAIRS) == 1
    others = ALL_PAIRS + REPLAY_PAIRS + HELDOUT_PAIRS + HELDOUT_RANKS_PAIRS + HELDOUT_RANKS2_PAIRS
    assert not {p.name for p in HELDOUT_RANKS3_PAIRS} & {p.name for p in others}
    assert not {p.kernel for p in HELDOUT_RANKS3_PAIRS} & {p.kernel for p in others}
    assert not {p.kernel for p in HELDOUT_RANKS3_PAIRS} & {p.kernel for p in DROPPED_RANKS3_PAIRS}
    for p in HELDOUT_RANKS3_PAIRS + DROPPED_RANKS3_PAIRS:
        assert p.command and (p.bad, p.good) == ("bad", "good") and p.mode == "nsys"
        assert p.cause in CAUSES and p.planted and (COMMANDS_DIR / p.kernel).exists()
        assert p.kernel.startswith("ranks3_")
    assert [p.cause for p in HELDOUT_RANKS3_PAIRS] == ["move_work", "exposed_comm", "copy"]
    assert [p.cause for p in DROPPED_RANKS3_PAIRS] == ["sync"]


def test_record_py_looks_the_set_up():
    src = (HERE / "record.py").read_text()
    assert "from pairs_ranks3 import HELDOUT_RANKS3_PAIRS" in src and "+ HELDOUT_RANKS3_PAIRS" in src
    assert "DROPPED_RANKS3" not in src


@pytest.mark.parametrize("script", SCRIPTS)
def test_variants_run_as_two_gloo_ranks_and_agree(script):
    with tempfile.TemporaryDirectory() as tmp:
        outs = {}
        for variant in ("bad", "good"):
            cp = _run(script, variant, "--save", f"{tmp}/{variant}")
            assert cp.stdout.strip().splitlines()[-1] == "done"
            outs[variant] = [torch.load(f"{tmp}/{variant}.rank{r}.pt") for r in (0, 1)]
    bad, good = outs["bad"], outs["good"]
    n = 7 if script == "ranks3_host_snapshot.py" else 6  # 5 losses (3 warm-up), sums (+ the snapshot's)
    for r in (0, 1):
        assert bad[r].shape == good[r].shape == (n,) and torch.isfinite(bad[r]).all()
        assert torch.equal(bad[r][5:], bad[1 - r][5:])  # the ranks' parameters stay in step
        torch.testing.assert_close(bad[r], good[r], rtol=0, atol=0)  # identical values
    assert not torch.equal(bad[0][:5], bad[1][:5])  # each rank its own data


def test_time_prints_rank_zeros_json_last():
    cp = _run("ranks3_param_broadcast.py", "good", "--time", "--rounds", "2")
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
    """Every call of ``dist.<name>``: (numel, dtype, the group's backend or "default")."""
    calls = []
    real = getattr(dist, name)

    def recorded(t, *a, group=None, **k):
        calls.append((t.numel(), t.dtype, "default" if group is None else dist.get_backend(group)))
        return real(t, *a, group=group, **k)

    monkeypatch.setattr(dist, name, recorded)
    return calls


@pytest.mark.parametrize("variant", ["bad", "good"])
def test_gloo_grad_reduce_through_the_cpu_group_or_the_default(variant, one_rank_group, monkeypatch):
    m = _script("ranks3_gloo_grad_reduce")
    n_params = m.LAYERS * 2 * m.WIDTH * m.HIDDEN
    assert n_params * 4 == pytest.approx(16.8e6, rel=1e-2)  # the design's 16.8 MB fp32 bucket
    assert 6 * n_params * m.TOKENS == pytest.approx(8.2e11, rel=1e-2)
    loop, _ = m.make(variant, 0, 1, False, layers=2, width=8, hidden=16, tokens=4)
    calls = _record(monkeypatch, one_rank_group, "all_reduce")
    loop(2)
    group = "gloo" if variant == "bad" else "default"
    assert calls == [(2 * 2 * 8 * 16, torch.float32, group)] * 2
    src = (COMMANDS_DIR / "ranks3_gloo_grad_reduce.py").read_text()
    assert src.count("host = flat.cpu()") == 1 and src.count("flat.copy_(host)") == 1


@pytest.mark.parametrize("variant", ["bad", "good"])
def test_barrier_every_step_or_none(variant, one_rank_group, monkeypatch):
    m = _script("ranks3_barrier_every_step")
    loop, _ = m.make(variant, 0, 1, False)
    barriers = []
    real = one_rank_group.barrier
    monkeypatch.setattr(one_rank_group, "barrier", lambda *a, **k: (barriers.append(1), real(*a, **k))[1])
    reduces = _record(monkeypatch, one_rank_group, "all_reduce")
    loop(3)
    assert len(barriers) == (3 if variant == "bad" else 0) and len(reduces) == 3
    src = (COMMANDS_DIR / "ranks3_barrier_every_step.py").read_text()
    assert src.count(".pin_memory()") == 2 and src.count("non_blocking=True") == 2  # in both variants


def test_barrier_pair_crops_and_sizes():
    m = _script("ranks3_barrier_every_step")
    g = torch.Generator().manual_seed(0)
    images = torch.arange(2 * 3 * 5 * 5, dtype=torch.uint8).reshape(2, 3, 5, 5)
    x, y = m.crop_batch(images, torch.tensor([7, 9]), g, 6, 3)
    assert x.shape == (6, 3, 3, 3) and x.dtype == torch.uint8 and set(y.tolist()) <= {7, 9}
    for c in x:  # each crop a window of one image, flipped or not
        ok = False
        for im in images:
            for yy in range(3):
                for xx in range(3):
                    w = im[:, yy : yy + 3, xx : xx + 3]
                    ok |= torch.equal(c, w) or torch.equal(c, w.flip(-1))
        assert ok
    tokens = m.BATCH * (m.CROP // m.PATCH) ** 2
    n_params = m.LAYERS * 2 * m.WIDTH * m.HIDDEN + m.WIDTH * 3 * m.PATCH**2 + m.CLASSES * m.WIDTH
    assert tokens == 8192 and n_params == pytest.approx(34.8e6, rel=0.01)
    assert 6 * n_params * tokens == pytest.approx(1.7e12, rel=0.05)


@pytest.mark.parametrize("variant", ["bad", "good"])
def test_param_broadcast_every_step_or_once(variant, one_rank_group, monkeypatch):
    m = _script("ranks3_param_broadcast")
    n_params = m.LAYERS * 2 * m.WIDTH * m.HIDDEN
    assert n_params * 2 == pytest.approx(537e6, rel=1e-2)  # 537 MB in bf16
    calls = _record(monkeypatch, one_rank_group, "broadcast")
    loop, _ = m.make(variant, 0, 1, False, layers=2, width=8, hidden=16, tokens=4)
    assert calls == [(128, torch.float32, "default")] * 4  # once at setup, both variants
    calls.clear()
    loop(3)
    assert calls == ([(128, torch.float32, "default")] * 4 * 3 if variant == "bad" else [])


@pytest.mark.parametrize("variant", ["bad", "good"])
def test_host_snapshot_on_the_host_or_the_device(variant, one_rank_group, monkeypatch):
    m = _script("ranks3_host_snapshot")
    n_params = m.LAYERS * 2 * m.WIDTH * m.HIDDEN
    assert n_params * 2 == pytest.approx(33.5e6, rel=1e-2)  # 33.5 MB in bf16
    assert 6 * n_params * m.TOKENS == pytest.approx(4.1e11, rel=1e-2)
    copies = []
    real = torch.Tensor.copy_

    def copy_(self, src, *a, **k):
        copies.append((self.device.type, self.is_pinned(), src.shape))
        return real(self, src, *a, **k)

    loop, output = m.make(variant, 0, 1, False, layers=2, width=8, hidden=16, tokens=4)
    monkeypatch.setattr(torch.Tensor, "copy_", copy_)
    loop(2)
    assert len(copies) == 2 * 4 and {c[:2] for c in copies} == {("cpu", False)}  # pageable on the host
    src = (COMMANDS_DIR / "ranks3_host_snapshot.py").read_text()
    assert src.count('where = "cpu" if variant == "bad" else dev') == 1 and src.count("s.copy_(p)") == 1
    out = output()
    assert out[-1] == out[-2]  # the snapshot holds the parameters of the last step

"""Quick check of the second multi-rank set on 2 GPUs before recording (run from the repository root):
each script's variants timed as record.py times them (rank 0, after a barrier a round; here 10 steps x 2
rounds), their kept outputs compared; and the loss-sync pair's host packing timed alone on this CPU.

    NCCL_NVLS_ENABLE=0 python tests/calibration/recorded-heldout-ranks2/quick_check.py <outdir>
"""

import importlib
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "commands"))
from _ranks import launch  # noqa: E402


def pack_time() -> None:
    m = importlib.import_module("ranks2_loss_item_sync")
    g = torch.Generator().manual_seed(0)
    lens = torch.randint(m.SEQ // 16, 3 * m.SEQ // 4, (m.DOCS,), generator=g).tolist()
    docs = [torch.randint(0, m.VOCAB, (n,), generator=g).tolist() for n in lens][0::2]
    ts, j = [], 0
    for _ in range(20):
        t0 = time.perf_counter()
        _, j = m.pack(docs, j, m.SEQS, m.SEQ)
        ts.append((time.perf_counter() - t0) * 1e3)
    print(
        f"== pack of {m.SEQS * m.SEQ} tokens on the host: median {statistics.median(ts):.2f} ms, "
        f"min {min(ts):.2f} ms",
        flush=True,
    )


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    pack_time()
    names = sys.argv[2:] or [
        "ranks2_fp32_grad_reduce",
        "ranks2_allreduce_after_backward",
        "ranks2_loss_item_sync",
        "ranks2_rank0_eval",
    ]
    for name in names:
        mod = importlib.import_module(name)
        for variant in ("bad", "good"):
            print(f"== {name} {variant}", flush=True)
            t0 = time.time()
            launch(mod.make, variant, steps=10, timing=True, rounds=2, save=str(out / f"{name}.{variant}"))
            print(f"   (launch {time.time() - t0:.1f} s)", flush=True)
        b = [torch.load(out / f"{name}.bad.rank{r}.pt") for r in (0, 1)]
        g = [torch.load(out / f"{name}.good.rank{r}.pt") for r in (0, 1)]
        same = [torch.equal(b[r], g[r]) for r in (0, 1)]
        rel = ((b[0] + b[1]) - (g[0] + g[1])).abs().max() / (g[0] + g[1]).abs().max()
        print(
            f"   outputs identical per rank {same}; rank-sum max rel diff {rel:.2e}; n={b[0].numel()}",
            flush=True,
        )


if __name__ == "__main__":  # the spawned ranks import this file
    main()

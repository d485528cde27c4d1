"""Quick check of the multi-rank set on 2 GPUs before recording (run from the repository root):
each script's variants timed as record.py times them (rank 0, after a barrier a round; here 10 steps x 2
rounds), their kept outputs compared.

    NCCL_NVLS_ENABLE=0 python tests/calibration/recorded-heldout-ranks/quick_check.py <outdir>
"""

import importlib
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "commands"))
from _ranks import launch  # noqa: E402


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    RUNS = [
        ("ranks_exposed_gather", {}),
        ("ranks_host_straggler", {}),
        ("ranks_uneven_shards", {}),
        ("ranks_small_allreduce", {}),
    ]
    for name, sizes in RUNS:
        mod = importlib.import_module(name)
        tag = name + "".join(f"_{k}{v}" for k, v in sizes.items())
        for variant in ("bad", "good"):
            print(f"== {tag} {variant}", flush=True)
            t0 = time.time()
            launch(
                mod.make,
                variant,
                steps=10,
                timing=True,
                rounds=2,
                save=str(out / f"{tag}.{variant}"),
                sizes=sizes,
            )
            print(f"   (launch {time.time() - t0:.1f} s)", flush=True)
        b = [torch.load(out / f"{tag}.bad.rank{r}.pt") for r in (0, 1)]
        g = [torch.load(out / f"{tag}.good.rank{r}.pt") for r in (0, 1)]
        same = [torch.equal(b[r], g[r]) for r in (0, 1)]
        rel = ((b[0] + b[1]) - (g[0] + g[1])).abs().max() / (g[0] + g[1]).abs().max()
        print(
            f"   outputs identical per rank {same}; rank-sum max rel diff {rel:.2e}; n={b[0].numel()}",
            flush=True,
        )


if __name__ == "__main__":  # the spawned ranks import this file
    main()

"""Sequence scoring that copies the whole per-token log-probability tensor [B, S, V] to the host to pick the
target tokens' values there (``logp.cpu().gather(-1, ids.cpu()[..., None])``, the gather after the copy), where
gathering on the GPU and copying the [B, S] values serves (``logp.gather(-1, ids[..., None]).cpu()``). Sources:
the CUDA C++ Best Practices Guide ("Data Transfer Between Host and Device": minimise the data moved, do the
reduction on the device and transfer the result); the PyTorch performance tuning guide ("avoid unnecessary
CPU-GPU synchronisation / transfers"); the common scoring idiom of evaluation scripts (log-probabilities moved
to the CPU, then indexed).

Stage ``step`` (one ``kprof.range`` per step, inference): an LM head over hidden states h [4, 32, 2048] bf16 (one
of four inputs in turn): logits = h @ W (W [2048, 32000] bf16), logp = log_softmax(logits.float()) [4, 32,
32000] fp32 (16.4 MB), the target ids' log-probabilities gathered and each sequence's score (their sum) kept.
Bad: logp copied to the host whole (16.4 MB pageable device-to-host copy), gathered there. Good: gathered on the
GPU, the [4, 32] values copied (512 bytes). The same scores exactly (the same values gathered).

Model (the needed work): FLOPs the head's GEMM 2 x 128 x 2048 x 32000 = 1.7e10 (tensor cores); bytes W 131 MB,
logits and logp ~25 MB: ~1.6e8 a step.

Per design (H100/H200): the good step ~60-120 us (the GEMM reading W, the log_softmax, a 512-byte copy and its
wait); the bad step adds the 16.4 MB pageable device-to-host copy (~1-2 ms at ~8-16 GB/s): ~8-20x. The extra
time is the host<->device transfer (cause "copy", resource None).

    python logprobs_to_host.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
from _common import parser, run

import kprof

B, S, D, V = 4, 32, 2048, 32000


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (the sequences' scores a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, s, d, v = (B, S, D, V) if cuda else (2, 5, 16, 50)
    dt = torch.bfloat16 if cuda else torch.float32
    g = torch.Generator(device=dev).manual_seed(0)
    hs = [torch.randn(b, s, d, generator=g, device=dev).to(dt) for _ in range(4)]
    ids = [torch.randint(0, v, (b, s), generator=g, device=dev) for _ in range(4)]
    w = (torch.randn(d, v, generator=g, device=dev) / d**0.5).to(dt)
    kept: list = []
    it = [0]

    def step():
        k = it[0] % 4
        it[0] += 1
        logp = torch.log_softmax((hs[k] @ w).float(), dim=-1)
        if variant == "bad":
            tok = logp.cpu().gather(-1, ids[k].cpu()[..., None]).squeeze(-1)
        else:
            tok = logp.gather(-1, ids[k][..., None]).squeeze(-1).cpu()
        return tok.sum(-1)

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    kept.append(step())

    return loop, (lambda: torch.stack(kept).double())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()

"""A transformer encoder's training step whose batches are padded to the dataset's maximum length (the
tokenizer's ``padding="max_length"`` with ``max_length=512``, a fixed-shape collate) where each batch's own
longest sequence is a third of it: every layer's GEMMs, its attention and its elementwise work run over the
padding, which the key-padding mask and the pooling then ignore. The fix is dynamic padding (pad to the batch's longest sequence, rounded up to a multiple of 64: Hugging Face's ``DataCollatorWithPadding(pad_to_multiple_of=64)``, "dynamic padding" in the Hugging Face course, ch. 3); the losses are the same up to rounding. Sources: the Hugging
Face Transformers documentation, "Padding and truncation" and the course's "Dynamic padding" section; the
PyTorch Performance Tuning Guide (a GPU's work is proportional to the tensors' shapes: keep them no larger
than the data).

Stage ``step`` (one ``kprof.range`` per step): 64 sequences, lengths drawn uniformly from [32, 128] (a fixed
pool of 8 batches, the same in both variants), 1024-wide features on the GPU, 4 encoder layers (QKV and
output projections, scaled_dot_product_attention with a boolean key-padding mask, a 4096-wide GELU MLP,
residuals and LayerNorms), bf16 autocast, the masked mean of the last layer against a target (MSE),
backward, a foreach SGD step. The model (per step, the good variant's 64 x 128 = 8,192 tokens): ~6 x 12.6 M
parameters x 4 layers x tokens ~2.5e12 FLOPs on the tensor cores.

Per design (H100 SXM): good ~5-7 ms a step (GEMMs and attention on 8,192 tokens); bad the same layers on
64 x 512 = 32,768 tokens (4x the GEMM work, 16x the attention's): ~4x. The bad variant's extra time is
tensor-core work on padding (cause "move_work": the same result by more work than it needs, resource
"tensor").

Revised after the first call's quick check (nothing of it recorded): 32 sequences of 32-160 tokens padded
to the batch's exact longest length there: 1.47x (bad 14.8 ms, good 10.1 ms a step; the good variant's
eight odd lengths, each a new shape, made its first round 169 ms a step). Now 64 sequences of 32-128 tokens
and the fix pads to a multiple of 64 (one shape, 128, for the pool); the planted padding and the cause are
unchanged.

    python pad_to_max_length.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, WIDTH, HEADS, LAYERS, MAX_LEN, POOL, MULTIPLE = 64, 1024, 16, 4, 512, 8, 64


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's loss), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, w, heads, max_len, lo, hi = (BATCH, WIDTH, HEADS, MAX_LEN, 32, 128) if cuda else (4, 64, 4, 48, 4, 16)
    g = torch.Generator().manual_seed(0)

    def lin(i, o):
        return (torch.randn(o, i, generator=g) / i**0.5).to(dev).requires_grad_()

    layers = [
        {"qkv": lin(w, 3 * w), "o": lin(w, w), "up": lin(w, 4 * w), "down": lin(4 * w, w)}
        for _ in range(LAYERS)
    ]
    params = [t for layer in layers for t in layer.values()]
    feats = [torch.randn(b, max_len, w, generator=g).to(dev) for _ in range(POOL)]
    targets = [torch.randn(b, w, generator=g).to(dev) for _ in range(POOL)]
    lengths = [torch.randint(lo, hi + 1, (b,), generator=g) for _ in range(POOL)]
    lengths_dev = [t.to(dev) for t in lengths]
    # The planted switch: every batch padded to the dataset's maximum, or to its own longest sequence rounded
    # up to a multiple of 64 (pad_to_multiple_of: tensor-core-friendly shapes, and few distinct ones).
    mult = MULTIPLE if cuda else 8
    pad_to = [max_len if variant == "bad" else -(-int(t.max()) // mult) * mult for t in lengths]
    kept: list = []
    state = {"i": 0}

    def encoder(h, keep):
        bb, seq, _ = h.shape
        mask = keep[:, None, None, :]  # [B, 1, 1, L]: keys that are real tokens
        for layer in layers:
            q, k, v = F.linear(h, layer["qkv"]).view(bb, seq, 3, heads, w // heads).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            h = F.layer_norm(h + F.linear(a.transpose(1, 2).reshape(bb, seq, w), layer["o"]), (w,))
            h = F.layer_norm(h + F.linear(F.gelu(F.linear(h, layer["up"])), layer["down"]), (w,))
        return h

    def loop(steps: int) -> None:
        for _ in range(steps):
            k = state["i"] % POOL
            state["i"] += 1
            with kprof.range("step"):
                seq = pad_to[k]
                x = feats[k][:, :seq]
                keep = torch.arange(seq, device=dev)[None, :] < lengths_dev[k][:, None]
                with torch.autocast(dev, dtype=torch.bfloat16, enabled=cuda):
                    h = encoder(x, keep)
                m = keep[:, :, None].float()
                pooled = (h.float() * m).sum(1) / m.sum(1)
                loss = F.mse_loss(pooled, targets[k])
                loss.backward()
                with torch.no_grad():
                    torch._foreach_add_(params, [p.grad for p in params], alpha=-1e-3)
                    for p in params:
                        p.grad = None
                kept.append(loss.detach())

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()

"""Greedy decoding without a key/value cache: every new token is produced by running the whole sequence so
far (the prompt and the tokens generated until then) through the model again, as a generation loop written from
the training forward does (``use_cache=False`` in Hugging Face ``generate``, or a hand-written loop calling
``model(tokens)`` on the growing sequence): each new token costs a full prefill over ~T tokens where one
token's forward against the cached keys and values of the earlier positions gives the same logits. Nothing
fails and the tokens are the same. The fix: a prefill that fills a preallocated cache of every layer's keys
and values, then one-token forwards that write their key and value into the cache and attend over the filled
prefix. Sources: Pope et al., "Efficiently Scaling Transformer Inference" (MLSys 2023: the KV cache and the
prefill / decode split); the Hugging Face Transformers documentation "Caching" / "KV cache strategies"
(``use_cache``); Vaswani et al. 2017 (causal self-attention: earlier positions do not depend on later ones,
so their keys and values do not change as the sequence grows).

Stage ``step`` (one ``kprof.range`` per step): 16 tokens generated greedily for a batch of 4 prompts of 512
tokens by a 4-layer pre-LayerNorm decoder (width 2048, 16 heads of 128, MLP 4x with GELU, learned positions,
vocabulary 8192, bf16, ``torch.inference_mode``; attention by ``scaled_dot_product_attention``); the logits
taken at the last position only in both variants; the generated tokens kept (on the GPU). Bad: each of the 16
tokens from a forward over the whole sequence (512 ... 527 positions). Good: one prefill over the 512 prompt
positions into a [4, 16, 528, 128] cache per layer for keys and for values, then 15 one-token forwards.

Model (the needed work, the good variant's): FLOPs ~2 x 218 M parameters x 4 x 512 prompt positions (prefill)
plus the decode tokens and attention: ~8.4e11 (tensor cores, bf16); bytes: the weights (436 MB) read by the
prefill and each of the 15 one-token forwards, ~7.5e9.

Per design (H100/H200): the bad step ~16 forwards of ~0.9 TFLOP, ~25-35 ms; the good step a prefill (~1.5-2 ms)
and 15 one-token forwards (~70 small kernels each, launch-bound, ~0.3-0.5 ms): ~7-9 ms: ~3-4x. The extra time is
the prompt's positions recomputed for every token on the tensor cores (cause "move_work": a full algorithm where
a cheaper one gives the same result), resource "tensor".

    python decode_no_cache.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, PROMPT, NEW, WIDTH, HEADS, LAYERS, VOCAB = 4, 512, 16, 2048, 16, 4, 8192


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's generated tokens), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    b, t0, new, d, nh, nl, vocab = (
        (BATCH, PROMPT, NEW, WIDTH, HEADS, LAYERS, VOCAB) if cuda else (2, 8, 4, 32, 2, 2, 64)
    )
    hd = d // nh
    g = torch.Generator().manual_seed(0)

    def w(*shape, std=None):
        return (torch.randn(*shape, generator=g) * (std if std is not None else shape[-1] ** -0.5)).to(
            dev, dt
        )

    emb, pos = w(vocab, d, std=1.0), w(t0 + new, d, std=0.1)
    layers = [
        {"qkv": w(3 * d, d), "o": w(d, d), "fc1": w(4 * d, d), "fc2": w(d, 4 * d, std=(4 * d) ** -0.5)}
        for _ in range(nl)
    ]
    lm = w(vocab, d)
    prompt = torch.randint(0, vocab, (b, t0), generator=g).to(dev)
    caches = [
        (
            torch.empty(b, nh, t0 + new, hd, device=dev, dtype=dt),
            torch.empty(b, nh, t0 + new, hd, device=dev, dtype=dt),
        )
        for _ in range(nl)
    ]
    kept: list = []

    def heads(y):  # [b, t, d] -> [b, nh, t, hd]
        return y.view(y.shape[0], y.shape[1], nh, hd).transpose(1, 2)

    def forward(tokens, start, cache):
        """Hidden state of the last position for ``tokens`` at positions start...; ``cache``: keys and
        values of positions < start are read from it and this call's written into it (None: no cache)."""
        t = tokens.shape[1]
        x = emb[tokens] + pos[start : start + t]
        for lay, kv in zip(layers, caches, strict=True):
            q, k, v = (heads(y) for y in F.linear(F.layer_norm(x, (d,)), lay["qkv"]).chunk(3, dim=-1))
            if cache:
                kv[0][:, :, start : start + t] = k
                kv[1][:, :, start : start + t] = v
                k, v = kv[0][:, :, : start + t], kv[1][:, :, : start + t]
            a = F.scaled_dot_product_attention(q, k, v, is_causal=t > 1)
            x = x + F.linear(a.transpose(1, 2).reshape(x.shape), lay["o"])
            x = x + F.linear(F.gelu(F.linear(F.layer_norm(x, (d,)), lay["fc1"])), lay["fc2"])
        return F.linear(F.layer_norm(x[:, -1], (d,)), lm).argmax(-1, keepdim=True)

    def generate():
        if variant == "bad":
            seq = prompt
            for _ in range(new):
                seq = torch.cat([seq, forward(seq, 0, False)], dim=1)
            return seq[:, t0:]
        out = [forward(prompt, 0, True)]
        for i in range(1, new):
            out.append(forward(out[-1], t0 + i - 1, True))
        return torch.cat(out, dim=1)

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    kept.append(generate())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()

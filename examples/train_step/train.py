"""A small training step with a Triton kernel inside, marked with kprof.range: what
``kprof run`` / ``profile_command`` profiles by range (docs/evidence/h100-commands).

    python examples/train_step/train.py --steps 5
    kprof run --mode annotation -- python examples/train_step/train.py --steps 3

The model is one linear layer (cuBLAS through torch) whose logits go through the Triton row
softmax of the ``softmax`` package (its v2 kernel, the same code and launch configuration that
``kprof profile softmax --version v2`` profiles), then a cross-entropy-like loss; backward is
torch's autograd (the softmax's backward in torch), and an SGD step. Each part is a range.
"""

from __future__ import annotations

import argparse
import os

import torch

import kprof

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # on the CPU, Triton kernels run in its interpreter


class TritonSoftmax(torch.autograd.Function):
    """Forward: the softmax package's v2 Triton kernel; backward: y * (g - sum(g * y))."""

    @staticmethod
    def forward(ctx, x):
        from kernels.softmax.impl import build_v2

        y = torch.empty_like(x)
        plan = build_v2({"x": x, "y": y}, {"M": x.shape[0], "N": x.shape[1]})
        for stage in plan.stages:
            stage.fn()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return y * (g - (g * y).sum(dim=-1, keepdim=True))


def make(tokens: int, dim: int, vocab: int, device: str, dtype: torch.dtype):
    gen = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(tokens, dim, generator=gen, device=device, dtype=torch.float32).to(dtype)
    w = (torch.randn(dim, vocab, generator=gen, device=device, dtype=torch.float32) / dim**0.5).to(dtype)
    target = torch.randint(0, vocab, (tokens,), generator=gen, device=device)
    return x, torch.nn.Parameter(w), target


def step(x, w, target, opt):
    with kprof.range("train_step"):
        with kprof.range("linear"):
            logits = x @ w
        with kprof.range("softmax"):
            probs = TritonSoftmax.apply(logits)
        with kprof.range("loss"):
            loss = -torch.log(probs.gather(1, target[:, None]).float() + 1e-6).mean()
        with kprof.range("backward"):
            loss.backward()
        with kprof.range("optimizer"):
            opt.step()
            opt.zero_grad(set_to_none=True)
    return loss


def main(argv=None) -> float:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=32768)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--vocab", type=int, default=4096)
    a = ap.parse_args(argv)
    cuda = torch.cuda.is_available()
    device, dtype = ("cuda", torch.bfloat16) if cuda else ("cpu", torch.float32)
    x, w, target = make(a.tokens, a.dim, a.vocab, device, dtype)
    opt = torch.optim.SGD([w], lr=0.1)
    for _ in range(a.steps):
        loss = step(x, w, target, opt)
    if cuda:
        torch.cuda.synchronize()
    print(f"loss after {a.steps} steps: {float(loss.detach()):.4f}")
    return float(loss.detach())


if __name__ == "__main__":
    main()

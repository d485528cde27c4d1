"""A pytest test of the training step: what ``kprof run -- python -m pytest ...`` profiles."""

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

from train import TritonSoftmax, make, step  # noqa: E402


def test_triton_softmax_matches_torch_and_training_lowers_the_loss():
    cuda = torch.cuda.is_available()
    device, dtype = ("cuda", torch.bfloat16) if cuda else ("cpu", torch.float32)
    tokens, dim, vocab = (8192, 1024, 4096) if cuda else (64, 32, 128)
    x, w, target = make(tokens, dim, vocab, device, dtype)
    logits = (x @ w).detach()
    got = TritonSoftmax.apply(logits).float()
    want = torch.softmax(logits.float(), dim=-1)
    assert float((got - want).norm() / want.norm()) < (1e-2 if cuda else 1e-5)
    opt = torch.optim.SGD([w], lr=0.1)
    first = float(step(x, w, target, opt))
    for _ in range(3):
        last = float(step(x, w, target, opt))
    assert last < first

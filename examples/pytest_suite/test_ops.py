"""A small test suite with no ranges of its own: ``kprof run -- python -m pytest examples/pytest_suite``
profiles it as one stage per test (kprof adds ``-p kprof.pytest_plugin``)."""

import pytest
import torch

CUDA = torch.cuda.is_available()
DEVICE = "cuda" if CUDA else "cpu"
DTYPE = torch.bfloat16 if CUDA else torch.float32


def test_matmul():
    n = 4096 if CUDA else 64
    a = torch.randn(n, n, device=DEVICE, dtype=DTYPE)
    b = torch.randn(n, n, device=DEVICE, dtype=DTYPE)
    c = a @ b
    assert c.shape == (n, n)


def test_softmax_rows_sum_to_one():
    x = torch.randn(4096 if CUDA else 64, 4096 if CUDA else 64, device=DEVICE)
    s = torch.softmax(x, dim=-1)
    assert torch.allclose(s.sum(-1), torch.ones(s.shape[0], device=DEVICE), atol=1e-4)


@pytest.mark.parametrize("n", [1 << 10, 1 << 24] if CUDA else [1 << 8, 1 << 12])
def test_add(n):
    x = torch.ones(n, device=DEVICE)
    assert float((x + x).sum()) == 2 * n

"""An inference loop that streams batches from a large host-resident dataset (a memory-mapped or preloaded
feature store in ordinary, pageable memory) and, to make each host-to-device copy fast and asynchronous,
page-locks the batch's host memory for the copy and releases it afterwards: ``cudaHostRegister`` before the
copy and ``cudaHostUnregister`` after it (the pattern of Numba's and CuPy's ``with cuda.pinned(array):``
blocks, or of a loader that pins "just what it sends"). Registration walks and locks every page of the
range and maps it for the device, unregistration undoes it: heavyweight CUDA API calls, on the host, every
step, and the release must wait for the copy. The fix registers the dataset's memory once, before the loop
(or copies through a persistent pinned buffer), so each step's copy is a plain asynchronous DMA. Sources: the
CUDA C++ Best Practices Guide, "Pinned Memory" (page-locked memory is a scarce resource and its allocation
heavyweight; cudaHostRegister to pin pre-allocated memory), the CUDA Runtime API documentation of
``cudaHostRegister`` / ``cudaHostUnregister``; Numba's ``cuda.pinned`` and CuPy's ``cupyx`` pinned-memory
documentation; PyTorch's ``torch.cuda.cudart()`` bindings.

Stage ``step`` (one ``kprof.range`` per step): a batch of 16,384 x 1,024 fp32 features (64 MB) from a host
array of 8 batches copied to the GPU (non_blocking), an MLP (two 1024 x 1024 linear layers with GELU, bf16
autocast), the batch's mean output kept. Bad: the batch's host range registered before the copy, the stream
synchronised and the range unregistered after it. Good: the host array registered once in set-up; the
copy alone. The same data and outputs.

Per design (H100 SXM): good ~1.5-3 ms a step (the 64 MB copy at PCIe speed, overlapped with the previous
step's small MLP); bad the same copy plus registering and unregistering 64 MB (16,384 pages) on the host,
several milliseconds: ~3-6x. The extra time is in CUDA API calls in the loop (cause "cuda_api": page
locking; no pipe or device memory level owns it: resource None); the bad variant's wait before the release
is the copy it needs anyway.

    python host_register_per_batch.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, WIDTH, POOL, PAGE = 16384, 1024, 8, 4096


def _page_aligned(n: int) -> torch.Tensor:
    """n fp32 values of pageable host memory starting on a page boundary (registration works on pages)."""
    raw = torch.empty(n + PAGE // 4)
    off = (-raw.data_ptr() % PAGE) // 4
    return raw[off : off + n]


def _ok(err) -> None:
    """A CUDA runtime call's status (torch.cuda.cudart()'s cudaError enum) checked."""
    if int(err) != 0:
        raise RuntimeError(f"CUDA runtime call failed: {err}")


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's mean output), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, w = (BATCH, WIDTH) if cuda else (64, 32)
    g = torch.Generator().manual_seed(0)
    host = _page_aligned(POOL * b * w).view(POOL, b, w)
    host.copy_(torch.randn(POOL, b, w, generator=g))
    nbytes = b * w * 4
    cudart = torch.cuda.cudart() if cuda else None
    if cuda and variant == "good":  # the fix: the whole host array registered once, before the loop
        _ok(cudart.cudaHostRegister(host.data_ptr(), host.numel() * 4, 0))
    w1 = (torch.randn(w, w, generator=g) / w**0.5).to(dev)
    w2 = (torch.randn(w, w, generator=g) / w**0.5).to(dev)
    dev_buf = torch.empty(b, w, device=dev)
    kept: list = []
    state = {"i": 0}

    def loop(steps: int) -> None:
        for _ in range(steps):
            k = state["i"] % POOL
            state["i"] += 1
            with kprof.range("step"):
                src = host[k]
                # The planted switch: the batch's pages locked for this copy and released after it.
                if cuda and variant == "bad":
                    _ok(cudart.cudaHostRegister(src.data_ptr(), nbytes, 0))
                dev_buf.copy_(src, non_blocking=True)
                if cuda and variant == "bad":
                    torch.cuda.current_stream().synchronize()  # the copy must finish before the release
                    _ok(cudart.cudaHostUnregister(src.data_ptr()))
                with torch.autocast(dev, dtype=torch.bfloat16, enabled=cuda):
                    y = F.linear(F.gelu(F.linear(dev_buf, w1)), w2)
                kept.append(y.float().mean())

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()

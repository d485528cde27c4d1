"""Helpers for kernel implementations (imported by kernel code, never by the server)."""

from __future__ import annotations

import statistics
import time


def autotune_bench(fn, quantiles=None, **_):
    """``do_bench`` for ``triton.autotune(do_bench=...)`` that also works on the CPU.

    On a GPU this is ``triton.testing.do_bench`` (CUDA events, L2 flushed). Under the
    Triton interpreter (no GPU) Triton's own autotuner has no driver to time with, so
    each config is timed with the wall clock (median of 3) — enough to pick *a* config
    and exercise the autotuning path; CPU timings say nothing about GPU configs.
    """
    import torch

    if torch.cuda.is_available():
        import triton.testing

        return triton.testing.do_bench(fn, quantiles=quantiles)
    samples = []
    for _ in range(3):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    med = statistics.median(samples)
    if quantiles:
        qs = statistics.quantiles(samples, n=100, method="inclusive") if len(samples) > 1 else [med] * 99
        return [med if q == 0.5 else qs[max(0, min(98, int(round(q * 100)) - 1))] for q in quantiles]
    return med

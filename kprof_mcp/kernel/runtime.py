"""Helpers for kernel implementations (imported by kernel code, never by the server)."""

from __future__ import annotations

import time


def autotune_bench(fn, quantiles=None, **_):
    """``do_bench`` for ``triton.autotune(do_bench=...)`` that also works on the CPU.

    On a GPU this is ``triton.testing.do_bench`` (CUDA events, L2 flushed). Under the
    Triton interpreter (no GPU) Triton's own autotuner has no driver to time with, so
    each config is timed once with the wall clock — enough to pick *a* config and exercise
    the autotuning path; CPU timings say nothing about GPU configs, so more runs would only
    lengthen a first profile on the CPU (each config's quantiles are that one time).
    """
    import torch

    if torch.cuda.is_available():
        import triton.testing

        return triton.testing.do_bench(fn, quantiles=quantiles)
    t0 = time.perf_counter()
    fn()
    ms = (time.perf_counter() - t0) * 1e3
    return [ms] * len(quantiles) if quantiles else ms

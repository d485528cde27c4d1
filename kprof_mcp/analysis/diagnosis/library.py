"""A vendor-library GEMM far under its roof on a timeline (no counters): the what-if that gives it the model's
work at the rate one library GEMM of those FLOPs attains (moved out of :mod:`.catalogue`, which re-exports it)."""

from __future__ import annotations

from ... import machines
from .metrics import _DRAM_ATTAINABLE_PCT, Metrics

# Gates for a vendor-library GEMM far under its roof (timelines, no counters): launches long enough that a
# GEMM's ramp and tail are a small part of them, and the GEMMs taking at least twice the stage's modelled
# work at the attainable rate (under half of it: far below what the library reaches on shapes it handles).
LIBRARY_MIN_LAUNCH_NS = 10_000.0
LIBRARY_SLOW = 2.0


def library_gemm_excess(m: Metrics) -> tuple[float, float] | None:
    """What-if for a stage modelled on tensor cores whose time goes to vendor-library GEMM kernels (cuBLAS,
    CUTLASS: :data:`~kprof_mcp.analysis.machine_inputs.LIBRARY_GEMM_WORDS`) running far below the rate the
    library reaches: no counters (a timeline), launches of at least :data:`LIBRARY_MIN_LAUNCH_NS` on
    average, and the GEMMs' time r ≥ :data:`LIBRARY_SLOW` times the stage's modelled work at the attainable
    rate (95 % of the tensor peak, 90 % of DRAM). A library picks a near-roof kernel for a shape it handles,
    so the time above it is work the model does not count (rows or positions computed and thrown away,
    padding) or a shape it handles badly (a dimension not a multiple of 8, an unaligned operand), or the
    library's slower method for the op (a fallback: im2col and a GEMM per sample where cuDNN runs one implicit
    GEMM). Fixed, the GEMMs run the model's work at the rate one library GEMM of its FLOPs attains on this
    device (measured: :func:`kprof_mcp.machines.library_gemm_rate`; the fix's GEMM count is not known, and one
    GEMM of all the work is the fastest it can be; else 95 % of the tensor peak), never under the model's
    bytes at the attainable bandwidth, and the other kernels keep their time up to those bytes (T_bytes: all
    the stage's modelled traffic, an upper bound of theirs); their time beyond it is the same method's (the
    fallback's unfolding kernels) and goes — but not below their own rate on the work that stays: the GEMMs
    did w = T_gemm · rate(F) / F times the model's work, rows the other kernels process too (a batch padded
    to its longest sequence: the softmax and norms run on the padding as the GEMMs do), so they keep
    T_o / w where that is more (2026-11-29: the padded encoder's +686 % → +370 % for +286 % measured; the
    roof on the model's bytes had them 7x faster than the fix's own):

        T'_k = max(F / rate(F), T_bytes) + min(T_o, max(T_bytes, T_o / w)),   T_o = T_k − T_gemm

    → (kernel-time share 1 − T'_k/T_k, r). None when it does not apply."""
    if m.accounting is not None and m.accounting.measured:
        return None
    if not m.tensor_work or m.library_gemm is None or not m.attainable_sol_ns or not m.time_ns:
        return None
    share, per_launch = m.library_gemm
    if per_launch < LIBRARY_MIN_LAUNCH_NS:
        return None
    kernels = m.time_ns * m.kernel_busy
    gemm = share * kernels
    r = gemm / m.attainable_sol_ns
    if r < LIBRARY_SLOW:
        return None
    bps = (m.dram_peak_bps or 0.0) * _DRAM_ATTAINABLE_PCT / 100.0
    others = kernels - gemm
    t_bytes = 1e9 * (m.bytes_model or 0.0) / bps if bps else 0.0
    kept = min(others, t_bytes) if bps else others
    mach = m.machine
    rate = (
        machines.library_gemm_rate(mach.device_key, mach.arch, m.dtype or "", m.flops)
        if mach and m.flops
        else None
    )
    needed = max(1e9 * m.flops / rate, t_bytes) if rate else m.attainable_sol_ns
    if rate and bps:
        # The GEMMs' work over the model's (at the library's rate, w = T_gemm·rate / F) is rows the stage's
        # other kernels process too (padding, positions thrown away): they keep their own rate on the work
        # that stays, others / w, where that is more than the model's bytes take at the roof.
        w = 1e-9 * gemm * rate / m.flops
        if w > 1.0:
            kept = max(kept, min(others, others / w))
    return max(0.0, 1.0 - (needed + kept) / kernels), r

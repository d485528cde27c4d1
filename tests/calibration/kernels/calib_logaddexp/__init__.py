"""Calibration pair (fourteenth held-back set) — a log-sum-exp accumulated with a log and two exponentials
per term: the log-density of a Gaussian kernel density estimate (the log-domain sums of KDE, Sinkhorn's
log-domain iterations, mean-shift and RBF kernel sums), out[i] = log sum_j exp(s_ij) with
s_ij = -|x_i - y_j|^2 / (2 h^2), written the way a log-space accumulator is ported from ``torch.logaddexp``
or NumPy's ``np.logaddexp.reduce``: acc = log(exp(acc) + exp(s)) for every term. Each term costs two exponentials (the special-function unit's ex2) and a logarithm (libdevice's logf, an FP32
polynomial): some 38 instructions a term where the sum itself needs one exponential. The fix keeps the sum in the linear domain with the largest
possible score (0: a squared distance is never negative) as the stabilising shift, one exponential a term
and a single logarithm a query at the end: the log-sum-exp trick / online normaliser. Sources: Milakov &
Gimelshein, "Online normalizer calculation for softmax" (NVIDIA, 2018: one exponential a term, the shift by
the maximum); the log-sum-exp trick (e.g. Blanchard, Higham & Higham, "Accurately computing the log-sum-exp
and softmax functions", IMA J. Numer. Anal. 2021); KeOps' LogSumExp reduction; NVIDIA's CUDA C++
Programming Guide, arithmetic instruction throughput (32-bit floating-point reciprocal, reciprocal square
root, base-2 logarithm, base-2 exponential, sine, cosine: 16 a clock per SM).

The work: N = 32768 query points and M = 32768 sample points in the unit square (fp32; fp16 allowed), h =
1 / inv_h = 0.25: every score is in [-16, 0], so exp(s) neither overflows nor underflows and the linear-domain sum (at
most M) is exact to fp32 rounding. One program per BLOCK_M = 64 queries, BLOCK_N = 128 samples a step, 4
warps (N / 64 = 512 programs).

Planted problem (v0): acc (a [BLOCK_M, BLOCK_N] tile of per-lane running log-sums, -inf at the start)
updated per term as acc = log(exp(acc) + exp(s)); at the end out = log(sum(exp(acc), axis=1)). Two
exponentials (MUFU ex2) and a logarithm a term: Triton lowers tl.log to libdevice's logf, an FP32
polynomial with its range reduction (12 fma.rn.ftz, multiplies, adds, selects and an int-to-float
conversion in the PTX: ~38 instructions a term with the scores, checked with Triton 3.9's PTX for sm_90
before any GPU run).
Fix (v1): acc += exp(s) (one ex2 a term, ~9 instructions); out = log(sum(acc, axis=1)) (one log a query).

Model: x and y read once (2 coordinates each), out written once: bytes (N + M) * 2 * itemsize + 4 N;
FLOPs 6 N M (two differences, two FMAs, the scale and the sum a pair; the transcendental counted as one).

Expected on an H100 SXM (per design): v1 ~9 issue slots and one MUFU a pair: ~0.1-0.15 ms for 1.07e9
pairs; v0 ~38 issue slots a pair (the FP32 pipe ~28 of them, the XU 3): issue-bound, ~0.4-0.6 ms: ~3-4x.
Cause "move_work" (the same sum by a costlier method: log-domain accumulation where a linear sum shifted by
the known bound is exact), resource "issue" (the logf polynomial, the exponentials and their selects fill
the issue slots: no single pipe owns the time; "fma" is the other reading, the FP32 pipe doing ~3/4 of it).
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    dt = getattr(torch, p["dtype"])
    return {
        "x": torch.rand(p["N"], 2, generator=g).to(device=device, dtype=dt),
        "y": torch.rand(p["M"], 2, generator=g).to(device=device, dtype=dt),
        # Poisoned output: a version that does not write fails the check.
        "out": torch.full((p["N"],), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    import torch

    x, y = inputs["x"].double(), inputs["y"].double()
    out = torch.empty(x.shape[0], dtype=torch.float64, device=x.device)
    for i in range(0, x.shape[0], 2048):  # a chunk of queries at a time: [2048, M] scores
        d2 = ((x[i : i + 2048, None, :] - y[None, :, :]) ** 2).sum(-1)
        out[i : i + 2048] = torch.logsumexp(-d2 * p["inv_h"] ** 2 / 2, dim=1)
    return out.float()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float((p["N"] + p["M"]) * 2 * p.itemsize + 4 * p["N"])


_STAGE = StageModel("kde_logsumexp", flops=lambda p: 6.0 * p["N"] * p["M"], bytes=_bytes)

KERNEL = KernelPackage(
    name="calib_logaddexp",
    description="Calibration (held back, set 14; planted: a log-sum-exp accumulated with a log and two "
    "exponentials per term): log-density of a Gaussian KDE, 32768 queries x 32768 samples in 2-D; v0 "
    "acc = log(exp(acc) + exp(s)) a term, v1 a linear sum shifted by the bound 0 and one log a query",
    params=(
        Param("N", 32768, min=1, max=1 << 22, doc="query points"),
        Param("M", 32768, min=1, max=1 << 22, doc="sample points"),
        Param("inv_h", 4, min=1, max=20, doc="1 / bandwidth (scores in [-inv_h^2, 0] for the unit square)"),
        Param("dtype", "float32", choices=("float32", "float16"), doc="coordinates dtype (out is float32)"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version("v0", "planted: acc = log(exp(acc) + exp(s)) per term", (_STAGE,), _build("v0")),
        Version("v1", "fix: sum of exp(s) (bound 0 as the shift), one log a query", (_STAGE,), _build("v1")),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-5,
)

"""Calibration pair (thirty-ninth held-back set) — the forward algorithm of a hidden Markov model (the
log-likelihood of many observation sequences) run in the log domain, every transition term through an
exponential (log-sum-exp over the predecessor states of each state at every step: S^2 exponentials a step),
where Rabiner's scaled forward recursion serves (probabilities, S^2 multiply-adds a step and one normalisation,
its logarithm summed into the log-likelihood). Sources: L. R. Rabiner, "A Tutorial on Hidden Markov Models and
Selected Applications in Speech Recognition" (Proc. IEEE 77, 1989), section V.A (scaling: the forward variables
normalised at every step, log P = sum of the logs of the scale factors); T. P. Mann, "Numerically Stable Hidden
Markov Model Implementation" (2006: the log-domain alternative, elnsum a term); the CUDA C++ Programming Guide,
arithmetic instruction throughput table (32-bit exp2 / log2 on the special-function units at 16 results a clock
an SM against 128 for FP32 FMA).

The work: ll [NS] fp32 = log P(o_1..o_T) of NS sequences of T observations (V = 16 symbols, time-major int32
[T, NS]) under one model of S = 16 states (pi [S], A [S, S], B [V, S] given both as probabilities and as their
logarithms), the same in both versions to fp32 rounding.

Planted problem (v0): stage "hmm_forward_log": a program a block of 32 sequences, alpha in the log domain
[32, S]; each step m = max over i of alpha_i, alpha'_j = m + log sum_i exp(alpha_i - m + log A_ij) + log
B[o_t, j]: a [32, S, S] tile of exponentials (256 a sequence a step) and 16 logarithms.
Fix (v1): stage "hmm_forward_scaled": the same block and tile, alpha in probabilities: alpha'_j = (sum_i alpha_i
A_ij) B[o_t, j], c = sum_j alpha'_j, alpha' /= c, ll += log c: 256 multiply-adds and one logarithm a sequence a
step.

Model (the needed work, for both): the scaled recursion's FLOPs 2 NS T S^2 (a multiply and an add a transition
term; the normalisation's O(S) ignored); bytes the observations read (4 NS T) and ll written (4 NS) (the model's
parameters, ~2 KB, read from L1/L2).

Expected on an H100/H200 (per design): NS = 32768, T = 128, S = 16: v0 1.07e9 exponentials (MUFU.EX2, 16 a
clock an SM: ~4.2e12 a second): ~0.25-0.3 ms; v1 ~2.1e9 FP32 operations: ~60-90 us: ~3-4x. Cause "move_work"
(the needed log-likelihoods by a costlier method: an exponential a transition term); resource "xu" (the
exponentials on the special-function units).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

S, V = 16, 16


def _inputs(p, device):
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    ns, t = p["NS"], p["T"]
    pi = torch.softmax(torch.randn(S, generator=g, dtype=torch.float64), 0)
    a = torch.softmax(1.5 * torch.randn(S, S, generator=g, dtype=torch.float64), 1)  # rows: from state i
    b = torch.softmax(1.5 * torch.randn(S, V, generator=g, dtype=torch.float64), 1).T.contiguous()  # [V, S]
    obs = torch.randint(0, V, (t, ns), generator=g, dtype=torch.int32)
    return {
        "obs": obs.to(device),
        "pi": pi.float().to(device),
        "A": a.float().to(device),
        "B": b.float().to(device),
        "log_pi": pi.log().float().to(device),
        "log_A": a.log().float().to(device),
        "log_B": b.log().float().to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((ns,), float("nan"), device=device, dtype=torch.float32),
    }


def _reference(inputs, p):
    obs = inputs["obs"].long().cpu()
    pi, a, b = (inputs[k].double().cpu() for k in ("pi", "A", "B"))
    alpha = pi[None, :] * b[obs[0]]
    c = alpha.sum(1)
    ll = c.log()
    alpha = alpha / c[:, None]
    for t in range(1, p["T"]):
        alpha = (alpha @ a) * b[obs[t]]
        c = alpha.sum(1)
        ll = ll + c.log()
        alpha = alpha / c[:, None]
    return ll.float().to(inputs["obs"].device)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _flops(p):
    return 2.0 * p["NS"] * p["T"] * S * S


def _bytes(p):
    return 4.0 * p["NS"] * p["T"] + 4.0 * p["NS"]


KERNEL = KernelPackage(
    name="calib_hmm_logspace",
    description="Calibration (held back, set 39; planted: an HMM forward pass in the log domain, an exponential "
    "a transition term, where Rabiner's scaled forward serves): 32768 sequences of 128 steps, 16 states; v0 "
    "log-sum-exp a state a step, v1 the scaled recursion",
    params=(
        Param("NS", 32768, min=1, max=1 << 22, doc="sequences"),
        Param("T", 128, min=1, max=4096, doc="observations a sequence"),
        DTYPE_PARAM("float32", choices=("float32",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: the log-domain forward, S^2 exponentials a sequence a step",
            (StageModel("hmm_forward_log", flops=_flops, bytes=_bytes),),
            _build("v0"),
        ),
        Version(
            "v1",
            "fix: Rabiner's scaled forward, S^2 multiply-adds and one normalisation a step",
            (StageModel("hmm_forward_scaled", flops=_flops, bytes=_bytes),),
            _build("v1"),
        ),
    ),
    memory_bytes=_bytes,
    tolerance=lambda dtype: 1e-4,
)

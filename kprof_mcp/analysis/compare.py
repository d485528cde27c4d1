"""The statistics of an interleaved A/B: the ratio of medians with a bootstrap confidence
interval, and the verdict.

The samples come in rounds: every round timed each version once, back to back, in rotating
order, so slow drift (clocks, temperature, other tenants) moves all versions alike within a
round. The bootstrap is two-stage and paired by round: it resamples rounds (the same ones for
every version: rounds are the independent units, and whatever shifted a round shifted all its
versions), then runs within each chosen round. Resampling runs alone (ignoring rounds) gave
intervals too narrow under drift: 17 of 20 identical pairs "significant" in the fake-timer test.

Pure: numbers in, numbers out (the words are render/compare.py's); tested with a fake timer on the CPU (tests/unit/test_compare.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

DEFAULT_RESAMPLES = 2000


@dataclass(frozen=True)
class Ratio:
    """``version`` against ``baseline``: speed-up = baseline median ÷ version median (> 1: faster),
    its bootstrap interval and the verdict; :func:`kprof_mcp.render.compare.comparison` words it."""

    version: str
    baseline: str
    speedup: float
    ci_low: float
    ci_high: float
    confidence: float
    verdict: str  # 'faster', 'slower' or 'no significant difference'


def _medians(rng, base: Sequence[Sequence[float]], other: Sequence[Sequence[float]], n: int):
    """``n`` bootstrap medians of each side, two-stage: rounds resampled with replacement (the
    same rounds for both sides: they are the independent units, and a round's drift or order
    effect hits both), then runs resampled within each chosen round."""
    import numpy as np

    R = len(base)
    picks = rng.integers(0, R, size=(n, R))

    def boot(rounds):
        arrs = [np.asarray(r, dtype=float) for r in rounds]
        out = np.empty(n)
        if len({len(a) for a in arrs}) == 1:  # the interleaved design: as many runs in every round
            A, k = np.stack(arrs), len(arrs[0])
            step = max(1, 2_000_000 // (R * k))  # bounded memory per chunk
            for s in range(0, n, step):
                p = picks[s : s + step]
                w = A[p[..., None], rng.integers(0, k, size=(len(p), R, k))]
                out[s : s + step] = np.median(w.reshape(len(p), R * k), axis=1)
            return out
        for i in range(n):
            parts = [arrs[j][rng.integers(0, len(arrs[j]), size=len(arrs[j]))] for j in picks[i]]
            out[i] = np.median(np.concatenate(parts))
        return out

    return boot(base), boot(other)


def compare(
    baseline: str,
    base_rounds: Sequence[Sequence[float]],
    version: str,
    rounds: Sequence[Sequence[float]],
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Ratio:
    """``version`` vs ``baseline``: speed-up (baseline median ÷ version median) with a
    stratified-bootstrap ``confidence`` interval; the verdict is 'faster'/'slower' when the
    interval excludes 1, else 'no significant difference'. Numbers only: the sentence is
    :func:`kprof_mcp.render.compare.comparison`'s."""
    import numpy as np

    pairs = [(b, v) for b, v in zip(base_rounds, rounds) if len(b) and len(v)]
    if not pairs:
        raise ValueError("no round holds samples of both versions")
    b_all = np.concatenate([np.asarray(b, float) for b, _ in pairs])
    v_all = np.concatenate([np.asarray(v, float) for _, v in pairs])
    speedup = float(np.median(b_all) / np.median(v_all))
    rng = np.random.default_rng(seed)
    mb, mv = _medians(rng, [b for b, _ in pairs], [v for _, v in pairs], resamples)
    ratios = mb / mv
    alpha = (1.0 - confidence) / 2.0
    lo, hi = (float(x) for x in np.quantile(ratios, [alpha, 1.0 - alpha]))
    verdict = "faster" if lo > 1.0 else "slower" if hi < 1.0 else "no significant difference"
    return Ratio(
        version=version,
        baseline=baseline,
        speedup=speedup,
        ci_low=lo,
        ci_high=hi,
        confidence=confidence,
        verdict=verdict,
    )


def rotation(versions: Sequence[str], round_index: int) -> list[str]:
    """The order versions are timed in a round: rotated by one each round, so none is always
    first (after another version's work) or last."""
    k = round_index % len(versions)
    return list(versions[k:]) + list(versions[:k])

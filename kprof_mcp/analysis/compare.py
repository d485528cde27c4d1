"""The statistics of an interleaved A/B: the ratio of medians with a bootstrap confidence
interval, and the verdict.

The samples come in rounds: every round timed each version once, back to back, in rotating
order, so slow drift (clocks, temperature, other tenants) moves all versions alike within a
round. The bootstrap is two-stage and paired by round: it resamples rounds (the same ones for
every version: rounds are the independent units, and whatever shifted a round shifted all its
versions), then runs within each chosen round. Resampling runs alone (ignoring rounds) gave
intervals too narrow under drift: 17 of 20 identical pairs "significant" in the fake-timer test.

Pure: numbers in, numbers out; tested with a fake timer on the CPU (tests/unit/test_compare.py).
"""

from __future__ import annotations

from typing import Sequence

from ..models import Comparison, CounterRow, ProfileResult

DEFAULT_RESAMPLES = 2000


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
) -> Comparison:
    """``version`` vs ``baseline``: speed-up (baseline median ÷ version median) with a
    stratified-bootstrap ``confidence`` interval; the verdict is 'faster'/'slower' when the
    interval excludes 1, else 'no significant difference'."""
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
    pct = f"{100 * confidence:.0f} % CI {lo:.3f}–{hi:.3f}"
    if lo > 1.0:
        verdict, sentence = "faster", f"{version} is {speedup:.3f}× faster than {baseline} ({pct})"
    elif hi < 1.0:
        # The slow-down and its interval in the same unit (1/ratio reverses the bounds).
        verdict, sentence = (
            "slower",
            (
                f"{version} is {1 / speedup:.3f}× slower than {baseline} "
                f"({100 * confidence:.0f} % CI {1 / hi:.3f}–{1 / lo:.3f}× slower)"
            ),
        )
    else:
        verdict, sentence = (
            "no significant difference",
            f"no significant difference between {version} and {baseline} (speed-up {speedup:.3f}, {pct})",
        )
    return Comparison(
        version=version,
        baseline=baseline,
        speedup=speedup,
        ci_low=lo,
        ci_high=hi,
        confidence=confidence,
        verdict=verdict,
        sentence=sentence,
    )


def rotation(versions: Sequence[str], round_index: int) -> list[str]:
    """The order versions are timed in a round: rotated by one each round, so none is always
    first (after another version's work) or last."""
    k = round_index % len(versions)
    return list(versions[k:]) + list(versions[:k])


# (StageResult field or derived key, label, kind) — kind: "pct" changes in points, "ratio" as a
# factor, "text" as same/changed. In the order a kernel engineer reads a Nsight Compute page.
COUNTER_METRICS: tuple[tuple[str, str, str], ...] = (
    ("duration_us", "duration (us, ncu)", "ratio"),
    ("sm_clock_mhz", "SM clock (MHz)", "ratio"),
    ("tc_pct", "tensor pipe (% of peak)", "pct"),
    ("sm_pct", "SM throughput (% of peak)", "pct"),
    ("dram_pct", "DRAM throughput (% of peak)", "pct"),
    ("l2_hit_pct", "L2 hit rate (%)", "pct"),
    ("occupancy_pct", "achieved occupancy (%)", "pct"),
    ("theoretical_occupancy_pct", "theoretical occupancy (%)", "pct"),
    ("registers_per_thread", "registers/thread", "ratio"),
    ("shared_kib", "shared memory/block (KiB)", "ratio"),
    ("measured_waves_per_sm", "waves/SM", "ratio"),
    ("dram_mb", "DRAM bytes (MB)", "ratio"),
    ("over_fetch_ratio", "DRAM bytes ÷ model bytes", "ratio"),
    ("spill_mb", "local (spill) bytes (MB)", "ratio"),
    ("bottleneck", "bottleneck", "text"),
    ("top_opportunity", "top opportunity", "text"),
    ("top_gain_pct", "its estimated gain in the stage (%)", "pct"),
)


def _stage_values(result: ProfileResult) -> dict[str, dict[str, float | str | None]]:
    """Per stage name, every COUNTER_METRICS value of one profile (None: not measured)."""
    from .assessment import assess

    a = assess(result)
    out: dict[str, dict[str, float | str | None]] = {}
    for sa in a.stages:
        s = sa.stage
        mb = lambda v: None if v is None else v / 1e6
        top = next((o for o in a.opportunities if o.stage == s.name), None)
        out[s.name] = {
            "duration_us": s.timing.median_ns / 1e3,
            "sm_clock_mhz": None if s.sm_clock_hz is None else s.sm_clock_hz / 1e6,
            "tc_pct": s.tc_pct,
            "sm_pct": s.sm_pct,
            "dram_pct": s.dram_pct,
            "l2_hit_pct": s.l2_hit_pct,
            "occupancy_pct": s.occupancy_pct,
            "theoretical_occupancy_pct": s.theoretical_occupancy_pct,
            "registers_per_thread": s.registers_per_thread,
            "shared_kib": None
            if s.shared_mem_per_block_bytes is None
            else s.shared_mem_per_block_bytes / 1024,
            "measured_waves_per_sm": s.measured_waves_per_sm,
            "dram_mb": mb(s.dram_bytes),
            "over_fetch_ratio": s.over_fetch_ratio,
            "spill_mb": mb(s.measured_local_bytes),
            "bottleneck": sa.diagnosis.bottleneck if sa.diagnosis else None,
            "top_opportunity": top.name if top else "none",
            "top_gain_pct": top.stage_gain_pct if top else None,
        }
    return out


def _change(kind: str, base: float | str | None, value: float | str | None) -> str | None:
    if base is None or value is None:
        return None
    if kind == "text":
        return "same" if base == value else "changed"
    if kind == "pct":
        return f"{value - base:+.1f} pts"
    if base == 0:
        return "same" if value == 0 else f"+{value:.3g}"
    return f"×{value / base:.2f}"


def counter_table(results: Sequence[ProfileResult]) -> list[CounterRow]:
    """The counters of each profile side by side, stage by stage (stages matched by name, in
    the order they first appear), with each one's change against the first. Rows where no
    profile measured the metric are left out."""
    per = [_stage_values(r) for r in results]
    stages: list[str] = []
    for p in per:
        stages += [n for n in p if n not in stages]
    rows: list[CounterRow] = []
    for st in stages:
        for key, label, kind in COUNTER_METRICS:
            vals = [p.get(st, {}).get(key) for p in per]
            if all(v is None for v in vals):
                continue
            rows.append(
                CounterRow(
                    stage=st,
                    metric=key,
                    label=label,
                    values=vals,
                    changes=[None] + [_change(kind, vals[0], v) for v in vals[1:]],
                )
            )
    return rows

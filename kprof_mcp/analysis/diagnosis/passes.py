"""A plan whose stages read the same data from DRAM again (issue 36; the fourteenth held-back set's
two-pass variance: a mean pass, then a squared-deviation pass over the same 1 GB, each stage at 91 % of
DRAM with a model of its own, so no stage's what-if saw the second read).

**What is measured.** The version's data: the bytes of the distinct storages of the tensors the
package made (inputs, outputs, scratch) and of the device memory its version's build allocated (a split
kernel's partials): ``ProfileResult.data_bytes``, D. Each stage's DRAM read
bytes from Nsight Compute, R_s. Reading each byte of the data once is the least reading the plan
needs; a stage's reads beyond D are its own over-fetch (its stage what-ifs own them), so the plan
re-reads across stages where

    S = Σ_s min(R_s, D) > OVER_FETCH_HEALTHY · D,

and E = S − D bytes are read again. An intermediate one stage writes and the next reads is read once
(it is in D: the package or the build made it; a temporary a stage allocates while it runs is not, and
shows as a re-read: fusing those stages removes that round trip as well).

**Written again** (2026-11-27, after the fifteenth held-back set's first judgement: an output filled
with zeros by one stage and every element overwritten by the next). The same test on each stage's DRAM
write bytes W_s = its DRAM bytes − R_s: writing each byte of the data once is the most a plan needs, so
where Σ_s min(W_s, D) > ``OVER_FETCH_HEALTHY`` · D the excess was written again (dead stores: a fill or
initialisation a later stage overwrites, or the same output written by two passes). Reads and writes
are tested apart (an in-place update reads and writes the same bytes once each: neither passes D).

**A workspace's round trip** (2026-11-27, the fifteenth set's needless split-K). Of the data, the scratch
``ProfileResult.scratch_bytes``, P: the build's buffers and the package's inputs the reference does not read
(``capture.context.ReadKeys``) nor the output shares. Where the stages before the last wrote at least P/2 and
the stages after the first read at least P/2, the scratch went to DRAM and back: X_w = min(P, their writes),
X_r = min(P, their reads), each shared by the writers' writes and the readers' reads, removed with the excesses
below (each stage's removal capped at its bytes), the floor the inputs and outputs (D − P) moved once; where the
round trip is the larger part it names the fix (``move="scratch"``).

**An input the result does not need** (2026-11-28, the nineteenth held-back set's crop gathered through a
materialised index). Scratch no stage writes back and forth but the stages read: their reads pass the rest of
the data (D − P, what the reference needs) by more than ``OVER_FETCH_HEALTHY`` × — they read the scratch, a gate.
The package's reference computes the same output without it (an index, a mask or a table derivable from the
position or from the data), so its reads, X_r = min(P, the stages' reads), shared in proportion to their reads,
are bytes the result does not need: removed as a round trip's are (``move="unused_input"``).

**What-if.** Fused (one pass, or the data kept on chip between the passes), the plan reads its data
once: each stage loses its share of E in proportion to its reads, e_s = E · min(R_s, D) / S (and of the
written excess in proportion to its writes, w_s), so its DRAM use scales by keep_s = 1 − (e_s + w_s) / B_s
(B_s its DRAM read+write bytes), the levels the loads cross on their way (L2, its slices, L1, the LSU
pipe: ``LOAD_PATH``) by 1 − e_s / R_s − w_s / B_s (the reads removed take their traffic with them, the
stores removed their share of the stage's), and

    T'_s / T_s = max(1 − u_dram,s · (1 − keep_s), the largest use after the change),

every other resource's use kept (the arithmetic stays: a fused pass does both passes' work). The plan's time is the stages' sum (a pipeline:
one stage after another on one stream); T' = Σ T'_s, never under the data read once at the
attainable DRAM rate: gain = T / T' − 1, a whole-plan opportunity.

**Without counters** (event mode) the stages' FLOP/byte models stand in: their bytes (reads and writes, so
an intermediate written by one stage and read back by the next counts too: fusing removes that round trip),
each stage losing its share e_s at the attainable DRAM rate, T'_s = max(T_s − e_s / (0.9 · peak), the
stage's remaining model at the FLOP and byte roofs); labelled as the models'.

Pure: numbers in, numbers out. None unless the result has its data's bytes, the plan is a pipeline of
stages with kernel time and either every stage has its DRAM read bytes (Nsight Compute, annotation or
ncu mode) or none has counters and every one a byte model.
"""

from __future__ import annotations

from .limiter import ATTAINABLE, limiter
from .metrics import OVER_FETCH_HEALTHY, Facts, Opportunity, gain_pct

# The levels and pipe a load from DRAM crosses on its way (its sectors through L2 and its slices, its
# requests through L1 and the LSU pipe): a read removed takes its share of their traffic with it.
LOAD_PATH = ("l2", "l2_slice", "l1", "lsu")


def reread_across_stages(result, stages) -> Opportunity | None:
    """``result``: the ProfileResult; ``stages``: its StageAssessments (their metrics and limiters)."""
    D = result.data_bytes
    if not D or result.plan_kind != "pipeline" or len(stages) < (1 if result.scratch_bytes else 2):
        return None
    if any(sa.metrics is None or not sa.metrics.time_ns for sa in stages):
        return None
    if all(sa.stage.dram_read_bytes is not None and sa.stage.dram_bytes for sa in stages):
        return _counted(D, stages, result.scratch_bytes or 0.0)
    if not any(sa.stage.counters_measured for sa in stages):
        return _modelled(D, stages, result.scratch_bytes or 0.0)
    return None


def _excess(D: float, per_stage: list[float]) -> tuple[float, float]:
    """(S, E): the stages' bytes each capped at the data, and what passes it (0 while S is within
    ``OVER_FETCH_HEALTHY`` x D)."""
    S = sum(min(b, D) for b in per_stage)
    return S, (S - D if S > OVER_FETCH_HEALTHY * D else 0.0)


def _round_trip(P: float, reads: list[float], writes: list[float]) -> tuple[list[float], list[float]]:
    """The scratch's round trip, per stage: (reads removed, writes removed). The build's scratch (P bytes)
    is written by the stages before the last and read back by the stages after the first: X_w =
    min(P, their writes), X_r = min(P, their reads), shared among them in proportion to their bytes. Both
    must be at least half of P (the scratch went to DRAM and came back, not kept in the L2); else none."""
    n = len(reads)
    if P <= 0 or n < 2:
        return [0.0] * n, [0.0] * n
    Wb, Rb = sum(writes[:-1]), sum(reads[1:])
    X_w, X_r = min(P, Wb), min(P, Rb)
    if X_w < 0.5 * P or X_r < 0.5 * P:
        return [0.0] * n, [0.0] * n
    rr = [0.0] + [X_r * r / Rb for r in reads[1:]]
    ww = [X_w * w / Wb for w in writes[:-1]] + [0.0]
    return rr, ww


def _counted(D: float, stages, P: float = 0.0) -> Opportunity | None:
    """With Nsight Compute's read and write bytes (the module's docstring)."""
    reads = [sa.stage.dram_read_bytes for sa in stages]
    writes = [max(0.0, sa.stage.dram_bytes - sa.stage.dram_read_bytes) for sa in stages]
    S_r, E_r = _excess(D, reads)
    S_w, E_w = _excess(D, writes)
    trip_r, trip_w = _round_trip(P, reads, writes)
    unused = not any(trip_r) and not any(trip_w) and sum(reads) > OVER_FETCH_HEALTHY * (D - P) and P > 0
    if unused:  # read, never written and read back: an input the result does not need
        trip_r = [min(P, sum(reads)) * r / sum(reads) for r in reads]
    X = sum(trip_r) + sum(trip_w)
    if not E_r and not E_w and not X:
        return None
    T = sum(sa.metrics.time_ns for sa in stages)
    after, focus, peak = 0.0, [], None
    for i, (sa, R, W) in enumerate(zip(stages, reads, writes)):
        m, B = sa.metrics, sa.stage.dram_bytes
        e_r = min(R, (E_r * min(R, D) / S_r if E_r else 0.0) + trip_r[i])
        e_w = min(W, (E_w * min(W, D) / S_w if E_w else 0.0) + trip_w[i])
        keep = max(0.0, 1.0 - (e_r + e_w) / B)
        # the loads removed take their L2/L1/LSU traffic with them; the stores removed, their share of
        # the stage's DRAM bytes of it (stores cross the same levels)
        path = max(0.0, 1.0 - (e_r / R if R else 0.0) - e_w / B)
        lim = limiter(m)
        uses = {u.key: u.util for u in lim.uses} if lim is not None else {}
        u = uses.get("dram", (m.dram_pct or 0.0) / 100.0)
        rest = max(
            (v * (path if k in LOAD_PATH else 1.0) for k, v in uses.items() if k != "dram"), default=0.0
        )
        after += m.time_ns * max(1.0 - u * (1.0 - keep), rest, u * keep)
        if (
            (E_r and min(R, D) >= (OVER_FETCH_HEALTHY - 1.0) * D)
            or (E_w and min(W, D) >= (OVER_FETCH_HEALTHY - 1.0) * D)
            or trip_r[i] + trip_w[i] >= 0.25 * P > 0
        ):
            focus.append(sa.stage.name)
        peak = peak or sa.stage.peak_bytes_per_s
    if X > E_r + E_w:  # the scratch's round trip is the most of it: the plan needs its inputs and outputs
        io = max(D - P, 1.0)
        return _opportunity(
            io,
            sum(reads) + sum(writes),
            T,
            after,
            peak,
            focus,
            "counters",
            extra=X,
            move="unused_input" if unused else "scratch",
        )
    # the kind that passes the data most names the fix (reads again, or the same bytes written again)
    writes_more = E_w > E_r
    S = S_w if writes_more else S_r
    return _opportunity(
        D, S, T, after, peak, focus, "counters", extra=E_r + E_w, move="rewrites" if writes_more else "passes"
    )


def _modelled(D: float, stages, P: float = 0.0) -> Opportunity | None:
    """Without counters (event mode): each stage's FLOP/byte model's bytes B_s (reads and writes: data read
    again, or an intermediate written and read back), the stage losing e_s of them at the attainable DRAM
    rate, T'_s = max(T_s − e_s / (0.9 · peak), its remaining model at the roofs). Where nothing passes the data
    but the models' bytes pass the data the reference needs (D − P) by ``OVER_FETCH_HEALTHY`` ×, the scratch
    they move is an input the result does not need: E = min(P, S), ``move="unused_input"``."""
    rows = []
    for sa in stages:
        s = sa.stage
        if not s.bytes_model or not s.peak_bytes_per_s:
            return None
        rows.append((sa, sa.metrics, min(s.bytes_model, D)))
    S = sum(r for _, _, r in rows)
    unused = S <= OVER_FETCH_HEALTHY * D and P > 0 and S > OVER_FETCH_HEALTHY * (D - P)
    if S <= OVER_FETCH_HEALTHY * D and not unused:
        return None
    E = min(P, S) if unused else S - D
    T = sum(m.time_ns for _, m, _ in rows)
    after, readers = 0.0, []
    for sa, m, r in rows:
        s, e = sa.stage, E * r / S
        compute = 1e9 * (s.flops or 0.0) / s.peak_flops_per_s if s.peak_flops_per_s else 0.0
        left = 1e9 * max(0.0, s.bytes_model - e) / s.peak_bytes_per_s
        after += max(m.time_ns - 1e9 * e / (ATTAINABLE["dram"] * s.peak_bytes_per_s), compute, left)
        if r >= (OVER_FETCH_HEALTHY - 1.0) * D:
            readers.append(s.name)
    if unused:
        io = max(D - P, 1.0)
        peak = stages[0].stage.peak_bytes_per_s
        return _opportunity(io, S, T, after, peak, readers, "model", extra=E, move="unused_input")
    return _opportunity(D, S, T, after, stages[0].stage.peak_bytes_per_s, readers, "model")


def _opportunity(D, S, T, after, peak, readers, source, extra=None, move="passes") -> Opportunity | None:
    if peak:  # never faster than the data read once at the attainable DRAM rate
        after = max(after, 1e9 * D / (ATTAINABLE["dram"] * peak))
    if after >= T:
        return None
    share = 1.0 - after / T
    facts = Facts(
        resource="dram",
        move=move,
        over_fetch_ratio=S / D,
        value=S - D if extra is None else extra,
        focus=tuple(readers),
        kernels=len(readers),
        source=source,
    )
    return Opportunity("over_fetch", gain_pct(share), share, True, facts)

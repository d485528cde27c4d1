"""The calibration table, computed on any machine from the recordings (``record.py`` made them
on a GPU): each bad version's recorded result is assessed with the *current* diagnosis, and
its ranking and estimates are set against the measured gain of the fix.

    python tests/calibration/table.py            # print the table and the targets
    python tests/calibration/table.py --write-doc   # also rewrite docs/diagnosis-calibration.md's table

Targets (issue 12): the planted problem ranked first in every pair; the top opportunity's
estimate within a factor of 2 of the measured gain in at least 80 % of the pairs with a fix;
the near-roof GEMM's best opportunity at most 15 %.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from pairs import (  # noqa: E402
    ACCOUNTING_CAUSE,
    ALL_PAIRS,
    HALF,
    HELDOUT2_PAIRS,
    HELDOUT3_PAIRS,
    HELDOUT4_PAIRS,
    HELDOUT5_PAIRS,
    HELDOUT6_PAIRS,
    HELDOUT7_PAIRS,
    HELDOUT8_PAIRS,
    HELDOUT9_PAIRS,
    HELDOUT10_PAIRS,
    HELDOUT11_PAIRS,
    HELDOUT12_PAIRS,
    HELDOUT13_PAIRS,
    HELDOUT14_PAIRS,
    HELDOUT15_PAIRS,
    HELDOUT16_PAIRS,
    HELDOUT17_PAIRS,
    HELDOUT18_PAIRS,
    HELDOUT19_PAIRS,
    HELDOUT20_PAIRS,
    HELDOUT21_PAIRS,
    HELDOUT22_PAIRS,
    HELDOUT23_PAIRS,
    HELDOUT24_PAIRS,
    HELDOUT25_PAIRS,
    HELDOUT26_PAIRS,
    HELDOUT27_PAIRS,
    HELDOUT28_PAIRS,
    HELDOUT29_PAIRS,
    HELDOUT30_PAIRS,
    HELDOUT31_PAIRS,
    HELDOUT32_PAIRS,
    HELDOUT33_PAIRS,
    HELDOUT34_PAIRS,
    HELDOUT35_PAIRS,
    HELDOUT36_PAIRS,
    HELDOUT37_PAIRS,
    HELDOUT38_PAIRS,
    HELDOUT39_PAIRS,
    HELDOUT40_PAIRS,
    HELDOUT41_PAIRS,
    HELDOUT_PAIRS,
    HELDOUT_RANKS_PAIRS,
    MODEL_PAIRS,
    PAIRS,
    REPLAY_PAIRS,
)
from pairs_ranks2 import HELDOUT_RANKS2_PAIRS  # noqa: E402
from pairs_ranks3 import HELDOUT_RANKS3_PAIRS  # noqa: E402
from ranks_steps import communication_now  # noqa: E402
from record import slug  # noqa: E402
from replayed import idle_with_replay, kept_sqlite  # noqa: E402

from kprof_mcp.analysis.assessment import assess as assess_facts  # noqa: E402
from kprof_mcp.models import ProfileResult  # noqa: E402
from kprof_mcp.render.diagnosis import assess  # noqa: E402

RECORDED = HERE / "recorded"
HOLDOUT = HERE / "recorded-holdout"  # earlier kernel versions, not used to set the model's constants
ACCOUNTING = HERE / "recorded-accounting"  # issue 26: every pair, with the accounting counters
MODEL = HERE / "recorded-model"  # issue 36: classes only a model of the machine names (pipes' work moved)
REPLAY = HERE / "recorded-replay"  # issue 36: timeline causes a replay of the recorded trace estimates
HELDOUT = (
    HERE / "recorded-heldout"
)  # issue 36: pairs in new classes, built and recorded by someone else, judged once
HELDOUT2 = HERE / "recorded-heldout2"  # issue 36: a second such set (2026-11-25 21:30 UTC), judged once
HELDOUT3 = HERE / "recorded-heldout3"  # issue 36: a third (2026-11-26 00:50 UTC), judged once
HELDOUT4 = HERE / "recorded-heldout4"  # issue 36: a fourth (2026-11-26 03:20 UTC), judged once
HELDOUT5 = HERE / "recorded-heldout5"  # issue 36: a fifth (2026-11-26 06:40 UTC), judged once
HELDOUT6 = HERE / "recorded-heldout6"  # issue 36: a sixth (2026-11-26 10:50 UTC, H100), judged once
HELDOUT7 = HERE / "recorded-heldout7"  # issue 36: a seventh (2026-11-26 13:10 UTC, H100), judged once
HELDOUT8 = HERE / "recorded-heldout8"  # issue 36: an eighth (2026-11-26 16:08 UTC, H100), judged once
HELDOUT9 = HERE / "recorded-heldout9"  # issue 36: a ninth (2026-11-26 19:21 UTC, H100), judged once
HELDOUT10 = HERE / "recorded-heldout10"  # issue 36: a tenth (2026-11-26 23:21 UTC, H200), judged once
HELDOUT11 = HERE / "recorded-heldout11"  # issue 36: an eleventh (2026-11-27 03:14 UTC, H100), judged once
HELDOUT12 = HERE / "recorded-heldout12"  # issue 36: a twelfth (2026-11-27 06:10 UTC, H100), judged once
HELDOUT13 = HERE / "recorded-heldout13"  # issue 36: a thirteenth (2026-11-27 09:25 UTC, H100), judged once
HELDOUT14 = HERE / "recorded-heldout14"  # issue 36: a fourteenth (2026-11-27 10:15 UTC, H100), judged once
HELDOUT15 = HERE / "recorded-heldout15"  # issue 36: a fifteenth (2026-11-27 15:33 UTC, H100), judged once
HELDOUT16 = HERE / "recorded-heldout16"  # issue 36: a sixteenth (2026-11-27, H100), judged once
HELDOUT17 = HERE / "recorded-heldout17"  # issue 36: a seventeenth (2026-11-27 19:11 UTC, H100), judged once
HELDOUT18 = HERE / "recorded-heldout18"  # issue 36: an eighteenth (2026-11-27, H100), judged once
HELDOUT19 = HERE / "recorded-heldout19"  # issue 36: a nineteenth (2026-11-28, H100), judged once
HELDOUT20 = HERE / "recorded-heldout20"  # issue 36: a twentieth (2026-11-28, H100), judged once
HELDOUT21 = HERE / "recorded-heldout21"  # issue 36: a twenty-first (2026-11-28, H100), judged once
HELDOUT22 = HERE / "recorded-heldout22"  # issue 36: a twenty-second (2026-11-28, H100), judged once
HELDOUT23 = HERE / "recorded-heldout23"  # issue 36: a twenty-third (2026-11-28, H100), judged once
HELDOUT24 = HERE / "recorded-heldout24"  # issue 36: a twenty-fourth (2026-11-28, H200), judged once
HELDOUT25 = HERE / "recorded-heldout25"  # issue 36: a twenty-fifth (2026-11-28, H200), judged once
HELDOUT26 = HERE / "recorded-heldout26"  # issue 36: a twenty-sixth (2026-11-28, H200), judged once
HELDOUT27 = HERE / "recorded-heldout27"  # issue 36: a twenty-seventh (2026-11-29, H200), judged once
HELDOUT28 = HERE / "recorded-heldout28"  # issue 36: a twenty-eighth (2026-11-29, H200), judged once
HELDOUT29 = HERE / "recorded-heldout29"  # issue 36: a twenty-ninth (2026-11-29, H200), judged once
HELDOUT30 = HERE / "recorded-heldout30"  # issue 36: a thirtieth (2026-11-29, H200), judged once
HELDOUT31 = HERE / "recorded-heldout31"  # issue 36: a thirty-first (2026-11-29, H200), judged once
HELDOUT32 = HERE / "recorded-heldout32"  # issue 36: a thirty-second (2026-11-29, H200), judged once
HELDOUT33 = HERE / "recorded-heldout33"  # issue 36: a thirty-third (2026-11-29, H200), judged once
HELDOUT34 = HERE / "recorded-heldout34"  # issue 36: a thirty-fourth (2026-11-29, H200), judged once
HELDOUT35 = HERE / "recorded-heldout35"  # issue 36: a thirty-fifth (2026-11-29, H200), judged once
HELDOUT36 = HERE / "recorded-heldout36"  # issue 36: a thirty-sixth (2026-11-29, H200), judged once
HELDOUT37 = HERE / "recorded-heldout37"  # issue 36: a thirty-seventh (2026-11-29, H200), judged once
HELDOUT38 = HERE / "recorded-heldout38"  # issue 36: a thirty-eighth (2026-11-29, H200), judged once
HELDOUT39 = HERE / "recorded-heldout39"  # issue 36: a thirty-ninth (2026-11-29, H200), judged once
HELDOUT40 = HERE / "recorded-heldout40"  # issue 36: a fortieth (2026-11-29, H200), judged once
HELDOUT41 = HERE / "recorded-heldout41"  # issue 36: a forty-first (2026-11-29, H200), judged once
# Held-back commands' bad variants re-recorded with today's nsys mode (the lean eager op's floor in their own
# trace, 2026-11-29, H200), by set folder and pair: "as now" reads these; the first judgement stays as recorded.
REFLOORED = HERE / "recorded-opfloor"
HELDOUT_RANKS = HERE / "recorded-heldout-ranks"  # issue 39: multi-rank pairs (2 x H100), judged once each
HELDOUT_RANKS2 = (
    HERE / "recorded-heldout-ranks2"
)  # issue 39: a second set (2026-11-26 19:35 UTC), judged once
HELDOUT_RANKS3 = HERE / "recorded-heldout-ranks3"  # issue 39: a third set (2026-11-27 07:02 UTC), judged once
SET_PAIRS = ALL_PAIRS + REPLAY_PAIRS  # the whole set, judged half by half
DOC = ROOT / "docs" / "diagnosis-calibration.md"
BEGIN, END = "<!-- calibration-table:begin -->", "<!-- calibration-table:end -->"
HOLDOUT_BEGIN, HOLDOUT_END = "<!-- calibration-holdout:begin -->", "<!-- calibration-holdout:end -->"
FIT_BEGIN, FIT_END = "<!-- accounting-fit:begin -->", "<!-- accounting-fit:end -->"
HELD_BEGIN, HELD_END = "<!-- accounting-holdout:begin -->", "<!-- accounting-holdout:end -->"
BACK_BEGIN, BACK_END = "<!-- heldback:begin -->", "<!-- heldback:end -->"
BACK2_BEGIN, BACK2_END = "<!-- heldback2:begin -->", "<!-- heldback2:end -->"
BACK3_BEGIN, BACK3_END = "<!-- heldback3:begin -->", "<!-- heldback3:end -->"
BACK4_BEGIN, BACK4_END = "<!-- heldback4:begin -->", "<!-- heldback4:end -->"
BACK5_BEGIN, BACK5_END = "<!-- heldback5:begin -->", "<!-- heldback5:end -->"
BACK6_BEGIN, BACK6_END = "<!-- heldback6:begin -->", "<!-- heldback6:end -->"
BACK7_BEGIN, BACK7_END = "<!-- heldback7:begin -->", "<!-- heldback7:end -->"
BACK8_BEGIN, BACK8_END = "<!-- heldback8:begin -->", "<!-- heldback8:end -->"
BACK9_BEGIN, BACK9_END = "<!-- heldback9:begin -->", "<!-- heldback9:end -->"
BACK10_BEGIN, BACK10_END = "<!-- heldback10:begin -->", "<!-- heldback10:end -->"
BACK11_BEGIN, BACK11_END = "<!-- heldback11:begin -->", "<!-- heldback11:end -->"
BACK12_BEGIN, BACK12_END = "<!-- heldback12:begin -->", "<!-- heldback12:end -->"
BACK13_BEGIN, BACK13_END = "<!-- heldback13:begin -->", "<!-- heldback13:end -->"
BACK14_BEGIN, BACK14_END = "<!-- heldback14:begin -->", "<!-- heldback14:end -->"
BACK15_BEGIN, BACK15_END = "<!-- heldback15:begin -->", "<!-- heldback15:end -->"
BACK16_BEGIN, BACK16_END = "<!-- heldback16:begin -->", "<!-- heldback16:end -->"
BACK17_BEGIN, BACK17_END = "<!-- heldback17:begin -->", "<!-- heldback17:end -->"
BACK18_BEGIN, BACK18_END = "<!-- heldback18:begin -->", "<!-- heldback18:end -->"
BACK19_BEGIN, BACK19_END = "<!-- heldback19:begin -->", "<!-- heldback19:end -->"
BACK20_BEGIN, BACK20_END = "<!-- heldback20:begin -->", "<!-- heldback20:end -->"
BACK21_BEGIN, BACK21_END = "<!-- heldback21:begin -->", "<!-- heldback21:end -->"
BACK22_BEGIN, BACK22_END = "<!-- heldback22:begin -->", "<!-- heldback22:end -->"
BACK23_BEGIN, BACK23_END = "<!-- heldback23:begin -->", "<!-- heldback23:end -->"
BACK24_BEGIN, BACK24_END = "<!-- heldback24:begin -->", "<!-- heldback24:end -->"
BACK25_BEGIN, BACK25_END = "<!-- heldback25:begin -->", "<!-- heldback25:end -->"
BACK26_BEGIN, BACK26_END = "<!-- heldback26:begin -->", "<!-- heldback26:end -->"
BACK27_BEGIN, BACK27_END = "<!-- heldback27:begin -->", "<!-- heldback27:end -->"
BACK28_BEGIN, BACK28_END = "<!-- heldback28:begin -->", "<!-- heldback28:end -->"
BACK29_BEGIN, BACK29_END = "<!-- heldback29:begin -->", "<!-- heldback29:end -->"
BACK30_BEGIN, BACK30_END = "<!-- heldback30:begin -->", "<!-- heldback30:end -->"
BACK31_BEGIN, BACK31_END = "<!-- heldback31:begin -->", "<!-- heldback31:end -->"
BACK32_BEGIN, BACK32_END = "<!-- heldback32:begin -->", "<!-- heldback32:end -->"
BACK33_BEGIN, BACK33_END = "<!-- heldback33:begin -->", "<!-- heldback33:end -->"
BACK34_BEGIN, BACK34_END = "<!-- heldback34:begin -->", "<!-- heldback34:end -->"
BACK35_BEGIN, BACK35_END = "<!-- heldback35:begin -->", "<!-- heldback35:end -->"
BACK36_BEGIN, BACK36_END = "<!-- heldback36:begin -->", "<!-- heldback36:end -->"
BACK37_BEGIN, BACK37_END = "<!-- heldback37:begin -->", "<!-- heldback37:end -->"
BACK38_BEGIN, BACK38_END = "<!-- heldback38:begin -->", "<!-- heldback38:end -->"
BACK39_BEGIN, BACK39_END = "<!-- heldback39:begin -->", "<!-- heldback39:end -->"
BACK40_BEGIN, BACK40_END = "<!-- heldback40:begin -->", "<!-- heldback40:end -->"
BACK41_BEGIN, BACK41_END = "<!-- heldback41:begin -->", "<!-- heldback41:end -->"
RANKS_BEGIN, RANKS_END = "<!-- heldback-ranks:begin -->", "<!-- heldback-ranks:end -->"
RANKS2_BEGIN, RANKS2_END = "<!-- heldback-ranks2:begin -->", "<!-- heldback-ranks2:end -->"
RANKS3_BEGIN, RANKS3_END = "<!-- heldback-ranks3:begin -->", "<!-- heldback-ranks3:end -->"


def rows(recorded: Path | None = None, only_recorded: bool = False) -> list[dict]:
    """One row per pair: the recorded bad version re-assessed now, against the measured gain.
    ``only_recorded``: leave out pairs the set has no measurement of (the hold-out set)."""
    recorded = recorded or RECORDED
    measured = (
        json.loads((recorded / "measured.json").read_text())["pairs"]
        if (recorded / "measured.json").exists()
        else {}
    )
    out = []
    for p in PAIRS:
        f = recorded / slug(p.name) / "bad.result.json"
        m = measured.get(p.name, {})
        if only_recorded and not m:
            continue
        bad, good = m.get("bad", p.bad), m.get("good", p.good)
        row = {
            "pair": p.name,
            "kernel": f"{p.kernel} {bad}" + (f"→{good}" if good else ""),
            "mode": p.mode,
            "planted": p.planted,
            "cause": p.cause,
            "measured": m.get("measured_gain_pct"),
            "recorded": f.exists(),
        }
        if f.exists():
            a = assess(ProfileResult.model_validate_json(f.read_text()))
            opps = list(a.opportunities)
            top = opps[0] if opps else None
            row["top"] = top.name if top else "none"
            row["top_cause"] = top.cause if top else None
            row["top_est"] = top.est_gain_pct if top else 0.0
            rank = next((i for i, o in enumerate(opps, 1) if p.cause and o.cause == p.cause), None)
            row["rank"] = rank
            row["planted_est"] = opps[rank - 1].est_gain_pct if rank else None
        row["judge"] = judge(row)
        out.append(row)
    return out


def recorded_in(p) -> Path:
    """Where a pair's recordings are."""
    if p in HELDOUT_PAIRS:
        return HELDOUT
    if p in HELDOUT2_PAIRS:
        return HELDOUT2
    if p in HELDOUT3_PAIRS:
        return HELDOUT3
    if p in HELDOUT4_PAIRS:
        return HELDOUT4
    if p in HELDOUT5_PAIRS:
        return HELDOUT5
    if p in HELDOUT6_PAIRS:
        return HELDOUT6
    if p in HELDOUT7_PAIRS:
        return HELDOUT7
    if p in HELDOUT8_PAIRS:
        return HELDOUT8
    if p in HELDOUT9_PAIRS:
        return HELDOUT9
    if p in HELDOUT10_PAIRS:
        return HELDOUT10
    if p in HELDOUT11_PAIRS:
        return HELDOUT11
    if p in HELDOUT12_PAIRS:
        return HELDOUT12
    if p in HELDOUT13_PAIRS:
        return HELDOUT13
    if p in HELDOUT14_PAIRS:
        return HELDOUT14
    if p in HELDOUT15_PAIRS:
        return HELDOUT15
    if p in HELDOUT16_PAIRS:
        return HELDOUT16
    if p in HELDOUT17_PAIRS:
        return HELDOUT17
    if p in HELDOUT18_PAIRS:
        return HELDOUT18
    if p in HELDOUT19_PAIRS:
        return HELDOUT19
    if p in HELDOUT20_PAIRS:
        return HELDOUT20
    if p in HELDOUT21_PAIRS:
        return HELDOUT21
    if p in HELDOUT22_PAIRS:
        return HELDOUT22
    if p in HELDOUT23_PAIRS:
        return HELDOUT23
    if p in HELDOUT24_PAIRS:
        return HELDOUT24
    if p in HELDOUT25_PAIRS:
        return HELDOUT25
    if p in HELDOUT26_PAIRS:
        return HELDOUT26
    if p in HELDOUT27_PAIRS:
        return HELDOUT27
    if p in HELDOUT28_PAIRS:
        return HELDOUT28
    if p in HELDOUT29_PAIRS:
        return HELDOUT29
    if p in HELDOUT30_PAIRS:
        return HELDOUT30
    if p in HELDOUT31_PAIRS:
        return HELDOUT31
    if p in HELDOUT32_PAIRS:
        return HELDOUT32
    if p in HELDOUT33_PAIRS:
        return HELDOUT33
    if p in HELDOUT34_PAIRS:
        return HELDOUT34
    if p in HELDOUT35_PAIRS:
        return HELDOUT35
    if p in HELDOUT36_PAIRS:
        return HELDOUT36
    if p in HELDOUT37_PAIRS:
        return HELDOUT37
    if p in HELDOUT38_PAIRS:
        return HELDOUT38
    if p in HELDOUT39_PAIRS:
        return HELDOUT39
    if p in HELDOUT40_PAIRS:
        return HELDOUT40
    if p in HELDOUT41_PAIRS:
        return HELDOUT41
    if p in HELDOUT_RANKS_PAIRS:
        return HELDOUT_RANKS
    if p in HELDOUT_RANKS2_PAIRS:
        return HELDOUT_RANKS2
    if p in HELDOUT_RANKS3_PAIRS:
        return HELDOUT_RANKS3
    return MODEL if p in MODEL_PAIRS else REPLAY if p in REPLAY_PAIRS else ACCOUNTING


@functools.cache
def _retimed() -> dict:
    """The held-back commands' bad and good variants timed again without a profiler on the machine their bad
    variants were re-recorded on (recorded-opfloor/README.md)."""
    f = REFLOORED / "retimed.json"
    return json.loads(f.read_text())["pairs"] if f.exists() else {}


def _measured(where: Path) -> dict:
    f = where / "measured.json"
    return json.loads(f.read_text())["pairs"] if f.exists() else {}


@functools.cache
def load(f: Path) -> ProfileResult:
    """A recorded result, its timeline's idle breakdown re-read from the kept Nsight Systems SQLite
    (``<role>.sqlite.xz``, or ``.gz``) with today's code: the replay's estimates (issue 36) and today's stages, as
    the tool would give them now. Results without a SQLite are read as recorded. Read once per process
    (every section of the table and every test reads the same recordings)."""
    r = ProfileResult.model_validate_json(f.read_text())
    role = f.name.split(".")[0]
    if r.timeline.get("idle") and kept_sqlite(f.parent, role) is not None:
        idle = idle_with_replay(f.parent, role)
        if idle:
            r = r.model_copy(update={"timeline": {**r.timeline, "idle": idle}})
    if r.command and r.command.get("communication"):  # a multi-rank command: its what-ifs as today's
        comm = communication_now(f.parent, role)
        if comm:
            r = r.model_copy(update={"command": {**r.command, "communication": comm}})
    return r


def _matches(o, cause: str, resource: str | None, limiter: str | None) -> bool:
    """Opportunity ``o`` (the assessment's, with facts) names ``cause`` and, where the pair names the
    resource that limits its bad version, that resource: the pipe a move takes the work from, or the
    limiter the root cause names."""
    if o.cause != cause:
        return False
    return resource is None or resource in (o.opportunity.facts.resource, limiter)


def accounting_rows(half: str) -> list[dict]:
    """The set's table (issues 26 and 36): every pair of ``half`` ("fit" or "holdout") from
    recorded-accounting/, recorded-model/ and recorded-replay/, assessed now."""
    return [_row(p) for p in SET_PAIRS if HALF.get(p.name) == half]


def heldout_rows() -> list[dict]:
    """The held-back set (recorded-heldout/): classes the set does not have, built and recorded by
    someone who did not work on the model, their causes set before recording; judged as they come."""
    return [_row(p) for p in HELDOUT_PAIRS]


def heldout2_rows() -> list[dict]:
    """The second held-back set (recorded-heldout2/), built and recorded like the first by a helper
    who did not read the model, after the model's changes of that session were designed."""
    return [_row(p) for p in HELDOUT2_PAIRS]


def heldout3_rows() -> list[dict]:
    """The third held-back set (recorded-heldout3/), built and recorded by a helper who did not read the
    model, while that session's model changes were made; judged once after them."""
    return [_row(p) for p in HELDOUT3_PAIRS]


def heldout4_rows() -> list[dict]:
    """The fourth held-back set (recorded-heldout4/), built and recorded by a helper who did not read the
    model, while that session's model changes were made; judged once after them."""
    return [_row(p) for p in HELDOUT4_PAIRS]


def heldout5_rows() -> list[dict]:
    """The fifth held-back set (recorded-heldout5/), built and recorded by a helper who did not read the
    model; judged once, before any model change made with its class names in view."""
    return [_row(p) for p in HELDOUT5_PAIRS]


def heldout6_rows() -> list[dict]:
    """The sixth held-back set (recorded-heldout6/), built and recorded by a helper who did not read the
    model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT6_PAIRS]


def heldout_ranks_rows() -> list[dict]:
    """The held-back multi-rank set (recorded-heldout-ranks/, issue 39): the pairs recorded so far."""
    return [_row(p) for p in HELDOUT_RANKS_PAIRS if (HELDOUT_RANKS / slug(p.name)).is_dir()]


def heldout_ranks2_rows() -> list[dict]:
    """The second held-back multi-rank set (recorded-heldout-ranks2/, issue 39), built and recorded by a
    helper who did not read the ranks analysis; judged once, before any change made with it in view."""
    return [_row(p) for p in HELDOUT_RANKS2_PAIRS]


def heldout_ranks3_rows() -> list[dict]:
    """The third held-back multi-rank set (recorded-heldout-ranks3/, issue 39), built and recorded by a helper
    who did not read the ranks analysis; judged once, before any model change made with it in view."""
    return [_row(p) for p in HELDOUT_RANKS3_PAIRS]


def heldout8_rows() -> list[dict]:
    """The eighth held-back set (recorded-heldout8/), built and recorded by a helper who did not read the
    model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT8_PAIRS]


def heldout9_rows() -> list[dict]:
    """The ninth held-back set (recorded-heldout9/), built and recorded by a helper who did not read the
    model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT9_PAIRS]


def heldout10_rows() -> list[dict]:
    """The tenth held-back set (recorded-heldout10/, on an H200), built and recorded by a helper who did not
    read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT10_PAIRS]


def heldout11_rows() -> list[dict]:
    """The eleventh held-back set (recorded-heldout11/, on an H100), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT11_PAIRS]


def heldout12_rows() -> list[dict]:
    """The twelfth held-back set (recorded-heldout12/, on an H100), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT12_PAIRS]


def heldout13_rows() -> list[dict]:
    """The thirteenth held-back set (recorded-heldout13/, on an H100), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT13_PAIRS]


def heldout14_rows() -> list[dict]:
    """The fourteenth held-back set (recorded-heldout14/, on an H100), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT14_PAIRS]


def heldout15_rows() -> list[dict]:
    """The fifteenth held-back set (recorded-heldout15/, on an H100), designed by a helper who did not read
    the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT15_PAIRS]


def heldout16_rows() -> list[dict]:
    """The sixteenth held-back set (recorded-heldout16/, on an H100), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT16_PAIRS]


def heldout17_rows() -> list[dict]:
    """The seventeenth held-back set (recorded-heldout17/, on an H100), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT17_PAIRS]


def heldout18_rows() -> list[dict]:
    """The eighteenth held-back set (recorded-heldout18/, on an H100), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT18_PAIRS]


def heldout19_rows() -> list[dict]:
    """The nineteenth held-back set (recorded-heldout19/, on an H100), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT19_PAIRS]


def heldout20_rows() -> list[dict]:
    """The twentieth held-back set (recorded-heldout20/, on an H100), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT20_PAIRS]


def heldout21_rows() -> list[dict]:
    """The twenty-first held-back set (recorded-heldout21/, on an H100), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT21_PAIRS]


def heldout22_rows() -> list[dict]:
    """The twenty-second held-back set (recorded-heldout22/, on an H100), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT22_PAIRS]


def heldout23_rows() -> list[dict]:
    """The twenty-third held-back set (recorded-heldout23/, on an H100), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT23_PAIRS]


def heldout24_rows() -> list[dict]:
    """The twenty-fourth held-back set (recorded-heldout24/, on an H200), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT24_PAIRS]


def heldout25_rows() -> list[dict]:
    """The twenty-fifth held-back set (recorded-heldout25/, on an H200), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT25_PAIRS]


def heldout26_rows() -> list[dict]:
    """The twenty-sixth held-back set (recorded-heldout26/, on an H200), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT26_PAIRS]


def heldout27_rows() -> list[dict]:
    """The twenty-seventh held-back set (recorded-heldout27/, on an H200), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT27_PAIRS]


def heldout28_rows() -> list[dict]:
    """The twenty-eighth held-back set (recorded-heldout28/, on an H200), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT28_PAIRS]


def heldout29_rows() -> list[dict]:
    """The twenty-ninth held-back set (recorded-heldout29/, on an H200), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT29_PAIRS]


def heldout30_rows() -> list[dict]:
    """The thirtieth held-back set (recorded-heldout30/, on an H200), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT30_PAIRS]


def heldout31_rows() -> list[dict]:
    """The thirty-first held-back set (recorded-heldout31/, on an H200), built and recorded by a helper who did
    not read the model (its tridiagonal pair recorded by the lead in a second call); judged once, before any
    model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT31_PAIRS]


def heldout32_rows() -> list[dict]:
    """The thirty-second held-back set (recorded-heldout32/, on an H200), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT32_PAIRS]


def heldout33_rows() -> list[dict]:
    """The thirty-third held-back set (recorded-heldout33/, on an H200), built and recorded by a helper who did
    not read the model (its rank-count pair recorded by the lead in a second call); judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT33_PAIRS]


def heldout34_rows() -> list[dict]:
    """The thirty-fourth held-back set (recorded-heldout34/, on an H200), built and recorded by a helper who did
    not read the model (its trial-division pair recorded by the lead in a second call); judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT34_PAIRS]


def heldout35_rows() -> list[dict]:
    """The thirty-fifth held-back set (recorded-heldout35/, on an H200: three pairs), built and recorded by a helper
    who did not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT35_PAIRS]


def heldout36_rows() -> list[dict]:
    """The thirty-sixth held-back set (recorded-heldout36/, on an H200: three of its four pairs recorded), built and
    recorded by a helper who did not read the model; judged once, before any model change made with its recordings
    in view."""
    return [_row(p) for p in HELDOUT36_PAIRS]


def heldout37_rows() -> list[dict]:
    """The thirty-seventh held-back set (recorded-heldout37/, on an H200: three of its four pairs recorded), built
    and recorded by a helper who did not read the model; judged once, before any model change made with its
    recordings in view."""
    return [_row(p) for p in HELDOUT37_PAIRS]


def heldout38_rows() -> list[dict]:
    """The thirty-eighth held-back set (recorded-heldout38/, on an H200), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT38_PAIRS]


def heldout39_rows() -> list[dict]:
    """The thirty-ninth held-back set (recorded-heldout39/, on an H200), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT39_PAIRS]


def heldout40_rows() -> list[dict]:
    """The fortieth held-back set (recorded-heldout40/, on an H200), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT40_PAIRS]


def heldout41_rows() -> list[dict]:
    """The forty-first held-back set (recorded-heldout41/, on an H200), built and recorded by a helper who did
    not read the model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT41_PAIRS]


def heldout7_rows() -> list[dict]:
    """The seventh held-back set (recorded-heldout7/), built and recorded by a helper who did not read the
    model; judged once, before any model change made with its recordings in view."""
    return [_row(p) for p in HELDOUT7_PAIRS]


def _row(p) -> dict:
    """One pair's row: its bad version assessed now, against the measured gain of its fix. A pair
    counts only when opportunity 1 names the cause the fix removes (and, where the pair names it, the
    resource that limits the bad version). A timeline pair's measured gain is its two recorded
    timelines' totals (event mode times kernels only, and its fix removes launch gaps, not kernel
    time); a command's, its step time without a profiler."""
    where = recorded_in(p)
    m = _measured(where).get(p.name, {})
    bad_f, good_f = (where / slug(p.name) / "bad.result.json", where / slug(p.name) / "good.result.json")
    refloored = REFLOORED / where.name / slug(p.name) / "bad.result.json"
    if refloored.exists():  # the bad variant re-recorded with the floor in its trace: today's tool reads that
        bad_f = refloored
    cause = ACCOUNTING_CAUSE.get(p.name, p.cause)
    row = {
        "pair": p.name,
        "kernel": f"{p.kernel} {p.bad}" + (f"→{p.good}" if p.good else ""),
        "mode": p.mode + ("†" if refloored.exists() else ""),
        "planted": p.planted + (f" [limit: {p.resource}]" if p.resource else ""),
        "cause": cause,
        "measured": m.get("measured_gain_pct"),
        "recorded": bad_f.exists(),
    }
    if refloored.exists():
        # a host-bound step's time depends on the machine's CPU: an estimate from a re-recording is set against
        # the fix measured on the re-recording's machine (retimed.json), never against another machine's
        # measurement (the rank still counts)
        dev = json.loads(refloored.read_text())["device"].get("name")
        again = _retimed().get(p.name, {})
        if again.get("device") == dev:
            row["measured"], row["retimed"] = again["measured_gain_pct"], True
        elif m.get("device"):
            row["other_gpu"] = dev != m["device"]
    if p.mode == "nsys" and not p.command and good_f.exists():
        tb, tg = (ProfileResult.model_validate_json(f.read_text()).total_time_ns() for f in (bad_f, good_f))
        row["measured"] = 100.0 * (tb / tg - 1.0)
    if bad_f.exists():
        result = load(bad_f)
        opps = list(assess(result).opportunities)
        assessed = assess_facts(result)
        facts = list(assessed.opportunities)
        rc = assessed.root_cause.facts
        limiter = rc.limiter.resource if rc is not None and rc.limiter is not None else None
        top = opps[0] if opps else None
        row["top"] = top.name if top else "none"
        row["top_cause"] = top.cause if top else None
        row["top_est"] = top.est_gain_pct if top else 0.0
        row["rank"] = next(
            (i for i, o in enumerate(facts, 1) if cause and _matches(o, cause, p.resource, limiter)), None
        )
        row["planted_est"] = opps[row["rank"] - 1].est_gain_pct if row["rank"] else None
    if good_f.exists():  # what the fixed version is told: the next thing to do, or nothing large
        after = list(assess(load(good_f)).opportunities)
        row["after"] = (after[0].cause or "generic", after[0].est_gain_pct) if after else ("none", 0.0)
    row["judge"] = judge(row)
    return row


def judge(r: dict) -> dict:
    """Each target this row takes part in: True/False."""
    j = {}
    if not r["recorded"]:
        return j
    if r["cause"]:
        j["ranked_first"] = r.get("rank") == 1
    if r["measured"] is not None and r["measured"] > 0 and not r.get("other_gpu"):
        ratio = (r["top_est"] or 0.0) / r["measured"]
        r["ratio"] = ratio
        j["within_2x"] = 0.5 <= ratio <= 2.0
    if r["planted"] == "none":
        j["near_roof_small"] = r["top_est"] <= 15.0
    return j


def markdown(table: list[dict]) -> list[str]:
    def f(v, d=1, suffix=""):
        return "n/a" if v is None else f"{v:.{d}f}{suffix}"

    def cell(r: dict) -> dict:  # a "|" in a design's words would end its cell
        return {
            **r,
            **{k: r[k].replace("|", "\\|") for k in ("pair", "planted", "top") if isinstance(r.get(k), str)},
        }

    table = [cell(r) for r in table]

    after = any("after" in r for r in table)
    lines = [
        "| Pair | Kernel | Mode | Planted problem | Planted cause's rank | Its est. | Top opportunity (est.) | "
        "Measured gain of the fix | Top est. ÷ measured |"
        + (" After the fix: top cause (est.) |" if after else ""),
        "|---|---|---|---|---|---|---|---|---|" + ("---|" if after else ""),
    ]
    for r in table:
        if not r["recorded"]:
            lines.append(
                f"| {r['pair']} | {r['kernel']} | {r['mode']} | {r['planted']} | not recorded | | | | |"
                + (" |" if after else "")
            )
            continue
        rank = "—" if not r["cause"] else (str(r["rank"]) if r["rank"] else "not listed")
        tail = ""
        if after:
            tail = f" {r['after'][0]} ({f(r['after'][1], 1, '%')}) |" if "after" in r else " — |"
        lines.append(
            f"| {r['pair']} | {r['kernel']} | {r['mode']} | {r['planted']} | {rank} | "
            f"{f(r.get('planted_est'), 1, '%') if r['cause'] else '—'} | {r['top'][:60]} ({f(r['top_est'], 1, '%')}) | "
            f"{f(r['measured'], 1, '%')} | {f(r.get('ratio'), 2)} |" + tail
        )
    return lines


def summary(table: list[dict]) -> tuple[list[str], bool]:
    """The targets, each PASS/FAIL (ranking and size: a target no row takes part in is FAIL)."""
    judged = [(r, r.get("judge", {})) for r in table]
    first = [j["ranked_first"] for _, j in judged if "ranked_first" in j]
    within = [j["within_2x"] for _, j in judged if "within_2x" in j]
    roof = [j["near_roof_small"] for _, j in judged if "near_roof_small" in j]
    ok_first = bool(first) and all(first)
    ok_within = bool(within) and sum(within) >= 0.8 * len(within)
    ok_roof = all(roof)  # a half without the near-roof GEMM has no such target
    lines = [
        f"- Planted problem ranked first: {sum(first)} of {len(first)} pairs — {'PASS' if ok_first else 'FAIL'}",
        f"- Top estimate within 2× of the measured gain: {sum(within)} of {len(within)} pairs "
        f"({100 * sum(within) / max(1, len(within)):.0f} %, target ≥ 80 %) — {'PASS' if ok_within else 'FAIL'}",
    ]
    if roof:
        lines.append(
            f"- Best opportunity ≤ 15 % on the kernels with nothing planted (near-roof GEMM, healthy "
            f"memory-bound kernel): {sum(roof)} of {len(roof)} — {'PASS' if ok_roof else 'FAIL'}"
        )
    return lines, ok_first and ok_within and ok_roof


def text(table: list[dict]) -> str:
    return "\n".join(markdown(table) + [""] + summary(table)[0])


def sections() -> dict[tuple[str, str], str]:
    """The doc's two generated sections: the calibration set and the hold-out set."""
    return {
        (BEGIN, END): text(rows()),
        (HOLDOUT_BEGIN, HOLDOUT_END): text(rows(HOLDOUT, only_recorded=True)),
        (FIT_BEGIN, FIT_END): text(accounting_rows("fit")),
        (HELD_BEGIN, HELD_END): text(accounting_rows("holdout")),
        (BACK_BEGIN, BACK_END): text(heldout_rows()),
        (BACK2_BEGIN, BACK2_END): text(heldout2_rows()),
        (BACK3_BEGIN, BACK3_END): text(heldout3_rows()),
        (BACK4_BEGIN, BACK4_END): text(heldout4_rows()),
        **({(BACK5_BEGIN, BACK5_END): text(heldout5_rows())} if BACK5_BEGIN in DOC.read_text() else {}),
        **({(BACK6_BEGIN, BACK6_END): text(heldout6_rows())} if BACK6_BEGIN in DOC.read_text() else {}),
        **({(BACK7_BEGIN, BACK7_END): text(heldout7_rows())} if BACK7_BEGIN in DOC.read_text() else {}),
        **({(BACK8_BEGIN, BACK8_END): text(heldout8_rows())} if BACK8_BEGIN in DOC.read_text() else {}),
        **({(BACK9_BEGIN, BACK9_END): text(heldout9_rows())} if BACK9_BEGIN in DOC.read_text() else {}),
        **({(BACK10_BEGIN, BACK10_END): text(heldout10_rows())} if BACK10_BEGIN in DOC.read_text() else {}),
        **({(BACK11_BEGIN, BACK11_END): text(heldout11_rows())} if BACK11_BEGIN in DOC.read_text() else {}),
        **({(BACK12_BEGIN, BACK12_END): text(heldout12_rows())} if BACK12_BEGIN in DOC.read_text() else {}),
        **({(BACK13_BEGIN, BACK13_END): text(heldout13_rows())} if BACK13_BEGIN in DOC.read_text() else {}),
        **({(BACK14_BEGIN, BACK14_END): text(heldout14_rows())} if BACK14_BEGIN in DOC.read_text() else {}),
        **({(BACK15_BEGIN, BACK15_END): text(heldout15_rows())} if BACK15_BEGIN in DOC.read_text() else {}),
        **({(BACK16_BEGIN, BACK16_END): text(heldout16_rows())} if BACK16_BEGIN in DOC.read_text() else {}),
        **({(BACK17_BEGIN, BACK17_END): text(heldout17_rows())} if BACK17_BEGIN in DOC.read_text() else {}),
        **({(BACK18_BEGIN, BACK18_END): text(heldout18_rows())} if BACK18_BEGIN in DOC.read_text() else {}),
        **({(BACK19_BEGIN, BACK19_END): text(heldout19_rows())} if BACK19_BEGIN in DOC.read_text() else {}),
        **({(BACK20_BEGIN, BACK20_END): text(heldout20_rows())} if BACK20_BEGIN in DOC.read_text() else {}),
        **({(BACK21_BEGIN, BACK21_END): text(heldout21_rows())} if BACK21_BEGIN in DOC.read_text() else {}),
        **({(BACK22_BEGIN, BACK22_END): text(heldout22_rows())} if BACK22_BEGIN in DOC.read_text() else {}),
        **({(BACK23_BEGIN, BACK23_END): text(heldout23_rows())} if BACK23_BEGIN in DOC.read_text() else {}),
        **({(BACK24_BEGIN, BACK24_END): text(heldout24_rows())} if BACK24_BEGIN in DOC.read_text() else {}),
        **({(BACK25_BEGIN, BACK25_END): text(heldout25_rows())} if BACK25_BEGIN in DOC.read_text() else {}),
        **({(BACK26_BEGIN, BACK26_END): text(heldout26_rows())} if BACK26_BEGIN in DOC.read_text() else {}),
        **({(BACK27_BEGIN, BACK27_END): text(heldout27_rows())} if BACK27_BEGIN in DOC.read_text() else {}),
        **({(BACK28_BEGIN, BACK28_END): text(heldout28_rows())} if BACK28_BEGIN in DOC.read_text() else {}),
        **({(BACK29_BEGIN, BACK29_END): text(heldout29_rows())} if BACK29_BEGIN in DOC.read_text() else {}),
        **({(BACK30_BEGIN, BACK30_END): text(heldout30_rows())} if BACK30_BEGIN in DOC.read_text() else {}),
        **({(BACK31_BEGIN, BACK31_END): text(heldout31_rows())} if BACK31_BEGIN in DOC.read_text() else {}),
        **({(BACK32_BEGIN, BACK32_END): text(heldout32_rows())} if BACK32_BEGIN in DOC.read_text() else {}),
        **({(BACK33_BEGIN, BACK33_END): text(heldout33_rows())} if BACK33_BEGIN in DOC.read_text() else {}),
        **({(BACK34_BEGIN, BACK34_END): text(heldout34_rows())} if BACK34_BEGIN in DOC.read_text() else {}),
        **({(BACK35_BEGIN, BACK35_END): text(heldout35_rows())} if BACK35_BEGIN in DOC.read_text() else {}),
        **({(BACK36_BEGIN, BACK36_END): text(heldout36_rows())} if BACK36_BEGIN in DOC.read_text() else {}),
        **({(BACK37_BEGIN, BACK37_END): text(heldout37_rows())} if BACK37_BEGIN in DOC.read_text() else {}),
        **({(BACK38_BEGIN, BACK38_END): text(heldout38_rows())} if BACK38_BEGIN in DOC.read_text() else {}),
        **({(BACK39_BEGIN, BACK39_END): text(heldout39_rows())} if BACK39_BEGIN in DOC.read_text() else {}),
        **({(BACK40_BEGIN, BACK40_END): text(heldout40_rows())} if BACK40_BEGIN in DOC.read_text() else {}),
        **({(BACK41_BEGIN, BACK41_END): text(heldout41_rows())} if BACK41_BEGIN in DOC.read_text() else {}),
        **({(RANKS_BEGIN, RANKS_END): text(heldout_ranks_rows())} if RANKS_BEGIN in DOC.read_text() else {}),
        **(
            {(RANKS2_BEGIN, RANKS2_END): text(heldout_ranks2_rows())}
            if RANKS2_BEGIN in DOC.read_text()
            else {}
        ),
        **(
            {(RANKS3_BEGIN, RANKS3_END): text(heldout_ranks3_rows())}
            if RANKS3_BEGIN in DOC.read_text()
            else {}
        ),
    }


def documented(begin: str, end: str) -> str:
    return DOC.read_text().split(begin)[1].split(end)[0].strip()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write-doc", action="store_true")
    a = ap.parse_args()
    table = rows()
    _, ok = summary(table)
    for (begin, _), t in sections().items():
        print(
            {
                BEGIN: "Calibration set (recorded/):",
                HOLDOUT_BEGIN: "\nHold-out set (recorded-holdout/: earlier kernel versions, not used to set the model):",
                FIT_BEGIN: "\nAccounting set, fit half (recorded-accounting/):",
                HELD_BEGIN: "\nAccounting set, hold-out half (recorded-accounting/):",
                BACK_BEGIN: "\nHeld-back set (recorded-heldout/: new classes, built and recorded by someone else):",
                BACK2_BEGIN: "\nSecond held-back set (recorded-heldout2/: new classes, built and recorded by someone else):",
                BACK3_BEGIN: "\nThird held-back set (recorded-heldout3/: new classes, built and recorded by someone else):",
                BACK4_BEGIN: "\nFourth held-back set (recorded-heldout4/: new classes, built and recorded by someone else):",
                BACK5_BEGIN: "\nFifth held-back set (recorded-heldout5/: new classes, built and recorded by someone else):",
                BACK6_BEGIN: "\nSixth held-back set (recorded-heldout6/: new classes, built and recorded by someone else):",
                BACK7_BEGIN: "\nSeventh held-back set (recorded-heldout7/: new classes, built and recorded by someone else):",
                BACK8_BEGIN: "\nEighth held-back set (recorded-heldout8/: new classes, built and recorded by someone else):",
                BACK9_BEGIN: "\nNinth held-back set (recorded-heldout9/: new classes, built and recorded by someone else):",
                BACK10_BEGIN: "\nTenth held-back set (recorded-heldout10/: new classes, built and recorded by someone else):",
                BACK11_BEGIN: "\nEleventh held-back set (recorded-heldout11/: new classes, built and recorded by someone else):",
                BACK12_BEGIN: "\nTwelfth held-back set (recorded-heldout12/: new classes, built and recorded by someone else):",
                BACK13_BEGIN: "\nThirteenth held-back set (recorded-heldout13/: new classes, built and recorded by someone else):",
                BACK14_BEGIN: "\nFourteenth held-back set (recorded-heldout14/: new classes, built and recorded by someone else):",
                BACK15_BEGIN: "\nFifteenth held-back set (recorded-heldout15/: new classes, designed by someone else):",
                BACK16_BEGIN: "\nSixteenth held-back set (recorded-heldout16/: new classes, built and recorded by someone else):",
                BACK17_BEGIN: "\nSeventeenth held-back set (recorded-heldout17/: new classes, built and recorded by someone else):",
                BACK18_BEGIN: "\nEighteenth held-back set (recorded-heldout18/: new classes, built and recorded by someone else):",
                BACK19_BEGIN: "\nNineteenth held-back set (recorded-heldout19/: new classes, built and recorded by someone else):",
                BACK20_BEGIN: "\nTwentieth held-back set (recorded-heldout20/: new classes, built and recorded by someone else):",
                BACK21_BEGIN: "\nTwenty-first held-back set (recorded-heldout21/: new classes, built and recorded by someone else):",
                BACK22_BEGIN: "\nTwenty-second held-back set (recorded-heldout22/: new classes, built and recorded by someone else):",
                BACK23_BEGIN: "\nTwenty-third held-back set (recorded-heldout23/: new classes, built and recorded by someone else):",
                BACK24_BEGIN: "\nTwenty-fourth held-back set (recorded-heldout24/: new classes, built and recorded by someone else):",
                BACK25_BEGIN: "\nTwenty-fifth held-back set (recorded-heldout25/: new classes, built and recorded by someone else):",
                BACK26_BEGIN: "\nTwenty-sixth held-back set (recorded-heldout26/: new classes, built and recorded by someone else):",
                BACK27_BEGIN: "\nTwenty-seventh held-back set (recorded-heldout27/: new classes, built and recorded by someone else):",
                BACK28_BEGIN: "\nTwenty-eighth held-back set (recorded-heldout28/: new classes, built and recorded by someone else):",
                BACK29_BEGIN: "\nTwenty-ninth held-back set (recorded-heldout29/: new classes, built and recorded by someone else):",
                BACK30_BEGIN: "\nThirtieth held-back set (recorded-heldout30/: new classes, built and recorded by someone else):",
                BACK31_BEGIN: "\nThirty-first held-back set (recorded-heldout31/: new classes, built and recorded by someone else):",
                BACK32_BEGIN: "\nThirty-second held-back set (recorded-heldout32/: new classes, built and recorded by someone else):",
                BACK33_BEGIN: "\nThirty-third held-back set (recorded-heldout33/: new classes, built and recorded by someone else):",
                BACK34_BEGIN: "\nThirty-fourth held-back set (recorded-heldout34/: new classes, built and recorded by someone else):",
                BACK35_BEGIN: "\nThirty-fifth held-back set (recorded-heldout35/: new classes, built and recorded by someone else):",
                BACK36_BEGIN: "\nThirty-sixth held-back set (recorded-heldout36/: new classes, built and recorded by someone else):",
                BACK37_BEGIN: "\nThirty-seventh held-back set (recorded-heldout37/: new classes, built and recorded by someone else):",
                BACK38_BEGIN: "\nThirty-eighth held-back set (recorded-heldout38/: new classes, built and recorded by someone else):",
                BACK39_BEGIN: "\nThirty-ninth held-back set (recorded-heldout39/: new classes, built and recorded by someone else):",
                BACK40_BEGIN: "\nFortieth held-back set (recorded-heldout40/: new classes, built and recorded by someone else):",
                BACK41_BEGIN: "\nForty-first held-back set (recorded-heldout41/: new classes, built and recorded by someone else):",
                RANKS_BEGIN: "\nHeld-back multi-rank set (recorded-heldout-ranks/: built and recorded by someone else):",
                RANKS2_BEGIN: "\nSecond held-back multi-rank set (recorded-heldout-ranks2/: built and recorded by someone else):",
                RANKS3_BEGIN: "\nThird held-back multi-rank set (recorded-heldout-ranks3/: built and recorded by someone else):",
            }[begin]
        )
        print(t)
    if a.write_doc:
        doc = DOC.read_text()
        for (begin, end), t in sections().items():
            head, rest = doc.split(begin)
            _, tail = rest.split(end)
            doc = head + begin + "\n" + t + "\n" + end + tail
        DOC.write_text(doc)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

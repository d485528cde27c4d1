"""The machine model without counters, judged on the recordings (docs/machine-model.md, "Without
counters"): every annotation-mode kernel pair of the calibration set, its recorded result.json with the
counters dropped (as event mode has none), its kernel's static SASS mix and TTIR put in, then the
static model's limiter and top cause set against the counter-based ones.

The static side: tests/fixtures/sass/calib_mixes.json, every kernel of the set compiled for sm_90 on a CPU
with the Triton the recordings were made with (3.6.0; make_calib_mixes.py). Where a recording holds a mix
(recorded-model/, recorded-heldout/: 12 versions) the recompiled one is the same class by class; the
others (recorded-accounting/) predate the mix. The recordings' own mixes (one floating-point class, no
loops) are judged too.

    python tests/unit/test_static_model_recorded.py    # the agreement table of docs/machine-model.md
"""

from __future__ import annotations

import json
import sys
from contextlib import ExitStack
from functools import cache
from pathlib import Path
from unittest import mock

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from kprof_mcp.analysis.assessment import assess  # noqa: E402
from kprof_mcp.analysis.diagnosis import static_mix  # noqa: E402
from kprof_mcp.models import ProfileResult  # noqa: E402

CAL = ROOT / "tests" / "calibration"
MIXES = json.loads((ROOT / "tests" / "fixtures" / "sass" / "calib_mixes.json").read_text())
SETS = ("recorded-accounting", "recorded-model", "recorded-heldout")
# What event mode does not have: every Nsight Compute figure (the compiler's resources stay).
COUNTERS = dict(
    tc_pct=None,
    dram_pct=None,
    occupancy_pct=None,
    l2_hit_pct=None,
    sm_pct=None,
    theoretical_occupancy_pct=None,
    measured_local_bytes=None,
    l1_bytes=None,
    measured_waves_per_sm=None,
    dram_bytes=None,
    sm_clock_hz=None,
    accounting={},
    ncu_rules=[],
    missing_metrics=[],
    ncu_kernels=[],
)


def versions() -> list[tuple[str, str, Path]]:
    """(pair slug, bad|good, recorded result) of every recorded version with a recompiled mix."""
    out = []
    for slug in sorted(k for k in MIXES if not k.startswith("_")):
        for role in ("bad", "good"):
            f = next(
                (CAL / d / slug / f"{role}.result.json" for d in SETS if (CAL / d / slug).is_dir()), None
            )
            if f is not None and f.exists() and role in MIXES[slug]:
                out.append((slug, role, f))
    return out


def event_mode(r: ProfileResult, slug: str, role: str, recorded_mix: bool = False) -> ProfileResult:
    """The result as event mode would have it: no counters; the kernel's static mix and TTIR (the
    recompiled ones, or with ``recorded_mix`` the recording's own where it holds one)."""
    stages = []
    for s in r.stages:
        x = MIXES[slug][role].get(s.name)
        res = s.resources
        if res is not None and x is not None and not (recorded_mix and res.sass_mix):
            update = {"sass_mix": x["sass_mix"], "sass_loop_mix": x["sass_loop_mix"], "ir_ops": x["ir_ops"]}
            res = res.model_copy(update=update)
        stages.append(s.model_copy(update={**COUNTERS, "resources": res}))
    return r.model_copy(update={"stages": stages})


def _flop_byte_only():
    """Today's event mode before the static model: the FLOP/byte model alone."""
    stack = ExitStack()
    stack.enter_context(mock.patch.object(static_mix, "active", lambda m, u: False))
    stack.enter_context(mock.patch.object(static_mix, "spill_share", lambda m: None))
    stack.enter_context(mock.patch.object(static_mix, "atomics", lambda m, u: None))
    return stack


def _verdict(sa) -> dict:
    d = sa.diagnosis
    lim = d.root_cause.limiter
    top = next(iter(d.opportunities), None)
    return {
        "limiter": lim.resource if lim else None,
        "util": lim.util if lim else None,
        "source": lim.source if lim else None,
        "uses": [(u.key, u.util, u.source) for u in lim.uses] if lim else [],
        "top": (top.cause, top.facts.move) if top else None,
        "gain": top.est_gain_pct if top else None,
        "top_source": top.facts.source if top else None,
    }


@cache
def rows() -> tuple[dict, ...]:
    """One row per recorded stage: the counters', the static model's and the FLOP/byte model's verdicts."""
    measured = {}
    for d in SETS:
        f = CAL / d / "measured.json"
        for name, v in (json.loads(f.read_text())["pairs"] if f.exists() else {}).items():
            measured["".join(c if c.isalnum() else "_" for c in name).strip("_")] = v.get("measured_gain_pct")
    out = []
    for slug, role, f in versions():
        r = ProfileResult.model_validate_json(f.read_text())
        ctr = assess(r)
        static = assess(event_mode(r, slug, role))
        recorded = assess(event_mode(r, slug, role, recorded_mix=True))
        with _flop_byte_only():
            model = assess(event_mode(r, slug, role))
        for a, b, c, d in zip(ctr.stages, static.stages, model.stages, recorded.stages, strict=True):
            if MIXES[slug][role].get(a.stage.name) is None:
                continue
            out.append(
                {
                    "pair": slug,
                    "role": role,
                    "stage": a.stage.name,
                    "counters": _verdict(a),
                    "static": _verdict(b),
                    "model": _verdict(c),
                    "recorded_mix": _verdict(d) if a.stage.resources and a.stage.resources.sass_mix else None,
                    "measured": measured.get(slug) if role == "bad" else None,
                }
            )
    return tuple(out)


def row(pair: str, role: str, stage: str | None = None) -> dict:
    return next(x for x in rows() if x["pair"] == pair and x["role"] == role and stage in (None, x["stage"]))


# The planted problems the static model exists to name (bad versions): (cause, move) it ranks first.
NAMED = {
    "fp64_where_fp32_suffices": ("move_work", "fp64_to_fp32"),
    "precise_pow": ("move_work", "precise_to_fast_math"),
    "precise_transcendentals": ("move_work", "precise_to_fast_math"),
    "integer_division_per_element": ("move_work", "intdiv_to_shift"),
    "IEEE_division_per_step": ("move_work", "div_to_rcp_mul"),
    "GEMM_on_the_FMA_pipes": ("move_work", "ffma_dot_to_tf32"),
    "heavy_spills": ("spills", None),
    "register_spills": ("spills", None),
    "contended_atomics": ("atomics", None),
    "serialised_reduction": ("atomics", None),
}
# Where the static model's top cause differs from the counters' on a planted bad version, and why.
MISSES = {
    "dot_as_multiply_and_sum": "counters: spills at 98 % of L1 bytes; the listing's pass puts them at 45 % "
    "of its memory time, under the latency advice",
    "IEEE_division_per_step": "an improvement: the recording predates the TTIR parser's tt.precise_divf, so "
    "the counters' diagnosis has no evidence; the static one names the hoist (+440 %, measured +725 %)",
}
# Estimates within 2x of the measured fix (bad versions whose top cause is the planted one).
WITHIN_2X = (
    "fp64_where_fp32_suffices",
    "precise_pow",
    "IEEE_division_per_step",
    "heavy_spills",
    "register_spills",
    "serialised_reduction",
)
OVER_2X = {
    "precise_transcendentals": "the listing's cold Payne-Hanek path (integer, LDL/STL) dilutes the FP share",
    "integer_division_per_element": "latency-bound (issue 32 %): the static model takes the ALU busy all the time",
    "GEMM_on_the_FMA_pipes": "the fixed kernel meets bank conflicts and a starved tensor pipe the move ignores",
    "contended_atomics": "contention is in the data: the bound is the time the FLOP/byte model leaves",
}


@pytest.mark.parametrize("pair", sorted(NAMED))
def test_the_static_model_names_the_planted_cause_without_counters(pair):
    x = row(pair, "bad")
    assert x["static"]["top"] == NAMED[pair], x["static"]
    assert x["static"]["top_source"] == static_mix.SOURCE  # labelled: a static-model estimate
    if pair not in MISSES:
        assert x["counters"]["top"] == x["static"]["top"]  # the counters name the same cause
    if pair != "register_spills":  # the compiler's spill count alone named it too (+23 %; static +44 %)
        assert x["model"]["top"] != NAMED[pair]  # which the FLOP/byte model alone did not


@pytest.mark.parametrize("pair", sorted(MISSES))
def test_the_listed_misses_are_what_they_say(pair):
    x = row(pair, "bad")
    assert x["static"]["top"] != x["counters"]["top"]


def test_estimates_against_the_measured_fixes():
    for pair in WITHIN_2X:
        x = row(pair, "bad")
        assert 0.5 <= x["static"]["gain"] / x["measured"] <= 2.0, (pair, x["static"]["gain"], x["measured"])
    for pair in OVER_2X:
        x = row(pair, "bad")
        ratio = x["static"]["gain"] / x["measured"]
        assert not 0.5 <= ratio <= 2.0, (pair, ratio)  # listed honestly: outside 2x today


def test_limiter_agreement_where_the_static_model_applies():
    """Where the static model sets the uses, its limiter is the counters' on 7 of 10 stages; the other
    three take the ALU (a cold integer path, a latency-bound kernel) or the issue slots (an XU-bound
    division) for the counters' issue slots or XU pipe."""
    applied = [x for x in rows() if x["static"]["source"] == static_mix.SOURCE]
    missed = {(x["pair"], x["role"]) for x in applied if x["static"]["limiter"] != x["counters"]["limiter"]}
    assert len(applied) == 10
    assert missed == {
        ("precise_transcendentals", "bad"),
        ("integer_division_per_element", "bad"),
        ("IEEE_division_per_step", "bad"),
    }


def test_nothing_special_stays_on_the_flop_byte_model():
    for x in rows():
        if x["static"]["source"] != static_mix.SOURCE:
            assert (
                x["static"]["limiter"] == x["model"]["limiter"] and x["static"]["util"] == x["model"]["util"]
            )
    for pair in ("strided_access", "random_gather", "too_few_blocks", "bank_conflicts", "small_tiles"):
        assert row(pair, "bad")["static"]["source"] == "model"  # memory-side listings: no static pipes


def test_no_figure_above_its_peak_and_every_static_use_labelled():
    for x in rows():
        for key, util, source in x["static"]["uses"]:
            assert 0.0 <= util <= 1.0 and source in ("static", "model", "grid"), (x["pair"], key)
            assert source != "grid" or key == "blocks"  # the block scheduler: the grid at its rate


def test_the_recordings_own_mixes_name_the_same_moves():
    """The 12 recorded mixes (one floating-point class, no loops): fp64 by the TTIR's f64 ops, the moves
    of code by its lines; the division pair's bad recording holds no TTIR evidence."""
    for pair in (
        "fp64_where_fp32_suffices",
        "precise_pow",
        "precise_transcendentals",
        "integer_division_per_element",
    ):
        assert row(pair, "bad")["recorded_mix"]["top"] == NAMED[pair]
    assert row("IEEE_division_per_step", "bad")["recorded_mix"]["top"][0] == "latency"


def table() -> str:
    """The agreement table (markdown) of docs/machine-model.md."""

    def top(v):
        if v["top"] is None:
            return "none"
        cause, move = v["top"]
        return f"{move or cause} ({v['gain']:.0f}%)"

    def lim(v):
        return f"{v['limiter']} {100 * v['util']:.0f}%" + (" (static)" if v["source"] == "static" else "")

    lines = [
        "| pair | version | counters: limiter | counters: top cause | static: limiter | static: top cause "
        "| FLOP/byte model only: top cause | measured fix | limiter / top agree |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for x in rows():
        c, s, m = x["counters"], x["static"], x["model"]
        name = x["pair"].replace("__", ": ").replace("_", " ") + (
            "" if x["stage"] in x["pair"] else f" ({x['stage']})"
        )
        meas = f"+{x['measured']:.0f}%" if x["measured"] else ""
        agree = (
            f"{'yes' if c['limiter'] == s['limiter'] else 'no'} / {'yes' if c['top'] == s['top'] else 'no'}"
        )
        lines.append(
            f"| {name} | {x['role']} | {lim(c)} | {top(c)} | {lim(s)} | {top(s)} | {top(m)} | {meas} | {agree} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())

"""A profile against its baseline, as facts, computed once (:func:`against`, called by
``engine.run.render_profile``) and worded by ``render/contract.py``: the whole profile's speed-up with
its bootstrap CI from both profiles' raw samples, and each stage's :class:`~.noise.Judgement` against
this GPU's noise floor (or, with none measured, the two profiles' own spread).

Refused, with the reason (issue 37): a pair that does not measure the same thing (:func:`mismatch`:
other parameters, another device, another mode) unless the caller allows it, and then the differences
head the verdict; and a profile whose integrity checks after timing failed (:func:`untrusted`), always:
its times are not the kernel's work, so no verdict may call it faster."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..models import ProfileResult, Timing
from .compare import Ratio, compare
from .noise import Judgement, judge
from .peaks import suspect_reasons


@dataclass(frozen=True)
class StageVerdict:
    stage: str
    prev_ns: float
    cur_ns: float
    judgement: Judgement
    floor: dict[str, Any] | None  # the floor record that applied (from, bound, class), when one did


@dataclass(frozen=True)
class VsBaseline:
    whole: Ratio | None  # one stage's or the whole plan's speed-up and CI; None without samples to compare
    stages: tuple[StageVerdict, ...]  # the stages both profiles have, in the current profile's order
    refused: str | None = None  # why no verdict is given (then whole is None and stages empty)
    mismatch: tuple[str, ...] = ()  # what differs, compared anyway because the caller allowed it


def untrusted(result: ProfileResult) -> list[str]:
    """Why ``result``'s times cannot be set against another's: the integrity checks after its timed runs
    that failed (``correctness["after_timing"]``, :mod:`kprof_mcp.capture.integrity`); [] when none did or
    none ran."""
    after = (result.correctness or {}).get("after_timing") or {}
    return [c.get("message", "") for c in after.get("checks", []) if not c.get("ok")]


def dtype_caveats(report: dict[str, Any] | None) -> list[str]:
    """The outputs whose dtype is not the reference's, in words (a correctness record of
    :func:`kprof_mcp.capture.correctness.check_correctness`; [] when every output has its dtype)."""
    return [
        f"output {e['index']} is {e['dtype']} where the reference returns {e['reference_dtype']}: the version "
        "moves other bytes than the stage's model counts, so its % of peak and a comparison with a version "
        f"writing {e['reference_dtype']} are not like for like"
        for e in (report or {}).get("outputs", [])
        if e.get("dtype") and e.get("reference_dtype")
    ]


def caveats(result: ProfileResult) -> list[str]:
    """What makes ``result``'s times other work than its model's without failing a check: outputs of
    another dtype than the reference's (:func:`kprof_mcp.capture.correctness.dtype_caveats`), and
    kernels its timed runs did not launch running during them (another stream nobody waits for)."""
    out = dtype_caveats(result.correctness)
    out += [w.message for w in result.warnings if w.kind == "concurrency"]
    return out


def mismatch_of(
    baseline: ProfileResult,
    params: dict[str, Any],
    mode: str,
    device_kind: str | None,
    device_names: list[str] | None,
) -> list[str]:
    """What makes ``baseline`` measure something else than a profile of ``params`` in ``mode`` on a
    device of ``device_kind`` ('cuda' or 'cpu'; None: not known yet) among ``device_names`` (the GPU
    models it may run on; None: not known): other parameters, another mode, another device."""
    out = []
    if baseline.params != params:
        diff = {
            k: (baseline.params.get(k), params.get(k))
            for k in sorted(set(baseline.params) | set(params))
            if baseline.params.get(k) != params.get(k)
        }
        out.append(f"other parameters (baseline, this profile): {diff}")
    if baseline.mode != mode:
        out.append(f"another mode: the baseline ran in {baseline.mode}, this profile in {mode}")
    if device_kind == "cpu" or (device_kind == "cuda" and baseline.device.kind == "cuda" and device_names):
        from .fingerprint import refusal  # another GPU model, or a GPU's baseline where there is none

        why = refusal(baseline, [] if device_kind == "cpu" else list(device_names or []))
        if why:
            out.append(f"another device: {why}")
    elif device_kind == "cuda" and baseline.device.kind != "cuda":
        out.append(
            f"another device: the baseline ran on the CPU ({baseline.device.name}: CPU wall time), this "
            "profile on a GPU"
        )
    return out


def mismatch(baseline: ProfileResult, result: ProfileResult) -> list[str]:
    """What makes ``baseline`` and ``result`` measure different things (see :func:`mismatch_of`)."""
    return mismatch_of(baseline, result.params, result.mode, result.device.kind, [result.device.name])


def refusal_words(reasons: list[str]) -> str:
    return (
        "the baseline measured something else — "
        + "; ".join(reasons)
        + ": its times are not comparable with this profile's. Profile the baseline again with the same "
        "parameters, device and mode, or pass allow_mismatch (--allow-mismatch) to compare anyway"
    )


def integrity_refusal(result: ProfileResult, baseline: ProfileResult) -> str | None:
    """Why no verdict may be given between the two because either failed its integrity checks or has a
    suspect stage (no kernel recorded, a figure over a device peak: :func:`.peaks.suspect_reasons`), or None."""
    said = []
    for who, r in (("this profile", result), ("the baseline", baseline)):
        after = (r.correctness or {}).get("after_timing") or {}
        failed = [c.get("check", "?") for c in after.get("checks", []) if not c.get("ok")]
        if failed:
            said.append(
                f"{who} failed its integrity checks after timing ({', '.join(failed)}; see its contract)"
            )
        sus = suspect_reasons(r)
        if sus:
            said.append(
                f"{who} has suspect stages ({'; '.join(f'{k}: {v}' for k, v in sus.items())}; see its contract)"
            )
    if not said:
        return None
    return " and ".join(said) + ": its times are not the kernel's work, so no verdict is given"


def samples_ratio(a: Timing | None, b: Timing | None) -> Ratio | None:
    """The bootstrap comparison of two Timings' raw samples (previous ``a``, current ``b``), when both
    kept them: the same timing method, ≥ 4 samples a side; else None."""
    if a is None or b is None or a.method != b.method or len(a.samples_ns) < 4 or len(b.samples_ns) < 4:
        return None
    return compare("previous", [a.samples_ns], "current", [b.samples_ns], resamples=1000)


def against(result: ProfileResult, baseline: ProfileResult, allow_mismatch: bool = False) -> VsBaseline:
    """``result`` against ``baseline``: the speed-up's CI (one stage, or the whole-plan time) and a
    verdict per stage from both profiles' samples and the floor ``result`` carries; refused (no CI, no
    verdict) when either failed its integrity checks, or when they measure different things and
    ``allow_mismatch`` is off."""
    bad = integrity_refusal(result, baseline)
    if bad:
        return VsBaseline(None, (), refused=bad)
    differ = mismatch(baseline, result)
    if differ and not allow_mismatch:
        return VsBaseline(None, (), refused=refusal_words(differ))

    def timing(r: ProfileResult) -> Timing | None:
        return (
            r.plan_total if r.plan_total is not None else (r.stages[0].timing if len(r.stages) == 1 else None)
        )

    whole_pair = (timing(baseline), timing(result))
    whole = samples_ratio(*whole_pair)
    floors = result.noise_floor.get("stages", {}) if result.noise_floor else {}
    prev = {s.name: s for s in baseline.stages}
    stages = []
    for s in result.stages:
        if s.name not in prev:
            continue
        a, b = prev[s.name].timing, s.timing
        same = a is whole_pair[0] and b is whole_pair[1]  # one stage: the whole profile's samples
        ratio = whole if same else samples_ratio(a, b)
        floor = floors.get(s.name)
        spread = 100.0 * max(a.rel_iqr, b.rel_iqr)  # stands in for a floor not measured on this GPU
        j = judge(
            a.median_ns,
            b.median_ns,
            None if ratio is None else (ratio.ci_low, ratio.ci_high),
            (floor or {}).get("pct"),
            spread,
        )
        stages.append(StageVerdict(s.name, a.median_ns, b.median_ns, j, floor))
    return VsBaseline(whole, tuple(stages), mismatch=tuple(differ))

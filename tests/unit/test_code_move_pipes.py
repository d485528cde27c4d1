"""A move of code recomputes each pipe from the code's per-call instruction mix (analysis.diagnosis.moves.
_per_pipe; machines.json's per_call): on the recorded precise-transcendentals pair (H100, 2026-11-25:
libdevice sin/cos on the FMA and ALU pipes, replaced by MUFU.SIN/COS) and on the held-back IEEE-division
recording with the TTIR's one div_rn per step (its recording predates the TTIR: added here as the
compiler emits it), where the XU pipe limits (MUFU.RCP and FCHK, 2 per division by the counters)."""

from pathlib import Path

from kprof_mcp import machines
from kprof_mcp.analysis.assessment import stage_metrics
from kprof_mcp.analysis.diagnosis import moves
from kprof_mcp.analysis.diagnosis.limiter import limiter
from kprof_mcp.analysis.machine_inputs import machine_for
from kprof_mcp.models import ProfileResult

CAL = Path(__file__).resolve().parents[1] / "calibration"


def _metrics(f: Path, ir_ops=None):
    r = ProfileResult.model_validate_json(f.read_text())
    s = r.stages[0]
    if ir_ops is not None:
        s = s.model_copy(update={"resources": s.resources.model_copy(update={"ir_ops": ir_ops})})
        r = r.model_copy(update={"stages": [s]})
    return stage_metrics(s, 1980.0, 1.0, r, machine_for(r))


def _spy(monkeypatch):
    seen = {}
    real = moves._per_pipe

    def spy(m, mv, busy, code_src_ops, clock):
        out = real(m, mv, busy, code_src_ops, clock)
        seen.update(busy=dict(busy), after=out, mv=mv.key)
        return out

    monkeypatch.setattr(moves, "_per_pipe", spy)
    return seen


def test_precise_sin_cos_leave_the_fma_and_alu_pipes_and_keep_their_mufu(monkeypatch):
    """sinf: 14 FMA, 11 ALU, 1 XU (its F2I) precise; __sinf: 1 FMUL, 1 MUFU.SIN: the XU pipe keeps its work."""
    m = _metrics(CAL / "recorded-model" / "precise_transcendentals" / "bad.result.json")
    seen = _spy(monkeypatch)
    got = moves.what_if_moves(m, limiter(m))
    assert got and seen["mv"] == "precise_to_fast_math"
    busy, after = seen["busy"], seen["after"]
    assert after["fma"] < 0.7 * busy["fma"] and after["alu"] < busy["alu"] and after["xu"] >= busy["xu"]


def test_the_division_s_xu_work_goes_with_it(monkeypatch):
    rec = CAL / "recorded-heldout" / "IEEE_division_per_step" / "bad.result.json"
    m = _metrics(rec, [{"kind": "fdiv", "detail": "precise f32", "line": "impl.py:34", "count": 1}])
    lim = limiter(m)
    assert lim.resource == "xu" and lim.bound
    seen = _spy(monkeypatch)
    ((cause, share, facts),) = moves.what_if_moves(m, lim)
    assert cause == "move_work" and facts["move"] == "div_to_rcp_mul"
    # 2 XU ops per division (table) for the calls the FFMAs beyond the model's FLOPs make: the XU pipe
    # keeps at most a quarter of its time, where a uniform share of the issued instructions kept 28 %.
    assert seen["after"]["xu"] < 0.3 * seen["busy"]["xu"]
    assert share > 0.5  # +206 %; measured +725 % (the recording's TTIR-less estimate: none)
    mv = next(x for x in machines.load("sm_90").moves if x.key == "div_to_rcp_mul")
    assert mv.per_call["x/y"]["precise"]["xu"] == 2


def test_without_the_mix_the_uniform_share_stays():
    m = _metrics(CAL / "recorded-model" / "precise_transcendentals" / "bad.result.json")
    mv = next(x for x in m.machine.moves if x.key == "precise_to_fast_math")
    bare = type(mv)(mv.key, mv.src, mv.dst, mv.work, mv.per_op, mv.when, mv.advice)
    assert moves._per_pipe(m, bare, {"fma": 1.0}, 1e9, 1.6e9) == {}

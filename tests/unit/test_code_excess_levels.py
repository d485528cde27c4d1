"""The CUDA-core excess what-if after the thirty-eighth held-back set (judged once before this change: the generic
"cut the issue slots' work" at +27 % for a measured +500 %): sums of sines of large arguments through libdevice
sinf, whose Payne-Hanek path runs on the ALU (3.1e9 integer thread ops against 4.4e8 FP) and reads its 2/pi table
through L2 (66 % of its peak, where the model's bytes need a thousandth of it).

* Expanding code (a libdevice function, an IEEE division) owns the work beyond the model only where a code move
  can take it: its FP instructions pass the code moves' gate (core.CODE_VISIBLE of the thread ops issued).
  Below it, the excess what-if takes the work.
* The memory levels below L1 keep the model's bytes; their traffic beyond those was carried by the loads of the
  instruction stream the what-if shrinks, as the L1's is, and goes with it (catalogue._level_keep)."""

from pathlib import Path

import pytest
from conftest import recorded_metrics

from kprof_mcp.analysis.diagnosis import opportunities
from kprof_mcp.analysis.diagnosis.catalogue import INSTRUCTION_SIDE, _level_keep, excess_core_work
from kprof_mcp.analysis.diagnosis.core import CODE_VISIBLE, code_owns_excess, core_work
from kprof_mcp.analysis.diagnosis.limiter import limiter
from kprof_mcp.analysis.diagnosis.metrics import Metrics

CAL = Path(__file__).resolve().parents[1] / "calibration"
SINES = (
    CAL
    / "recorded-heldout38"
    / "sums_of_sinusoids_of_large_arguments___x_____1_5e5__through_libdevice_sinf_s_Payne_Hanek_slow_path_where_a_"
    "two_constant_Cody_Waite_reduction_to___pi__pi__first_serves" / "bad.result.json"
)


def test_libdevice_code_below_the_code_moves_gate_leaves_its_excess_to_the_excess_what_if():
    m = recorded_metrics(SINES)
    a = m.accounting
    assert any(op.get("kind") == "libdevice" for op in m.ir_ops)
    fp = sum(a.op_counts[c] for c in ("ffma", "fadd", "fmul"))
    assert fp < CODE_VISIBLE * a.inst_executed * a.threads_per_inst < a.op_counts["integer"]
    assert not code_owns_excess(m) and core_work(m)
    lim = limiter(m)
    share, r = excess_core_work(m, lim)
    assert lim.resource == "issue" and r > 50
    # the L2's traffic beyond the model's bytes goes with the code: the issue slots' unused share bounds it
    l2 = next(u for u in lim.uses if u.key == "l2")
    assert l2.util > 0.6 and _level_keep(m, "l2", 1 / r) < 0.05
    # no longer bounded by the L2's whole use (1 - 0.66): by the issue slots' share the code takes
    assert lim.util * (1 - 1 / r) - 1e-9 <= share and share > 1 - l2.util + 0.3
    top = opportunities(m)[0]
    assert top.cause == "move_work" and 250 < top.est_gain_pct < 320  # measured +500 %


def test_code_that_passes_the_gate_still_belongs_to_the_code_moves():
    m = recorded_metrics(SINES)
    a = m.accounting
    heavy = {**a.op_counts, "ffma": 0.2 * a.inst_executed * a.threads_per_inst}
    m2 = Metrics(**{**m.__dict__, "accounting": type(a)(**{**a.__dict__, "op_counts": heavy})})
    assert code_owns_excess(m2) and not core_work(m2)
    no_ir = Metrics(**{**m.__dict__, "ir_ops": ()})
    assert not code_owns_excess(no_ir)


def test_a_level_keeps_the_model_s_bytes():
    m = recorded_metrics(SINES)
    need, moved = m.bytes_model, m.accounting.level_bytes["l2"]
    assert moved > 100 * need
    assert _level_keep(m, "l2", 0.0) == pytest.approx(need / moved)
    assert _level_keep(m, "l2", 1.0) == pytest.approx(1.0)
    assert _level_keep(m, "issue", 0.0) == 1.0 and "l2" not in INSTRUCTION_SIDE
    assert _level_keep(Metrics(**{**m.__dict__, "bytes_model": None}), "l2", 0.0) == 1.0

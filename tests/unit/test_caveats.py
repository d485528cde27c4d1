"""Caveats a contract states without failing a check (issue 37): an output of another dtype than the
reference's (the held-back tampered set's `lowprec`: y in float16 within the tolerance while the byte
model counts float32) and kernels the timed runs did not launch running during them (`sidestream`: the
kernel on a private stream nobody waits for). The recordings are H200 event-mode results of those two
versions (2026-11-26, docs/evidence/tampered-heldback/h200-2026-11-26); `lowprec`'s predates the dtype
fields, so its correctness record is redone here as check_correctness now writes it."""

from pathlib import Path

import torch

from kprof_mcp.analysis.baseline import caveats, dtype_caveats
from kprof_mcp.capture.correctness import check_correctness
from kprof_mcp.models import ProfileResult
from kprof_mcp.render.contract import render_contract

FIX = Path(__file__).resolve().parents[1] / "fixtures"


def test_an_output_of_another_dtype_is_recorded_but_passes():
    ref = torch.linspace(-1, 1, 1000, dtype=torch.float32)
    rep = check_correctness(torch, ref.to(torch.float16), ref, 1e-3)
    assert rep["ok"]
    (e,) = rep["outputs"]
    assert (e["dtype"], e["reference_dtype"]) == ("float16", "float32")
    assert "float16 where the reference returns float32" in dtype_caveats(rep)[0]
    same = check_correctness(torch, ref.clone(), ref, 1e-3)
    assert "dtype" not in same["outputs"][0] and dtype_caveats(same) == []


def test_the_contract_states_the_narrower_output():
    r = ProfileResult.model_validate_json(
        (FIX / "tampered_heldback_lowprec_event_h200.result.json").read_text()
    )
    assert "**Caveat**" not in render_contract(r)  # recorded before the dtype fields
    ref = torch.zeros(8, dtype=torch.float32)
    rec = check_correctness(torch, ref.to(torch.float16), ref, 1e-3)
    r = r.model_copy(update={"correctness": {**r.correctness, "outputs": rec["outputs"]}})
    text = render_contract(r)
    assert "**Caveat**: output 0 is float16 where the reference returns float32" in text


def test_the_contract_states_work_off_the_timed_stream():
    r = ProfileResult.model_validate_json(
        (FIX / "tampered_heldback_sidestream_event_h200.result.json").read_text()
    )
    assert any(w.kind == "concurrency" for w in r.warnings)
    said = caveats(r)
    assert said and "kernels not launched by its timed runs ran during them" in said[0]
    assert (
        "**Caveat**: stage axpb: kernels not launched by its timed runs ran during them" in render_contract(r)
    )

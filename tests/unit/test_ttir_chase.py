"""Chains of dependent memory round trips in a kernel's loops, from its TTIR (kprof_mcp/parsers/ttir_chase.py):
compiled on a CPU for sm_90 by tests/fixtures/ttir/make_chase_ttir.py (three calibration kernels and two loops
written there)."""

from pathlib import Path

import pytest

from kprof_mcp.parsers.ttir import ir_ops

FIX = Path(__file__).resolve().parents[1] / "fixtures"


def _chases(name: str) -> list[tuple[str, str]]:
    ops = ir_ops((FIX / "ttir" / f"chase_{name}.ttir").read_text())
    return sorted((op["detail"], op["line"]) for op in ops if op["kind"] == "chase")


def test_a_linked_list_walk_chains_its_loads_and_its_page_table_fix_does_not():
    # p = next[p]: the next page's address and the next pointer's both need the last load's value
    assert _chases("page_True") == [("address", "impl.py:38"), ("address", "impl.py:40")]
    assert _chases("page_False") == []  # 32 page ids loaded at once from the table: no chain


def test_probing_until_the_key_is_found_chains_the_loop_exit():
    assert _chases("hash") == [("exit", "impl.py:35")]  # while any lane's last probe missed


def test_polling_a_predecessor_chains_the_exit_and_a_look_back_walk_its_addresses():
    assert _chases("scan_False") == [("exit", "impl.py:58")]  # spin until the flag says 'inclusive'
    # decoupled look-back: which predecessor to read next depends on the flag just read
    assert _chases("scan_True") == [("address", "impl.py:49"), ("exit", "impl.py:48")]


@pytest.mark.parametrize("name", ["gather_loop", "loaded_lengths"])
def test_loops_that_load_every_iteration_without_waiting_on_the_last_are_no_chain(name):
    """A gather (idx = load(a + i); v = load(b + idx)) and a running sum of loaded lengths: each iteration's
    loads need nothing the previous one loaded."""
    assert _chases(name) == []


@pytest.mark.parametrize("ttir", ["dots.ttir", "mixed.ttir"])
def test_kernels_without_loops_or_with_pointer_increments_have_none(ttir):
    assert not [op for op in ir_ops((FIX / "ttir" / ttir).read_text()) if op["kind"] == "chase"]


def test_a_recorded_gemm_with_a_k_loop_has_none():
    for f in (FIX / "h100_event" / "matmul").rglob("kernel.ttir"):
        assert not [op for op in ir_ops(f.read_text()) if op["kind"] == "chase"], f


def _with_ttir(pair: str, role: str, ttir: str):
    """A recorded result (tests/calibration) with its kernel's ir_ops read again from the TTIR the same kernel
    compiles to (the recordings predate the chase ops)."""
    import sys

    cal = FIX.parent / "calibration"
    sys.path[:0] = [str(cal), str(cal.parent)]
    import table

    r = table.load(cal / pair / f"{role}.result.json")
    st = r.stages[0]
    ops = ir_ops((FIX / "ttir" / f"chase_{ttir}.ttir").read_text())
    st = st.model_copy(update={"resources": st.resources.model_copy(update={"ir_ops": ops})})
    r = r.model_copy(update={"stages": [st, *r.stages[1:]]})
    return table.assess(r).opportunities


def test_a_linked_list_walk_is_named_a_chain_of_round_trips():
    """The tenth held-back set's page gather walked by the allocator's next pointers (256 programs, warps
    waiting on memory 97 % of their time, DRAM at 8 %): with its TTIR's chain, the chain is opportunity 1,
    where the grid's occupancy was (+732 %); the fix, a page table, measured +693 % on an H200."""
    opps = _with_ttir("recorded-heldout10/pages_found_by_following_a_linked_list", "bad", "page_True")
    top = opps[0]
    assert top.cause == "latency" and top.name.startswith("Break the chain of dependent loads at impl.py:38")
    assert 693.0 / 2 < top.est_gain_pct < 2 * 693.0
    fixed = _with_ttir("recorded-heldout10/pages_found_by_following_a_linked_list", "good", "page_False")
    assert not any(o.name.startswith("Break the chain") for o in fixed)


def test_a_chain_in_a_stage_bound_by_a_resource_is_that_resources():
    """The hash table probed at 97 % load: its loop's exit is a chain, but L1 is at 82 % of its peak — the
    probes' traffic is the limit, not their latency: no chain opportunity."""
    opps = _with_ttir("recorded-heldout11/hash_table_probed_at_a_97___load_factor", "bad", "hash")
    assert not any(o.name.startswith("Break the chain") for o in opps)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "scf.while (%a = %b) : {\n scf.condition(%a) %a\n} do {\n",  # cut short
        "%x = scf.for %i = %c0 to %n step %c1 iter_args(%p = %q) -> (i32) {\n%y = tt.load %p\nscf.yield %y\n",
        "}}}} {{ %a = tt.load %a : x loc(#loc\n" * 50,
    ],
)
def test_text_it_cannot_follow_gives_no_chain_and_no_error(text):
    from kprof_mcp.parsers.ttir_chase import chases

    assert isinstance(chases(text, {}), list)
    assert isinstance(ir_ops(text), list)

"""The static instruction mix of a real sm_90 SASS listing: a Triton bf16 matmul with a
float32 atomic epilogue, compiled by Triton's ptxas for sm_90 and listed by its cuobjdump
(tests/fixtures/sass/make_matmul_sm90.py; ``cuobjdump -sass matmul.cubin``)."""

import gzip

from conftest import FIXTURES

from kprof_mcp.parsers.sass import classify, instruction_mix

SASS = gzip.decompress((FIXTURES / "sass" / "matmul_sm90.sass.gz").read_bytes()).decode()


def test_matmul_listing_is_counted_by_class():
    mix = instruction_mix(SASS)
    c = mix.classes
    assert mix.opcodes["HGMMA"] == 4 and c["tensor_core"] == 4  # wgmma on the tensor cores
    assert mix.opcodes["LDG"] == 64 and c["global_load"] == 64
    assert c["shared_store"] == 96 and c["shared_load"] == 32
    assert mix.opcodes["ATOMG"] == 64 and c["atomic"] == 64  # tl.atomic_add's epilogue
    assert c["branch"] == 5 and mix.opcodes["EXIT"] == 1
    assert "local_spill" not in c and "fp_arith" not in c  # no spills; the FMAs are on the tensor cores
    assert c["integer"] > 700 and c["uniform"] > 80
    assert sum(c.values()) == mix.total == 1512  # every /*addr*/ line of the listing
    assert list(c)[:2] == ["tensor_core", "integer"]  # report order, not counts


def test_opcodes_with_predicates_and_modifiers():
    text = (
        "        /*0100*/  @!P0 LDG.E.128 R4, desc[UR4][R2.64] ;\n"
        "        /*0110*/  @UP1 UTMALDG.2D [UR8], [UR4] ;\n"
        "        /*0120*/  HMMA.16816.F32.BF16 R8, R12, R16, R8 ;\n"
        "        /*0130*/  FFMA R0, R1, R2, R0 ;\n"
        "        /*0140*/  REDG.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR6][R2.64], R5 ;\n"
        "        /*0150*/  STL [R1+0x4], R9 ;\n"
    )
    mix = instruction_mix(text)
    assert mix.classes == {
        "tensor_core": 1,
        "fp_arith": 1,
        "global_load": 1,
        "local_spill": 1,
        "async_copy_tma": 1,
        "atomic": 1,
    }
    assert classify("ULDC") == "uniform" and classify("S2R") == "other" and classify("NOP") == "nop"

"""The static instruction mix of a real sm_90 SASS listing: a Triton bf16 matmul with a
float32 atomic epilogue, compiled by Triton's ptxas for sm_90 and listed by its cuobjdump
(tests/fixtures/sass/make_matmul_sm90.py; ``cuobjdump -sass matmul.cubin``), and two calibration kernels
(make_calib_mixes.py)."""

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
    assert "local_spill" not in c and "fp32" not in c  # no spills; the FMAs are on the tensor cores
    assert c["integer"] > 700 and c["uniform"] > 80
    assert sum(c.values()) == mix.total == 1512  # every /*addr*/ line of the listing
    assert list(c)[:2] == ["tensor_core", "integer"]  # report order, not counts
    # The K loop (one backward branch): the wgmma, the next tiles' loads and stores, its index math.
    loop = mix.loop_classes
    assert loop["tensor_core"] == 4 and loop["global_load"] == 64 and loop["shared_store"] == 64
    assert "atomic" not in loop and sum(loop.values()) == 292  # the epilogue's atomics run once


def listing(name: str) -> str:
    return gzip.decompress((FIXTURES / "sass" / f"{name}.sass.gz").read_bytes()).decode()


def test_fp64_chain_by_pipe_and_its_loops():
    """calib_fp64 v0 (tests/calibration/kernels; tests/fixtures/sass/make_calib_mixes.py, Triton 3.6):
    an FMA chain in float64, 16 steps unrolled per trip, then the remainder loops."""
    mix = instruction_mix(listing("calib_fp64_v0_sm90"))
    assert mix.classes["fp64"] == mix.opcodes["DFMA"] == 192 and "fp32" not in mix.classes
    assert mix.classes["conversion"] == mix.opcodes["F2F"] == 18  # to and from fp32, outside the loops
    # Three loops (the unrolled one and two remainders): their DFMAs, a few integer and branch
    # instructions; the loads, stores and conversions run once. The trailing "BRA self" is no loop.
    assert mix.loop_classes == {"fp64": 168, "integer": 6, "branch": 3}


def test_global_and_shared_atomics_apart():
    """calib_histogram v1: a histogram privatised in shared memory (ATOMS), then one global reduction per
    bin (REDG) and the completion counter's ATOMGs; no loop."""
    mix = instruction_mix(listing("calib_histogram_v1_sm90"))
    assert mix.classes["atomic_shared"] == mix.opcodes["ATOMS"] == 8
    assert mix.classes["atomic"] == mix.opcodes["REDG"] + mix.opcodes["ATOMG"] == 3
    assert mix.loop_classes == {}


def test_loops_from_nvdisasm_labels():
    text = (
        "        /*0000*/  MOV R1, c[0x0][0x28] ;\n"
        "        .L_x_0:\n"
        "        /*0010*/  DFMA R2, R2, R4, R6 ;\n"
        "        /*0020*/  MUFU.RCP R8, R2 ;\n"
        "        /*0030*/  @P0 BRA `(.L_x_0) ;\n"
        "        /*0040*/  EXIT ;\n"
        "        .L_x_1:\n"
        "        /*0050*/  BRA `(.L_x_1);\n"
    )
    mix = instruction_mix(text)
    assert mix.loop_classes == {"fp64": 1, "mufu": 1, "branch": 1}


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
        "fp32": 1,
        "global_load": 1,
        "local_spill": 1,
        "async_copy_tma": 1,
        "atomic": 1,
    }
    assert classify("ULDC") == "uniform" and classify("S2R") == "other" and classify("NOP") == "nop"

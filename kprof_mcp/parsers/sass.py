"""A static instruction mix from a SASS listing (``cuobjdump -sass`` or ``nvdisasm`` of a
kernel's cubin; Triton ships both in ``triton/backends/nvidia/bin``): each instruction of the
listing counted once by its opcode's class. It is the code's shape (how many tensor-core,
FMA, memory, atomic, barrier instructions the compiler emitted), not executed counts: a loop
body counts once however often it runs.

Pure: text in, counts out. Tested on a real sm_90 listing (``tests/fixtures/sass``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

LABEL = "static instruction mix (SASS listing, not executed counts)"

# Each class and its opcodes (the base opcode: before the first '.'), in report order.
CLASSES: dict[str, frozenset[str]] = {
    "tensor_core": frozenset(
        {"HMMA", "HGMMA", "WGMMA", "IMMA", "IGMMA", "DMMA", "QGMMA", "BGMMA", "UTCHMMA", "UTCQMMA", "UTCIMMA"}
    ),
    "fp_arith": frozenset(
        {
            "FFMA",
            "FMUL",
            "FADD",
            "FMNMX",
            "FSETP",
            "FSEL",
            "FCHK",
            "FSWZADD",
            "MUFU",
            "HFMA2",
            "HMUL2",
            "HADD2",
            "HMNMX2",
            "HSETP2",
            "DFMA",
            "DMUL",
            "DADD",
            "DSETP",
            "FFMA2",
            "FMUL2",
            "FADD2",
        }
    ),
    "integer": frozenset(
        {
            "IMAD",
            "IADD3",
            "IADD",
            "LOP3",
            "LEA",
            "SHF",
            "ISETP",
            "IMNMX",
            "IABS",
            "POPC",
            "FLO",
            "VIADD",
            "VIMNMX",
            "IDP",
            "IMUL",
            "SGXT",
            "BMSK",
            "BREV",
            "LOP",
            "SHL",
            "SHR",
            "PRMT",
            "SEL",
        }
    ),
    "conversion": frozenset({"F2F", "F2I", "I2F", "I2FP", "F2FP", "I2I", "FRND"}),
    "global_load": frozenset({"LDG", "LD"}),
    "global_store": frozenset({"STG", "ST"}),
    "shared_load": frozenset({"LDS", "LDSM"}),
    "shared_store": frozenset({"STS", "STSM"}),
    "local_spill": frozenset({"LDL", "STL"}),
    "async_copy_tma": frozenset(
        {"LDGSTS", "LDGDEPBAR", "UTMALDG", "UTMASTG", "UTMAPF", "UBLKCP", "UTMAREDG"}
    ),
    "atomic": frozenset({"ATOM", "ATOMG", "ATOMS", "RED", "REDG", "REDAS"}),
    "branch": frozenset(
        {"BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "WARPSYNC", "BREAK"}
    ),
    "barrier_fence": frozenset(
        {"BAR", "SYNCS", "MEMBAR", "ERRBAR", "CGAERRBAR", "FENCE", "DEPBAR", "WARPGROUP", "ARRIVES", "CCTL"}
    ),
}
_CLASS_OF = {op: name for name, ops in CLASSES.items() for op in ops}
# "/*0a40*/   @!P0 LDG.E.128 R4, desc[UR4][R2.64] ;" (cuobjdump) or "/*0a40*/ LDG..." (nvdisasm)
_INSN = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P(?:T|\d+)\s+)?([A-Z][A-Z0-9_]*)")


@dataclass
class SassMix:
    """Instructions of a listing by class (``CLASSES``; the rest: ``uniform`` for the uniform
    datapath's U* opcodes, ``other``), and by opcode."""

    classes: dict[str, int] = field(default_factory=dict)
    opcodes: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.opcodes.values())


def classify(opcode: str) -> str:
    base = opcode.split(".", 1)[0]
    if base in _CLASS_OF:
        return _CLASS_OF[base]
    if base == "NOP":
        return "nop"
    return "uniform" if base.startswith("U") else "other"


def instruction_mix(text: str) -> SassMix:
    """Count the instructions of a SASS listing by class (NOPs kept apart, as ``nop``)."""
    mix = SassMix()
    for m in _INSN.finditer(text):
        op = m.group(1)
        mix.opcodes[op] = mix.opcodes.get(op, 0) + 1
        c = classify(op)
        mix.classes[c] = mix.classes.get(c, 0) + 1
    order = [*CLASSES, "uniform", "other", "nop"]
    mix.classes = {c: mix.classes[c] for c in order if c in mix.classes}
    return mix

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

# Each class and its opcodes (the base opcode: before the first '.'), in report order. The
# floating-point classes follow the pipe that executes them (the machine model weighs each pipe's
# share of the issued instructions: analysis/diagnosis/static_mix.py): ``fp32`` on the FMA pipe,
# ``fp16`` packed half2 math, ``fp64`` on the FP64 pipe, ``mufu`` on the XU pipe, ``fp_compare``
# (min/max, compare, select, range checks) on the ALU. ``atomic`` is global atomics and reductions
# (at the L2), ``atomic_shared`` shared-memory ones. ``fp_arith`` is the single floating-point class of
# listings counted before that split (recordings of 2026-11-25): no opcode maps to it now; it stays
# here so such a mix keeps its place in a report.
CLASSES: dict[str, frozenset[str]] = {
    "tensor_core": frozenset(
        {"HMMA", "HGMMA", "WGMMA", "IMMA", "IGMMA", "DMMA", "QGMMA", "BGMMA", "UTCHMMA", "UTCQMMA", "UTCIMMA"}
    ),
    "fp32": frozenset({"FFMA", "FMUL", "FADD", "FFMA2", "FMUL2", "FADD2", "FSWZADD"}),
    "fp16": frozenset({"HFMA2", "HMUL2", "HADD2"}),
    "fp64": frozenset({"DFMA", "DMUL", "DADD"}),
    "mufu": frozenset({"MUFU"}),
    "fp_compare": frozenset({"FMNMX", "FSETP", "FSEL", "FCHK", "HMNMX2", "HSETP2", "DSETP", "DMNMX"}),
    "fp_arith": frozenset(),
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
    "atomic": frozenset({"ATOM", "ATOMG", "RED", "REDG"}),
    "atomic_shared": frozenset({"ATOMS", "REDAS"}),
    "branch": frozenset(
        {"BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "WARPSYNC", "BREAK"}
    ),
    "barrier_fence": frozenset(
        {"BAR", "SYNCS", "MEMBAR", "ERRBAR", "CGAERRBAR", "FENCE", "DEPBAR", "WARPGROUP", "ARRIVES", "CCTL"}
    ),
}
_CLASS_OF = {op: name for name, ops in CLASSES.items() for op in ops}
# "/*0a40*/   @!P0 LDG.E.128 R4, desc[UR4][R2.64] ;" (cuobjdump) or "/*0a40*/ LDG..." (nvdisasm)
_INSN = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P(?:T|\d+)\s+)?([A-Z][A-Z0-9_]*)([^;]*)")
# A branch's target: "BRA 0x280" (cuobjdump) or "BRA `(.L_x_3)" (nvdisasm, with ".L_x_3:" label lines).
_TARGET = re.compile(r"(?:0x([0-9a-f]+)|`\((\.L_x_\d+)\))")
_LABEL = re.compile(r"^\s*(\.L_x_\d+):", re.M)


@dataclass
class SassMix:
    """Instructions of a listing by class (``CLASSES``; the rest: ``uniform`` for the uniform
    datapath's U* opcodes, ``other``), and by opcode. ``loop_classes``: the same count over the
    instructions inside the listing's loops only (every range a backward branch closes, in any
    function of the listing; empty when it has none): the code that runs once per trip, where a
    kernel with loops spends its time."""

    classes: dict[str, int] = field(default_factory=dict)
    opcodes: dict[str, int] = field(default_factory=dict)
    loop_classes: dict[str, int] = field(default_factory=dict)

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


def _ordered(counts: dict[str, int]) -> dict[str, int]:
    order = [*CLASSES, "uniform", "other", "nop"]
    return {c: counts[c] for c in order if c in counts}


def _functions(text: str) -> list[list[tuple[int, str, str]]]:
    """The listing's instructions as (address, opcode, operands), one list per function (cuobjdump
    starts each at address 0; nvdisasm's labels name their next instruction's address)."""
    labels: dict[str, int] = {}
    pending: list[str] = []
    funcs: list[list[tuple[int, str, str]]] = [[]]
    events = sorted(
        [(m.start(), "label", m) for m in _LABEL.finditer(text)]
        + [(m.start(), "insn", m) for m in _INSN.finditer(text)],
        key=lambda e: e[0],
    )
    for _, kind, m in events:
        if kind == "label":
            pending.append(m.group(1))
            continue
        addr = int(m.group(1), 16)
        if funcs[-1] and addr <= funcs[-1][-1][0]:
            funcs.append([])
        for name in pending:
            labels[name] = addr
        pending = []
        operands = m.group(3)
        t = _TARGET.search(operands)
        if t is not None and t.group(2):
            operands = f"0x{labels.get(t.group(2), -1):x}" if t.group(2) in labels else operands
        funcs[-1].append((addr, m.group(2), operands))
    return funcs


def _loop_ranges(func: list[tuple[int, str, str]]) -> list[tuple[int, int]]:
    """(first, last) addresses of each loop: a branch to an earlier address closes one (a branch to
    itself, the listing's trailing trap, does not)."""
    out = []
    for addr, op, operands in func:
        if op.split(".", 1)[0] not in ("BRA", "JMP", "BRX", "JMX"):
            continue
        t = _TARGET.search(operands)
        if t is not None and t.group(1):
            target = int(t.group(1), 16)
            if target < addr:
                out.append((target, addr))
    return out


def instruction_mix(text: str) -> SassMix:
    """Count the instructions of a SASS listing by class (NOPs kept apart, as ``nop``), over the
    whole listing and over its loops."""
    mix = SassMix()
    loops: dict[str, int] = {}
    for func in _functions(text):
        ranges = _loop_ranges(func)
        for addr, op, _ in func:
            mix.opcodes[op] = mix.opcodes.get(op, 0) + 1
            c = classify(op)
            mix.classes[c] = mix.classes.get(c, 0) + 1
            if any(lo <= addr <= hi for lo, hi in ranges):
                loops[c] = loops.get(c, 0) + 1
    mix.classes = _ordered(mix.classes)
    mix.loop_classes = _ordered(loops)
    return mix

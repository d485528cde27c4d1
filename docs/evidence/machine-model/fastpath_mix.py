"""Instruction counts on the fast path of CUDA math functions, from SASS (no GPU needed).

Compiles ``math_kernels.cu`` (one kernel per function: ``o[i] = f(a[i], b[i])``) with nvcc for
each architecture, disassembles it (cuobjdump), walks each kernel's fast path (a conditional
forward branch is taken: that is how the compiler skips a rare slow path, e.g. sinf's
Payne-Hanek reduction for |x| >= 105615 or the division slow-path call; a backward branch is
not taken; CALLs are not followed) and counts the walked instructions by the Nsight Compute
pipe that issues them, minus those of the same kernel that only copies (``k_copy``, ``k_d_copy``, ``k_i_copy``, ``k_l_copy``:
``o[i] = a[i] + 0 * b[i]`` for floats, ``o[i] = a[i]`` for integers).

Usage: python fastpath_mix.py [sm ...]    (needs nvcc, and cuobjdump on PATH or Triton's)
Writes the table (JSON) to stdout.
"""

from __future__ import annotations

import glob
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
# Opcode -> Nsight Compute pipe (Kernel Profiling Guide, "Pipelines"): fma = FP32 add/mul/fma and
# IMAD/IMUL; alu = integer add/logic/shift/compare, float compare/min/max/select; xu = MUFU and
# int<->float conversions; fp64 = D*; fp16 = H*2; cbu = branches and convergence; lsu = memory.
PIPE = {
    "FFMA": "fma",
    "FMUL": "fma",
    "FADD": "fma",
    "IMAD": "fma",
    "IMUL": "fma",
    "FFMA2": "fma",
    "FMUL2": "fma",
    "FADD2": "fma",
    "FSWZADD": "fma",
    "MUFU": "xu",
    "F2I": "xu",
    "I2F": "xu",
    "F2F": "xu",
    "FRND": "xu",
    "POPC": "xu",
    "FLO": "xu",
    "BREV": "xu",
    "DFMA": "fp64",
    "DMUL": "fp64",
    "DADD": "fp64",
    "DSETP": "fp64",
    "HFMA2": "fp16",
    "HMUL2": "fp16",
    "HADD2": "fp16",
    "BRA": "cbu",
    "BSSY": "cbu",
    "BSYNC": "cbu",
    "EXIT": "cbu",
    "CALL": "cbu",
    "RET": "cbu",
    "WARPSYNC": "cbu",
    "LDG": "lsu",
    "STG": "lsu",
    "LDL": "lsu",
    "STL": "lsu",
    "LDS": "lsu",
    "STS": "lsu",
    "LDC": "lsu",
}
INSN = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P(?:T|\d+)\s+)?([A-Z][A-Z0-9_]*)([^;]*);")


def pipe(op: str) -> str:
    if op in PIPE:
        return PIPE[op]
    if op.startswith("U") or op in ("S2UR", "R2UR"):
        return "uniform"
    if op == "NOP":
        return "nop"
    return "alu"  # FSETP FSEL FMNMX ISETP IADD3 VIADD LOP3 SHF LEA SEL MOV PRMT I2FP ...


def kernels(sass: str) -> dict[str, list[tuple[int, bool, str, str]]]:
    out: dict[str, list[tuple[int, bool, str, str]]] = {}
    cur = None
    for line in sass.splitlines():
        m = re.search(r"Function : (\w+)", line)
        if m:
            cur = out.setdefault(m.group(1), [])
            continue
        m = INSN.search(line)
        if m and cur is not None:
            cur.append((int(m.group(1), 16), bool(m.group(2)), m.group(3), m.group(4)))
    return out


def fast_path(code: list[tuple[int, bool, str, str]]) -> list[str]:
    at = {addr: i for i, (addr, *_rest) in enumerate(code)}
    i, walked, steps = 0, [], 0
    while i < len(code) and steps < 10000:
        steps += 1
        addr, pred, op, rest = code[i]
        walked.append(op)
        if op == "EXIT" and not pred:
            break
        if op == "BRA":
            target = int(re.search(r"0x([0-9a-f]+)", rest).group(1), 16)
            if target > addr or not pred:  # forward (skip the rare path) or unconditional
                i = at[target]
                continue
        i += 1
    return walked


def counts(ops: list[str]) -> dict[str, int]:
    c: dict[str, int] = {}
    for op in ops:
        p = pipe(op)
        c[p] = c.get(p, 0) + 1
    return c


def main(archs: list[str]) -> None:
    tool = shutil.which("cuobjdump") or next(
        iter(
            glob.glob(
                str(Path(sys.prefix) / "lib/python3*/site-packages/triton/backends/nvidia/bin/cuobjdump")
            )
        ),
        "cuobjdump",
    )
    table = {}
    with tempfile.TemporaryDirectory() as tmp:
        for sm in archs:
            cubin = Path(tmp) / f"{sm}.cubin"
            subprocess.run(
                [
                    "nvcc",
                    "-diag-suppress",
                    "177",
                    f"-arch=sm_{sm}",
                    "-cubin",
                    "-O3",
                    "-o",
                    str(cubin),
                    str(HERE / "math_kernels.cu"),
                ],
                check=True,
            )
            sass = subprocess.run(
                [tool, "-sass", str(cubin)], check=True, capture_output=True, text=True
            ).stdout
            ks = kernels(sass)
            row = {}
            for name, code in sorted(ks.items()):
                if name.endswith("_copy"):
                    continue
                prefix = next((p for p in ("k_d_", "k_i_", "k_l_") if name.startswith(p)), "k_")
                base = counts(fast_path(ks[prefix + "copy"]))
                c = counts(fast_path(code))
                row[name.removeprefix("k_")] = {
                    p: c.get(p, 0) - base.get(p, 0)
                    for p in sorted(set(c) | set(base))
                    if c.get(p, 0) != base.get(p, 0)
                }
            table[f"sm_{sm}"] = row
    json.dump(table, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main(sys.argv[1:] or ["80", "86", "89", "90", "100", "120"])

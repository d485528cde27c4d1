"""What a Triton kernel's TTIR says its work is, by source line: the static evidence the machine model
(issue 36) weighs beside the counters — which pipe can legally take the limiter's work, and the line
an agent must edit.

Each operation of interest is reported as ``{"kind", "detail", "line", "count"}`` (count: occurrences in
the IR at that line, not executions):

* ``dot``: ``tt.dot`` with its operand type and input precision (``f32 ieee`` runs on the FMA pipes;
  ``f32 tf32``, ``bf16``, ``f16``, ``f8`` on tensor cores; ``f64`` on DMMA where the chip has it).
  Triton also turns a broadcast multiply-and-sum into a ``tt.dot``.
* ``libdevice``: a ``tt.extern_elementwise`` call (``__nv_sinf``, ``__nv_powf``...): libdevice's precise
  functions, polynomial code on the FMA pipe; ``math``: ``math.exp``/``math.sin``... (the fast path:
  MUFU approximations on the XU pipe).
* ``fdiv``/``fsqrt``: an IEEE-rounded division or square root (``tl.div_rn``/``tl.sqrt_rn``: a
  reciprocal, Newton steps on the FMA pipe, a check and a slow path; a plain ``/`` is ``div.full.f32``,
  cheap, and not listed); ``f64``: double-precision arithmetic (``arith.*f`` on ``f64``); ``int_div``: integer division or
  remainder (``arith.divsi/remsi/divui/remui``; tens of ALU/FMA-pipe instructions each, more on i64);
  ``i64``: other 64-bit integer arithmetic (index math); ``atomic``: ``tt.atomic_rmw``/``tt.atomic_cas``;
  ``chase``: a loop whose next load's address (``address``) or whose going on (``exit``) needs a value the
  previous iteration loaded (:mod:`.ttir_chase`).

Pure: TTIR text in, facts out.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import PurePath

from .ttir_chase import chases

_LOC_DEF = re.compile(r'^#(loc\d*) = loc\((.*)\)\s*$')
_FILE_LINE = re.compile(r'^"([^"]*)":(\d+)(?::\d+)?')
_NAMED = re.compile(r'^"[^"]*"\(#(loc\d*)\)')
_CALLSITE = re.compile(r"^callsite\(#loc\d*\s+at\s+#(loc\d*)\)")  # the caller's line: the user's code
_FUSED = re.compile(r"^fused\[#(loc\d*)")
_OP_LOC = re.compile(r"loc\(#(loc\d*)\)\s*$")
_RESULT_TYPE = re.compile(r":\s*(?:\([^)]*\)\s*->\s*)?tensor<[^>]*x(\w+)>|:\s*(\w+)\s+loc\(")
_ARITH_F = re.compile(r"\barith\.(addf|subf|mulf|divf|maximumf|minimumf|maxnumf|minnumf|negf|cmpf|fma)\b")
_ARITH_I = re.compile(r"\barith\.(addi|subi|muli|shli|shrsi|shrui|andi|ori|xori|cmpi)\b")
_INT_DIV = re.compile(r"\barith\.(divsi|remsi|divui|remui|floordivsi|ceildivsi)\b")
_MATH = re.compile(r"\bmath\.(\w+)\b")
_EXTERN = re.compile(r'tt\.extern_elementwise.*symbol = "([^"]+)"')
_DOT = re.compile(r"\btt\.dot(?:_scaled)?\b")
_PRECISION = re.compile(r"inputPrecision = (\w+)")
_DOT_TYPE = re.compile(r":\s*tensor<[^>]*x(\w+)>\s*\*")
_PRECISE = re.compile(r"\btt\.precise_(divf|sqrt)\b")
_ATOMIC = re.compile(r"\btt\.atomic_(rmw|cas)\s*(\w+)?")


def _locations(lines: list[str]) -> dict[str, str]:
    """``loc17`` -> ``kernel.py:11`` (named locations resolved to the file line they wrap)."""
    raw: dict[str, str] = {}
    for ln in lines:
        m = _LOC_DEF.match(ln.strip())
        if m:
            raw[m.group(1)] = m.group(2)
    out: dict[str, str] = {}

    def resolve(name: str, depth: int = 0) -> str:
        if name in out or depth > 20:
            return out.get(name, "")
        body = raw.get(name, "")
        fl = _FILE_LINE.match(body)
        if fl:
            out[name] = f"{PurePath(fl.group(1)).name}:{fl.group(2)}"
        else:
            nm = _NAMED.match(body) or _CALLSITE.match(body) or _FUSED.match(body)
            out[name] = resolve(nm.group(1), depth + 1) if nm else ""
        return out[name]

    for name in raw:
        resolve(name)
    return out


def _elem_type(line: str) -> str:
    m = _RESULT_TYPE.search(line)
    return (m.group(1) or m.group(2) or "") if m else ""


def ir_ops(ttir: str) -> list[dict]:
    """The operations of interest in ``ttir``, one entry per (kind, detail, source line)."""
    lines = ttir.splitlines()
    locs = _locations(lines)
    counts: Counter[tuple[str, str, str]] = Counter()
    for ln in lines:
        s = ln.strip()
        if not s or s.startswith("#loc") or "=" not in s and "tt.atomic" not in s and "tt.store" not in s:
            continue
        m = _OP_LOC.search(s)
        where = locs.get(m.group(1), "") if m else ""
        found: tuple[str, str] | None = None
        if _DOT.search(s):
            t = _DOT_TYPE.search(s)
            dtype = t.group(1) if t else ""
            p = _PRECISION.search(s)
            # The input precision means something only for fp32 operands (tf32, tf32x3 or ieee); fp16/bf16/fp8
            # dots carry the attribute's default, which says nothing.
            prec = (p.group(1) if p else "ieee") if dtype == "f32" else ""
            found = ("dot", f"{dtype} {prec}".strip())
        elif e := _EXTERN.search(s):
            found = ("libdevice", e.group(1))
        elif a := _ATOMIC.search(s):
            found = ("atomic", a.group(2) or a.group(1))
        elif d := _INT_DIV.search(s):
            found = ("int_div", f"{d.group(1)} {_elem_type(s)}".strip())
        elif mm := _MATH.search(s):
            found = ("math", mm.group(1))
        elif (f := _ARITH_F.search(s)) and _elem_type(s) == "f64":
            found = ("f64", f.group(1))
        elif p := _PRECISE.search(s):
            # tl.div_rn / tl.sqrt_rn: IEEE-rounded (div.rn.f32: a reciprocal, Newton steps, a check and a
            # slow path); a plain `/` is arith.divf, div.full.f32 (a reciprocal and a multiply): cheap.
            found = ("fdiv" if p.group(1) == "divf" else "fsqrt", f"precise {_elem_type(s)}".strip())
        elif (i := _ARITH_I.search(s)) and _elem_type(s) == "i64":
            found = ("i64", i.group(1))
        if found:
            counts[(found[0], found[1], where)] += 1
    return [
        {"kind": k, "detail": d, "line": w, "count": n}
        for (k, d, w), n in sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][1]))
    ] + chases(ttir, locs)

"""The model of the machine (``machines.json``): per architecture, each execution pipe's and memory
level's throughput per SM per clock, and which pipe can do which work instead of another (a *move*),
with the condition under which the move is legal. docs/machine-model.md gives every figure's source.

Measured peaks (``kprof device --calibrate``) are recorded beside the table, one file per device
(``calibrated/<device key>.json``, shipped for the devices we measured); :func:`load` uses a measured
rate where one exists and keeps the table's beside it (:attr:`Rate.table`), so the difference can be
shown. Pure data: nothing here reads a device.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class Rate:
    """One pipe's or memory level's peak: ``rate`` per SM per clock (a chip-wide level: per clock;
    DRAM: None, its bandwidth is the device's ``peak_gbps``), in ``unit``; ``table`` is the
    documented figure when ``rate`` was measured on this device."""

    key: str
    rate: float | None
    unit: str
    source: str
    counter: str | None = None  # the accounting's pipe whose utilisation counts this one's work
    table: float | None = None  # the documented rate, when ``rate`` is a measured one
    measured: bool = False


@dataclass(frozen=True)
class Move:
    """Work ``src`` does that ``dst`` can do instead: ``per_op`` units of ``dst`` work per unit of
    ``src`` work, legal ``when`` (in words); ``work`` says which of the source pipe's work moves
    (``any``: all of it; ``dot``: dot products; ``transcendental``; ``index``: integer index math)."""

    key: str
    src: str
    dst: str
    work: str
    per_op: float
    when: str
    advice: str
    source: str = ""
    # Per function, the pipes' ops of its precise and fast versions (``{"powf": {"precise": {"fma": 37,
    # ...}, "fast": {"xu": 2, ...}}}``): the move's per_op for the functions a kernel calls.
    per_call: dict = field(default_factory=dict, hash=False, compare=False)

    def per_op_for(self, names: list[str]) -> float:
        """``per_op`` for a kernel calling ``names`` (libdevice symbols, one per call site): the fast
        versions' destination ops per source op of the precise ones, over the functions the table
        counts; the move's own per_op where it counts none."""
        src = dst = 0.0
        for n in names:
            fn = self.per_call.get(n.removeprefix("__nv_"))
            if isinstance(fn, dict) and isinstance(fn.get("precise"), dict):
                fast = next((v for k, v in fn.items() if k.startswith("fast") and isinstance(v, dict)), {})
                src += float(fn["precise"].get(self.src, 0.0))
                dst += float(fast.get(self.dst, 0.0))
        return dst / src if src and dst else self.per_op


@dataclass(frozen=True)
class Machine:
    arch: str
    name: str
    pipes: dict[str, Rate] = field(hash=False)
    levels: dict[str, Rate] = field(hash=False)
    moves: tuple[Move, ...] = ()
    device_key: str | None = None  # whose measured peaks are folded in (None: the table alone)

    def rate(self, key: str) -> float | None:
        r = self.pipes.get(key) or self.levels.get(key)
        return r.rate if r is not None else None

    def moves_from(self, src: str) -> list[Move]:
        return [mv for mv in self.moves if mv.src == src and mv.dst in self.pipes]

    def differences(self) -> list[tuple[str, float, float]]:
        """(key, table rate, measured rate) where a measured rate differs from the table by > 3 %."""
        out = []
        for r in list(self.pipes.values()) + list(self.levels.values()):
            if r.measured and r.table and r.rate and abs(r.rate / r.table - 1.0) > 0.03:
                out.append((r.key, r.table, r.rate))
        return out


def _read(name: str) -> dict | None:
    try:
        return json.loads(resources.files("kprof_mcp").joinpath(name).read_text())
    except (FileNotFoundError, OSError, ValueError):
        return None


@cache
def table() -> dict:
    """The raw table (``{}`` when it is absent: then no machine is modelled)."""
    return _read("machines.json") or {}


@cache
def calibrated(device_key: str | None) -> dict:
    """The measured peaks recorded for ``device_key`` (``kprof device --calibrate``), or ``{}``."""
    if not device_key:
        return {}
    return _read(f"calibrated/{device_key}.json") or {}


# The tensor-core dtypes a library GEMM's measured rates (``calibrated/<key>_gemm.json``, bf16) stand for, and
# each one's rate relative to bf16's in the machine table (fp16 the same; TF32 half; FP8 twice).
_GEMM_TENSOR = {
    "bfloat16": "tensor_bf16",
    "float16": "tensor_fp16",
    "float32": "tensor_tf32",
    "float8": "tensor_fp8",
}


@cache
def _gemm_points(device_key: str | None) -> tuple[tuple[float, float], ...]:
    """(FLOPs, FLOP/s) of each shape in ``calibrated/<key>_gemm.json``, read once; () without the file."""
    doc = _read(f"calibrated/{device_key}_gemm.json") if device_key and device_key.isidentifier() else None
    return tuple((float(p["gflop"]) * 1e9, float(p["tflops"]) * 1e12) for p in (doc or {}).get("points", []))


def library_gemm_rate(
    device_key: str | None, arch: str | None, dtype: str, flop_per_call: float
) -> float | None:
    """The FLOP/s a vendor-library GEMM of ``flop_per_call`` FLOPs attains on this device, measured
    (``kprof_mcp/calibrated/<key>_gemm.json``: torch.matmul at a grid of shapes, clocks free): the median
    rate of the measured shapes within a factor 2 of its FLOPs (the nearest, where none is), for another
    tensor dtype scaled by the machine table's rate over bf16's. None where the device has no such
    measurement. A GEMM's shape, not only its size, sets its rate (a K of 768 runs at 60 % of a K of 8192's
    rate at the same FLOPs): the median stands for a shape not known."""
    pts = _gemm_points(device_key)
    dtype = "float8" if dtype.startswith("float8") else dtype
    if not pts or flop_per_call <= 0 or dtype not in _GEMM_TENSOR:
        return None
    near = [r for f, r in pts if flop_per_call / 2 <= f <= 2 * flop_per_call]
    if not near:
        near = [min(pts, key=lambda p: abs(math.log(p[0] / flop_per_call)))[1]]
    rate = statistics.median(near)
    pipes = ((table().get("archs") or {}).get(arch or "") or {}).get("pipes") or {}
    mine, base = pipes.get(_GEMM_TENSOR[dtype]) or {}, pipes.get("tensor_bf16") or {}
    if dtype not in ("bfloat16", "float16"):
        if not mine.get("rate") or not base.get("rate"):
            return None
        rate *= float(mine["rate"]) / float(base["rate"])
    return rate


def _rates(entries: dict, measured: dict, measured_only: tuple[str, ...] = ()) -> dict[str, Rate]:
    out = {}
    for key in measured_only:
        m = measured.get(key) or {}
        if key not in entries and isinstance(m, dict) and m.get("rate"):
            out[key] = Rate(
                key, float(m["rate"]), str(m.get("unit", "")), str(m.get("method", "")), measured=True
            )
    for key, e in entries.items():
        m = measured.get(key) or {}
        got = m.get("rate") if isinstance(m, dict) else None
        out[key] = Rate(
            key=key,
            rate=float(got) if got else (float(e["rate"]) if e.get("rate") is not None else None),
            unit=str(e.get("unit", "")),
            source=str(e.get("source", "")),
            counter=e.get("counter"),
            table=float(e["rate"]) if got and e.get("rate") is not None else None,
            measured=bool(got),
        )
    return out


@cache
def load(arch: str | None, device_key: str | None = None) -> Machine | None:
    """The machine of ``arch`` (``sm_90``...), with ``device_key``'s measured peaks folded in; None
    when the table does not know the architecture."""
    spec = (table().get("archs") or {}).get(arch or "")
    if not spec:
        return None
    measured = calibrated(device_key).get("measured") or {}
    pipes = _rates(spec.get("pipes") or {}, measured)
    part = (table().get("parts") or {}).get(device_key or "") or {}
    if part.get("geforce"):
        # GeForce parts run tensor math with fp32 accumulation at half the architecture's rate.
        for key, scale in (table().get("geforce_scale") or {}).items():
            r = pipes.get(key)
            if r is not None and r.rate and not r.measured:
                pipes[key] = Rate(
                    r.key, r.rate * float(scale), r.unit, r.source + f" (GeForce: x{scale})", r.counter
                )
    # Scattered-sector DRAM bandwidth exists only as a measurement (no datasheet gives it).
    levels = _rates(spec.get("memory") or {}, measured, ("dram_sector",))
    # The block scheduler: thread blocks dispatched per SM clock for the chip (a "level" of the chip).
    levels.update(_rates(spec.get("scheduler") or {}, measured))
    b = levels.get("blocks")
    if b is not None and b.measured and b.table and b.rate and b.table > b.rate:
        # The dispatcher does not follow the SM clock all the way: per SM clock it is fastest at the
        # lowest clock (sm_90: 1.07 at 1305 MHz, 0.83 at 1980). A rate measured at a higher clock would
        # read a stage run at a lower one above its peak, so the higher per-clock rate stays.
        levels["blocks"] = Rate(b.key, b.table, b.unit, b.source, b.counter, b.rate, True)
    moves = tuple(
        Move(
            key=mv["key"],
            src=mv["from"],
            dst=mv["to"],
            work=mv.get("work", "any"),
            per_op=float(mv.get("per_op", 1.0)),
            when=mv.get("when", ""),
            advice=mv.get("advice", ""),
            source=mv.get("source", ""),
            per_call=mv.get("per_call") or {},
        )
        for mv in table().get("moves") or []
        if mv.get("from") in pipes and mv.get("to") in pipes
    )
    return Machine(
        arch or "", str(spec.get("name", arch)), pipes, levels, moves, device_key if measured else None
    )

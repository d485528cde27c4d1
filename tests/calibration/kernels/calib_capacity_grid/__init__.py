"""Calibration pair (eleventh held-back set) — programs launched for a buffer's capacity, most of which find
nothing to do and return: a mixture-of-experts dispatch kernel whose row count (the tokens routed to this
expert) lives on the device, so the host, to avoid a synchronisation, launches one program per tile of the
expert's CAPACITY (every token could be routed to it), and each program past the live count loads the count
and returns (CUDA C++ Programming Guide, "Hardware Implementation": each thread block is scheduled on an SM,
its warps launched and retired, a cost paid whether or not the block works; CUDA C++ Best Practices Guide,
"Execution Configuration": size the grid to the work; the grid-stride / persistent loop of the CUDA blog
"CUDA Pro Tip: Write Flexible Kernels with Grid-Stride Loops" is the standard fix when the size is not known
on the host).

The work: out[i, :] = x[src[i], :] · gate[i] for the i < count live rows (count = LIVE = 65536 on the device),
x a pool of 4·LIVE tokens of D = 256 values (fp16; fp32 allowed), src the routed token ids, gate the router's
fp32 weights; the output buffer, src and gate are sized to the capacity CAP = 2^21 rows (rows past count
unused). Tiles of BLOCK_R = 8 rows (8 x 256 values), 4 warps a program.

Planted problem (v0): the grid sized to the capacity: CAP / 8 = 262144 programs, of which LIVE / 8 = 8192
(1/32) have rows; every other program is launched, loads count (a dependent L2 round trip), finds its tile
past it and exits. ~254000 empty programs, ~1900 per SM, 16 at a time: ~120 rounds of launch + load + retire.
Fix (v1): a persistent grid (4 programs per SM) looping over the live tiles (tile = pid, pid + grid, ... while
tile·8 < count): the same tiles, the same per-tile code, no empty program; count still read on the device.

Model: the live rows: x rows gathered once, out rows written once, src and gate read once (bytes
2·LIVE·D·itemsize + 8·LIVE = 67 MB at the defaults); FLOPs LIVE·D (the scale).

Expected on an H100 SXM (per design): v1 ~67 MB at ~2.5-3 TB/s ≈ 25-30 µs; v0 the same work plus ~120 rounds
of empty programs at ~0.5-1 µs each ≈ 60-120 µs more: ~3-5x. v0's time goes to programs with no work: the
fixed per-program cost (scheduling, the count load, exit) dominates the work per program (cause
"small_tiles"; no pipe or memory level is busy: resource None).
Tolerance: one fp32 multiply rounded to the output type: the dtype's default.
"""

from kprof_mcp.kernel import KernelPackage, Param, StageModel, Version, default_tolerance


def _inputs(p, device, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    cap, live, d = p["CAP"], p["LIVE"], p["D"]
    if live > cap or d & (d - 1):
        raise ValueError(f"LIVE ({live}) must be <= CAP ({cap}) and D ({d}) a power of two")
    dt = getattr(torch, p["dtype"])
    pool = 4 * live
    x = torch.randn(pool, d, generator=g).to(device=device, dtype=dt)
    src = torch.zeros(cap, dtype=torch.int32)
    src[:live] = torch.randperm(pool, generator=g)[:live].to(torch.int32)
    gate = torch.zeros(cap, dtype=torch.float32)
    gate[:live] = torch.rand(live, generator=g) + 0.5
    return {
        "x": x,
        "src": src.to(device),
        "gate": gate.to(device),
        # The live row count as the router leaves it: on the device.
        "count": torch.tensor([live], dtype=torch.int32, device=device),
        # Poisoned output at the capacity: NaN wherever a version fails to write shows up in the check.
        "out": torch.full((cap, d), float("nan"), device=device, dtype=dt),
    }


def _reference(inputs, p):
    live = p["LIVE"]
    x, src, gate = inputs["x"], inputs["src"][:live].long(), inputs["gate"][:live]
    return (x[src].float() * gate[:, None]).to(x.dtype)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _bytes(p):
    return float(2 * p["LIVE"] * p["D"] * p.itemsize + 8 * p["LIVE"])


_STAGE = StageModel("dispatch", flops=lambda p: float(p["LIVE"] * p["D"]), bytes=_bytes)


def _memory(p):
    return float(p["CAP"] * p["D"] * p.itemsize + 4 * p["LIVE"] * p["D"] * p.itemsize + 8 * p["CAP"])


KERNEL = KernelPackage(
    name="calib_capacity_grid",
    description="Calibration (held back, set 11; planted: programs launched for the capacity, most exit at "
    "once): MoE dispatch out[i] = x[src[i]] * gate[i] for i < count (count on the device); v0 one program per "
    "8-row tile of the capacity (1/32 live), v1 a persistent grid looping over the live tiles",
    params=(
        Param("CAP", 1 << 21, min=1, max=1 << 24, doc="rows of the output buffer (the expert's capacity)"),
        Param("LIVE", 65536, min=1, max=1 << 24, doc="rows routed (the count on the device), <= CAP"),
        Param("D", 256, min=1, max=1024, doc="values per row (a power of two)"),
        Param("dtype", "float16", choices=("float16", "float32"), doc="x and out dtype"),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0", "planted: one program per tile of the capacity, most exit at once", (_STAGE,), _build("v0")
        ),
        Version("v1", "fix: a persistent grid looping over the live tiles", (_STAGE,), _build("v1")),
    ),
    memory_bytes=_memory,
    tolerance=default_tolerance,
)

"""Calibration pair — uncoalesced (strided) access: out = x.T for an fp32 matrix x[M, N].

Planted problem (v0): one program per output row. Program p writes out[c, :] and so reads
column c of x: every 4-byte load is N·4 bytes from the previous one, so each element comes from
its own 32-byte DRAM sector, of which it uses 4 bytes. Columns are handed to programs 8 apart
(c = 0, 8, 16, …, then 1, 9, 17, …): programs running at the same time share no sector, and a
sector is needed again (for the neighbouring column) only N/8 programs later — 1024 programs ×
M·32 B = 256 MB of traffic at 8192×8192, five times the H100's 50 MB L2 — so it has been
evicted and is fetched again. (With columns in natural order the 8 programs sharing a sector run
together and L2 hides the over-fetch from DRAM: the problem would then show only in L1/L2
sectors per request, not in DRAM bytes.) The stores out[c, m0:m0+1024] are contiguous.

Fix (v1): 64×64 tiles: each program loads a tile of x along its rows (coalesced), transposes it
(``tl.trans``: the compiler stages the layout change through 16 KB of shared memory) and
stores it along the rows of out (coalesced). Every byte is read once and written once.

Model: 2·M·N·4 bytes (x read once, out written once), 0 FLOPs (pure data movement).

What Nsight Compute should show for v0: ``dram__bytes_read.sum`` far above M·N·4 (each 4-byte
element costs a 32-byte sector or a 64-byte DRAM atom), so DRAM bytes ÷ model ≫ 1; L1
``sectors per request`` 32 for the loads; a low L2 hit rate. v1: DRAM bytes ≈ the model.
Measured on an H100 SXM (Triton 3.6, 8192×8192): v0 read 3.47 GB from DRAM (12.9× the 268 MB
it needs) and wrote 0.27 GB: DRAM bytes ÷ model = 6.96, DRAM throughput 62 %, L2 hit 22 %,
67.1 M sectors for 2.1 M load requests; v1 moved 515 MB (0.96× the model) at DRAM 85 %.
(DRAM 62 % is below the diagnosis' 70 % "memory-bound" line, although v0 is bound by its
scattered DRAM accesses: the over-fetch estimate is then scaled by DRAM %.)

Expected speed-up on an H100 SXM: v1 runs at the copy bandwidth (~2.85 TB/s of model bytes →
~190 µs); v0 moves ~7× the bytes, as scattered sectors DRAM serves below its streaming rate
→ ~1.8 ms. Measured (event timing, L2 flushed, median of 15): v0 1790 µs, v1 188 µs → 9.5×.
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version


def _inputs(p, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(p["M"], p["N"], generator=g, device=device, dtype=torch.float32)
    # Poisoned output: NaN wherever a version fails to write shows up in the check.
    return {"x": x, "out": torch.full((p["N"], p["M"]), float("nan"), device=device, dtype=torch.float32)}


def _reference(inputs, p):
    return inputs["x"].t().contiguous()


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


_STAGE = StageModel("transpose", flops=lambda p: 0.0, bytes=lambda p: 2.0 * p["M"] * p["N"] * 4)

KERNEL = KernelPackage(
    name="calib_transpose",
    description="Calibration (planted: uncoalesced access): out = x.T, strided column reads (v0) vs coalesced "
                "64x64 tiles transposed in registers (v1)",
    params=(Param("M", 8192, min=1, max=1 << 15, doc="rows of x (columns of out)"),
            Param("N", 8192, min=1, max=1 << 15, doc="columns of x (rows of out)"),
            DTYPE_PARAM("float32", choices=("float32",))),
    make_inputs=_inputs,
    reference=_reference,
    versions=(Version("v0", "planted: one program per output row reads a column of x (stride N*4 bytes, one 4-byte "
                            "element per 32-byte sector); columns handed out 8 apart so no sector is reused from L2; "
                            "1024-element chunks, 4 warps", (_STAGE,), _build("v0")),
              Version("v1", "fix: 64x64 tiles loaded along rows, tl.trans, stored along rows (coalesced both ways), "
                            "8 warps", (_STAGE,), _build("v1"))),
    memory_bytes=lambda p: 2.0 * p["M"] * p["N"] * 4,
)

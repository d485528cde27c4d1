"""Calibration pair (twentieth held-back set) — a row kernel launched on the 2-D grid of the elementwise kernel
it replaced, so every row is processed by several programs: an RMSNorm kernel (one program holds a whole row:
it reads the row, reduces it, writes it) whose launch kept ``grid = (triton.cdiv(N, BLOCK_N), M)`` from the
2-D elementwise version; the kernel takes its row from program_id(1) and ignores program_id(0), so each row
is read, normalised and written by cdiv(N, BLOCK_N) = 8 programs that compute the same values. Nothing fails:
the duplicate stores write identical bytes. The fix: the grid the kernel's tiling needs, one program a row.
Sources: the Triton tutorials ("Vector Addition": the launch grid is derived from the kernel's own block,
``grid = lambda meta: (triton.cdiv(n, meta['BLOCK_SIZE']),)``; "Layer Normalization": one program per row,
``_layer_norm_fwd_fused[(M, )]``), and the CUDA C++ Best Practices Guide ("Execution Configuration": the
grid and block sizes chosen from the work each thread block does).

The work: x [M, N] fp16 (M = 32768 rows, N = 4096), w [N] fp16, out [M, N] fp16 = x · rsqrt(mean(x²) + eps)
· w, in fp32 inside the program.

Planted problem (v0): stage "rmsnorm_dup": grid (8, M) (program_id(0) fastest, so the 8 programs of a row run
side by side): 8 programs a row, each loading the whole row (8 KB) and storing it: the row's bytes read and
written 8 times, the duplicates served by L2 (the DRAM traffic stays near one pass).
Fix (v1): stage "rmsnorm": grid (M,): each row once.

Model (bytes: the fewest the stage must move, each input read once and the output written once): both 4
bytes an element (+ the weight row); FLOPs v0 8 x 4 an element (the work it does, 8 times), v1 4. What v0
moves is 8 x 4 bytes an element (32 at L2; the weight row re-read by every program besides).

Expected on an H100 SXM (per design): v1 536 MB of DRAM traffic at ~3 TB/s ~0.18 ms; v0 ~4.3 GB through L2
(plus 8x the load/store instructions) ~0.6-0.9 ms: ~3-5x. Cause "over_fetch" (bytes re-read and re-stored
that the result does not need), resource "l2" (where the duplicate traffic is served).
"""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, StageModel, Version

DUP = 8  # programs a row in v0: cdiv(N, BLOCK_N) of the elementwise kernel's 2-D grid (BLOCK_N = 512)


def _inputs(p, device):
    import torch

    m, n = p["M"], p["N"]
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(m, n, generator=g).to(torch.float16)
    w = (1.0 + 0.1 * torch.randn(n, generator=g)).to(torch.float16)
    return {
        "x": x.to(device),
        "w": w.to(device),
        # Poisoned output: a version that does not write every element fails the check.
        "out": torch.full((m, n), float("nan"), device=device, dtype=torch.float16),
    }


def _reference(inputs, p):
    import torch

    x = inputs["x"].float()
    r = torch.rsqrt((x * x).mean(dim=1, keepdim=True) + 1e-6)
    return (x * r * inputs["w"].float()).to(torch.float16)


def _build(version):
    def build(inputs, p):
        from . import impl

        return getattr(impl, f"build_{version}")(inputs, p)

    return build


def _elems(p):
    return float(p["M"]) * p["N"]


_DUP = StageModel(
    "rmsnorm_dup", flops=lambda p: DUP * 4.0 * _elems(p), bytes=lambda p: 4.0 * _elems(p) + 2.0 * p["N"]
)
_ONE = StageModel("rmsnorm", flops=lambda p: 4.0 * _elems(p), bytes=lambda p: 4.0 * _elems(p) + 2.0 * p["N"])

KERNEL = KernelPackage(
    name="calib_row_grid_dup",
    description="Calibration (held back, set 20; planted: a row kernel launched on the 2-D grid of the "
    "elementwise kernel it replaced, every row processed by 8 programs): RMSNorm of x [32768, 4096] fp16; "
    "v0 grid (8, M), v1 grid (M,)",
    params=(
        Param("M", 32768, min=1, max=1 << 20, doc="rows"),
        Param("N", 4096, min=16, max=16384, doc="columns (a power of two: one program holds a row)"),
        DTYPE_PARAM("float16", choices=("float16",)),
    ),
    make_inputs=_inputs,
    reference=_reference,
    versions=(
        Version(
            "v0",
            "planted: grid (8, M): every row read, normalised and written by 8 programs",
            (_DUP,),
            _build("v0"),
        ),
        Version("v1", "fix: grid (M,): one program a row", (_ONE,), _build("v1")),
    ),
    memory_bytes=lambda p: 4.0 * _elems(p) + 2.0 * p["N"],
    tolerance=lambda dtype: 2e-3,
)

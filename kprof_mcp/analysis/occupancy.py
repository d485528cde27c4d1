"""Theoretical occupancy of a launch: how many blocks of a compiled kernel fit on one SM, from
its registers per thread, shared memory per block and warps per block against the SM's limits,
by the rules of CUDA's occupancy calculator (``cuda_occupancy.h``). Nothing is measured: it is
the ceiling the launch allows (achieved occupancy, a counter, can only be lower).

Pure: a function of the compile facts (:class:`kprof_mcp.models.Resources`) and the device's
architecture.

* **Registers** are allocated per warp, rounded up to 256, in each of the SM's 4 sub-partitions
  (65536 / 4 registers each): warps per sub-partition = 16384 // registers per warp, blocks =
  4 × that // warps per block. A block needing more than 65536 registers does not launch.
* **Shared memory** per block is the kernel's plus 1 KB the system reserves per block (sm_80
  on), rounded up to 128 bytes; blocks = the SM's shared memory // that. The SM's full shared
  memory carveout is assumed (the driver picks a smaller one only when it costs no blocks).
* **Warps**: max warps per SM // warps per block; **blocks**: the SM's max resident blocks.

The smallest of the four limits is the blocks per SM; those that give it limit occupancy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..models import ProfileResult

# Per SM, from the CUDA C++ Programming Guide's table of compute capabilities.
# (max warps, max blocks, registers, shared memory bytes, max shared memory per block)
_LIMITS: dict[str, tuple[int, int, int, int, int]] = {
    "sm_80": (64, 32, 65536, 164 * 1024, 163 * 1024),
    "sm_86": (48, 16, 65536, 100 * 1024, 99 * 1024),
    "sm_89": (48, 24, 65536, 100 * 1024, 99 * 1024),
    "sm_90": (64, 32, 65536, 228 * 1024, 227 * 1024),
    "sm_100": (64, 32, 65536, 228 * 1024, 227 * 1024),
}
REG_ALLOC_UNIT = 256  # registers, per warp
SUB_PARTITIONS = 4
SMEM_ALLOC_UNIT = 128  # bytes
SMEM_RESERVED_PER_BLOCK = 1024  # bytes the system keeps per block (sm_80 on)
MAX_REGS_PER_BLOCK = 65536
WARP = 32

LABEL = "theoretical (from the launch), not measured"


@dataclass(frozen=True)
class SmLimits:
    arch: str
    max_warps: int
    max_blocks: int
    registers: int
    shared_memory_bytes: int
    max_shared_per_block: int


def sm_limits(arch: str | None) -> SmLimits | None:
    """The SM's limits of ``arch`` ("sm_90", or a compute capability "9.0"); None when unknown."""
    if not arch:
        return None
    key = arch if arch.startswith("sm_") else "sm_" + arch.replace(".", "")
    row = _LIMITS.get(key)
    return SmLimits(key, *row) if row else None


@dataclass(frozen=True)
class Occupancy:
    """Blocks per SM each resource allows (``limits``: registers, shared_memory, warps, blocks),
    the blocks and warps that fit, and occupancy = warps / max warps."""

    arch: str
    warps_per_block: int
    limits: dict[str, int]
    blocks_per_sm: int
    warps_per_sm: int
    occupancy_pct: float
    limited_by: str  # the smallest limit's name; equals joined by ", " in the order above

    def facts(self) -> dict[str, Any]:
        return {
            "blocks_per_sm": self.blocks_per_sm,
            "warps_per_sm": self.warps_per_sm,
            "occupancy_pct": self.occupancy_pct,
            "limited_by": self.limited_by,
            "limits": dict(self.limits),
            "arch": self.arch,
        }


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def theoretical(
    registers_per_thread: int | None,
    shared_memory_bytes: int | None,
    num_warps: int | None,
    limits: SmLimits | None,
) -> Occupancy | None:
    """The theoretical occupancy of a launch of ``num_warps`` warps per block; None when a fact
    is missing or the architecture unknown."""
    if limits is None or not num_warps or registers_per_thread is None or shared_memory_bytes is None:
        return None
    regs_per_warp = _round_up(max(registers_per_thread, 1) * WARP, REG_ALLOC_UNIT)
    if regs_per_warp * num_warps > MAX_REGS_PER_BLOCK:
        by_regs = 0
    else:
        per_partition = limits.registers // SUB_PARTITIONS // regs_per_warp
        by_regs = per_partition * SUB_PARTITIONS // num_warps
    if shared_memory_bytes > limits.max_shared_per_block:
        by_smem = 0
    else:
        smem = _round_up(shared_memory_bytes + SMEM_RESERVED_PER_BLOCK, SMEM_ALLOC_UNIT)
        by_smem = limits.shared_memory_bytes // smem
    found = {
        "registers": by_regs,
        "shared_memory": by_smem,
        "warps": limits.max_warps // num_warps,
        "blocks": limits.max_blocks,
    }
    blocks = min(found.values())
    limiter = ", ".join(k for k, v in found.items() if v == blocks)
    warps = blocks * num_warps
    return Occupancy(
        limits.arch,
        num_warps,
        found,
        blocks,
        warps,
        round(100.0 * warps / limits.max_warps, 1),
        limiter,
    )


def of_result(result: ProfileResult) -> dict[str, Occupancy]:
    """Each stage's theoretical occupancy, where its kernel's compile facts and the device's
    architecture are known (a GPU's Triton compile)."""
    if result.device.kind != "cuda":
        return {}
    limits = sm_limits(result.device.compute_capability)
    out = {}
    for s in result.stages:
        r = s.resources
        occ = r and theoretical(r.registers_per_thread, r.shared_memory_bytes, r.num_warps, limits)
        if occ:
            out[s.name] = occ
    return out


def _int(v: Any) -> int | None:
    return int(v) if v is not None and v == v else None


def waves_of(arch: str | None, sms: int | None) -> Callable[[Any], float]:
    """A trace's kernel row (``grid_blocks``, ``block_threads``, ``regs``, ``smem``) → its waves: blocks /
    (SMs x blocks per SM), the blocks per SM being what its registers, shared memory and warps allow (one
    when the row does not say); 1 when the SM count or the grid is unknown."""
    limits = sm_limits(arch)

    def waves(r: Any) -> float:
        grid, threads = _int(getattr(r, "grid_blocks", None)), _int(getattr(r, "block_threads", None))
        if not sms or not grid:
            return 1.0
        occ = theoretical(
            _int(getattr(r, "regs", None)),
            _int(getattr(r, "smem", None)),
            -(-threads // 32) if threads else None,
            limits,
        )
        per_sm = occ.blocks_per_sm if occ and occ.blocks_per_sm > 0 else 1
        return grid / (sms * per_sm)

    return waves

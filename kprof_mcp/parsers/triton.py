"""Reading what Triton leaves on a compiled kernel and an autotuner: the intermediate files
(TTIR, TTGIR, LLIR, PTX, cubin), resources (registers, spills, shared memory, warps, stages),
the chosen config and the autotuner's timings of every config it tried.

Pure with respect to files: every function takes the objects a launch returned and returns
data; writing them to a profile directory is :mod:`kprof_mcp.capture.artifacts`' job. Triton's
attribute names differ between versions, so every read is defensive.
"""

from __future__ import annotations

from typing import Any

from ..models import Resources


def compiled_files(ret: Any) -> dict[str, str | bytes] | None:
    """``{"kernel.ttir": text, ..., "kernel.cubin": bytes}`` of a ``CompiledKernel``; None when
    the launch returned something else (a CPU interpreter run, a torch op)."""
    asm = getattr(ret, "asm", None)
    if not isinstance(asm, dict):
        return None
    out: dict[str, str | bytes] = {}
    for key, text in asm.items():
        ext = {"cubin": "cubin", "hsaco": "hsaco"}.get(key, key)
        out[f"kernel.{ext}"] = text if isinstance(text, bytes) else str(text)
    return out


def resources(ret: Any) -> Resources:
    """Registers, spills, shared memory, warps and stages of a ``CompiledKernel``."""
    try:
        ret._init_handles()  # loads the binary: n_regs / n_spills are filled only then
    except Exception:  # noqa: BLE001 — resources are optional extras; the IR is already read
        pass
    md = getattr(ret, "metadata", None)

    def mget(k):
        return getattr(md, k, None) if md is not None and not isinstance(md, dict) else (md or {}).get(k)

    return Resources(
        kernel_name=mget("name"),
        registers_per_thread=getattr(ret, "n_regs", None),
        spilled_registers=getattr(ret, "n_spills", None),
        shared_memory_bytes=mget("shared"),
        num_warps=mget("num_warps"),
        num_stages=mget("num_stages"),
    )


def config_dict(cfg: Any) -> dict[str, Any]:
    """A ``triton.Config`` as a plain dict: its kwargs plus warps, stages, CTAs, maxnreg."""
    d = dict(getattr(cfg, "kwargs", {}))
    for k in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
        v = getattr(cfg, k, None)
        if v is not None:
            d[k] = v
    return d


def tiling(
    stage_name: str, kernel: Any, fixed: dict[str, Any] | None
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(tiling, autotune history) of a stage: the autotuner's best config and every config it
    timed (ms as [median, p20, p80]), or the stage's fixed launch configuration."""
    best = getattr(kernel, "best_config", None)
    if best is not None:
        timings = getattr(kernel, "configs_timings", None) or {}
        hist = {
            "stage": stage_name,
            "best": config_dict(best),
            "note": (
                "timings in ms as [median, p20, p80] from the autotuner's benchmark"
                if timings
                else "best config came from Triton's autotune cache (cache_results): no timings this run"
            ),
            "configs": [
                {"config": config_dict(c), "timing_ms": t if isinstance(t, list) else [t]}
                for c, t in sorted(
                    timings.items(), key=lambda kv: kv[1][0] if isinstance(kv[1], list) else kv[1]
                )
            ],
        }
        return {"source": "autotuned", **config_dict(best)}, hist
    if fixed is not None:
        return {"source": "fixed", **fixed}, None
    return None, None


def autotuned_here(kernel: Any) -> bool:
    """Whether the autotuner benchmarked configs in this process (a cold autotune cache)."""
    return bool(getattr(kernel, "configs_timings", None))

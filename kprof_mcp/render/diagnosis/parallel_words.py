"""The words of the causes about how the work spreads over the SMs: too few blocks, a last wave or a few long
programs that leave SMs idle (split from :mod:`.words`)."""

from __future__ import annotations

from ...analysis.diagnosis import Facts
from .memory import Words, _fmt
from .names import _short


def _few_blocks(f: Facts) -> Words:
    if f.move == "batch_stages":  # consecutive stages, one small launch of one kernel each (.stage_batch)
        stages = ", ".join(f.focus or ())
        return (
            f"Launch the {f.kernels} stages' {_short(f.kernel)} as one launch over all their items (a batched or "
            "grouped launch, their weights concatenated; or each stage on its own stream where they are "
            "independent)",
            f"{stages}: {f.kernels} launches of {f.grid_blocks} blocks (< {f.sm_count} SMs) one after another; "
            f"as one launch at full fill {_fmt(f.value / 1e3)} µs",
            "each launch leaves most SMs idle while the next waits",
        )
    if f.grid_blocks is not None:
        return (
            "Fill the GPU: launch more blocks than SMs (split the work: smaller tiles, split K/KV)",
            f"grid_blocks={f.grid_blocks} (< {f.sm_count} SMs)",
            "idle SMs",
        )
    return (
        "Fill the GPU: launch more blocks (split K/KV, smaller tiles)",
        f"waves_per_sm={f.waves_per_sm:.2f}",
        "fewer blocks than SMs can hold",
    )


def _tail(f: Facts) -> Words:
    if f.kernel is not None:  # a timeline's wave tail
        trigger = f"last_wave_efficiency={f.last_wave_efficiency:.2f}"
        if f.waves_per_sm is not None and f.value is not None:  # replayed (analysis.replay.tail)
            trigger += (
                f" over {f.waves_per_sm:.2f} waves (blocks per SM from its registers, shared memory and warps); "
                f"evened out, its launches take {_fmt(f.value / 1e3)} µs less a step, the step replayed"
            )
        return (
            f"Even out the last wave of {_short(f.kernel)} (grid a multiple of the SMs x blocks per SM, "
            "persistent kernel)",
            trigger,
            "wave quantization",
        )
    if f.sm_active_pct is not None:  # many waves, SMs mostly idle (analysis.diagnosis.parallelism)
        return (
            "Balance the work across programs (split long programs' work into bounded items, or sort it)",
            f"sm_active={f.sm_active_pct:.1f}% of the elapsed time"
            + (f" over {f.waves_per_sm:.1f} waves" if f.waves_per_sm is not None else ""),
            "a few long programs run on while the other SMs are idle",
        )
    return (
        "Even out the last wave (grid a multiple of the SMs x blocks per SM, or a persistent grid)",
        f"waves_per_sm={f.waves_per_sm:.2f}",
        "the last wave leaves SMs idle",
    )

"""A model's weights offloaded to the host and copied in at every forward though they fit on the GPU: an
inference loop whose model was loaded with CPU offload (Hugging Face Accelerate's ``cpu_offload`` /
``device_map`` with an "offload" or "cpu" entry, diffusers' ``enable_sequential_cpu_offload()``), the
setting for a model larger than the GPU's memory, kept on a GPU that holds the whole model many times
over: every layer's weights stay in (pageable) host memory and are copied to the device just before the
layer runs and dropped after it, so each forward moves every weight across PCIe again and the GEMMs wait
for the copies. Nothing fails; the outputs are the same. The fix: the model moved to the GPU once
(``model.to("cuda")``), no offload. Sources: the Accelerate documentation, "Big Model Inference" (offloaded
weights are moved to the execution device for each forward and back; offload only what does not fit,
"it will be slower"); the diffusers documentation, "Reduce memory usage" (sequential CPU offloading is
"extremely slow"); the CUDA C++ Best Practices Guide, "Data Transfer Between Host and Device" (minimise
transfers; pageable copies are staged and synchronous).

Stage ``step`` (one ``kprof.range`` per step): inference (torch.inference_mode) on x [8192, 4096] bf16
through 8 Linear(4096, 4096) + GELU layers (bf16 weights and biases, 32 MB a layer); each step's output
mean kept. Bad: the offload hooks' work written out: each layer's weight and bias copied from the host
(pageable) to the GPU before its GEMM, the device copy dropped after it. Good: the weights on the GPU.
The same outputs.

Per design (H100 SXM, PCIe Gen5 host link): the GEMMs 2.2 TFLOP (bf16 tensor cores) ~3.5-4.5 ms a step;
the copies 268 MB a step from pageable memory (staged, ~10-25 GB/s) ~11-27 ms, the GEMMs waiting for
them: good ~4 ms, bad ~15-30 ms: ~4-7x. The extra time is the host-to-device transfer of the weights in
every step (cause "copy"), resource None.

    python weight_offload.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

ROWS, WIDTH, LAYERS = 8192, 4096, 8


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's output mean), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    dt = torch.bfloat16 if cuda else torch.float32
    n, d = (ROWS, WIDTH) if cuda else (16, 64)
    g = torch.Generator().manual_seed(0)
    host = [
        ((torch.randn(d, d, generator=g) / d**0.5).to(dt), (0.01 * torch.randn(d, generator=g)).to(dt))
        for _ in range(LAYERS)
    ]  # the weights as loaded: in host memory (pageable)
    resident = [(w.to(dev), b.to(dev)) for w, b in host] if variant == "good" else None  # the fix
    x = torch.randn(n, d, generator=g).to(dev, dt)
    kept: list = []

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    h = x
                    for i in range(LAYERS):
                        if resident is not None:
                            w, b = resident[i]
                        else:  # the planted form: the offload hook's pre-forward copy of the layer's weights
                            w, b = host[i][0].to(dev), host[i][1].to(dev)
                        h = F.gelu(F.linear(h, w, b))
                        del w, b  # the post-forward hook drops the device copy
                    kept.append(h.float().mean())

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()

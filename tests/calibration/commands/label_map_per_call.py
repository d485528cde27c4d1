"""An inference function that loads its class-label map from a JSON file at every call (``labels =
json.load(open(path))`` at the top of ``predict()``, the usual shape of a web-service handler or a notebook's
predict helper), where the map never changes: loaded once, before the loop, it serves every call. The file is
read from the page cache and parsed by the json module on the host (~10^5 Python objects built for 8000 classes)
while the GPU, its previous work done, waits for the next launch. Sources: the Python documentation of the json
module (json.load builds the whole object graph at each call); the PyTorch Performance Tuning Guide (host-side
work between kernel launches leaves the GPU idle); the CUDA C++ Best Practices Guide ("Asynchronous and
Overlapping Transfers with Computation": the GPU idles when the host falls behind).

Stage ``step`` (one ``kprof.range`` per step, inference): a 3-layer MLP classifier (bf16, 2048 -> 4096 -> 4096 ->
8000 classes, GELU) on a batch of 1024 feature vectors (one of four in turn), the logits' top-5 indices kept with
a few logits; the label map (8000 entries, ~0.6 MB of JSON, written at start-up) returned with them for the
caller to name the classes after the loop. Bad: the map loaded from the file at every call. Good: loaded once.
The same outputs exactly.

Model (the needed work): FLOPs 2 x 1024 x (2048 x 4096 + 4096 x 4096 + 4096 x 8000): 1.2e11; bytes the weights
(1.2e8) and the activations (~5e7): ~1.7e8.

Per design (H100/H200): the good step ~0.2-0.35 ms (three bf16 GEMMs, ~8 launches: GPU-bound); the bad step adds
~1-2.5 ms of json parsing on the host a call (measured 2.3 ms on a slow shared x86 core): ~4-8x. The extra time is
Python work on the host between launches (cause "host", resource None).

    python label_map_per_call.py --variant bad --steps 20
"""

from __future__ import annotations

import json
import os
import tempfile

import torch
from _common import parser, run

import kprof

B, D, H, C = 1024, 2048, 4096, 8000


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (top-5 indices and a few logits a step), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    b, d, h, c = (B, D, H, C) if cuda else (4, 16, 32, 50)
    dt = torch.bfloat16 if cuda else torch.float32
    g = torch.Generator(device=dev).manual_seed(0)
    xs = [torch.randn(b, d, generator=g, device=dev).to(dt) for _ in range(4)]
    ws = [(torch.randn(i, o, generator=g, device=dev) / i**0.5).to(dt) for i, o in ((d, h), (h, h), (h, c))]
    path = os.path.join(tempfile.mkdtemp(prefix="labels"), "labels.json")
    with open(path, "w") as f:
        json.dump(
            {
                str(i): [f"n{i:08d}", f"class {i} label, synonym {i * 7 % 1000}, another name"]
                for i in range(c)
            },
            f,
            indent=1,
        )
    with open(path) as f:
        labels_once = json.load(f)
    kept: list = []
    maps: list = []
    it = [0]

    def predict(x):
        if variant == "bad":
            with open(path) as f:
                labels = json.load(f)
        else:
            labels = labels_once
        y = torch.nn.functional.gelu(x @ ws[0])
        y = torch.nn.functional.gelu(y @ ws[1])
        logits = y @ ws[2]
        return logits, labels

    def step():
        x = xs[it[0] % 4]
        it[0] += 1
        logits, labels = predict(x)
        maps.append(labels)
        if len(maps) > 4:
            del maps[:2]
        top = logits[:2].topk(5, dim=1).indices
        return torch.cat([top.flatten().float(), logits[:2, :4].float().flatten()])

    def loop(steps: int) -> None:
        with torch.inference_mode():
            for _ in range(steps):
                with kprof.range("step"):
                    kept.append(step())
        assert len(maps[-1]) == c, len(maps[-1])

    return loop, (lambda: torch.stack(kept).double().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()

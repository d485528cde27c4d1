"""A sequence model trained with its LSTM unrolled in Python: ``nn.LSTMCell`` called once per time step in a
``for t in range(T)`` loop (the way the recurrence is written in textbooks and in code that needs the step),
where the fused ``nn.LSTM`` (cuDNN's RNN: the input projections of all steps in one GEMM, the recurrent
steps inside the library, the backward likewise) computes the same layer. Each time step costs the host a
Python module call and ~3 small kernels forward (two GEMMs of 32 x 1024 outputs, the fused cell) and ~6
backward, each a few µs of GPU work: the GPU waits for the launches (cuDNN developer guide, "RNN functions";
Appleyard, Kocisky and Blunsom, "Optimizing Performance of Recurrent Neural Networks on GPUs", 2016, and the
NVIDIA blog "Optimizing Recurrent Neural Networks in cuDNN 5": one call for the whole sequence, the input GEMMs
batched over time, the step's kernels fused). Nothing fails and the values agree (the same fp32 arithmetic;
TF32 is off in both: ``torch.backends.cudnn.allow_tf32 = False``, matmuls' default). The fix is one change:
``nn.LSTM`` with the cell's weights (the same gate order) called on the whole sequence.

Stage ``step`` (one ``kprof.range`` per step): a batch of 32 sequences of T = 256 steps of 128 features (a pool
of 4 on the GPU), one LSTM layer of hidden size 256, a linear readout of every step's hidden state to 128
values, MSE against targets, backward through time, a foreach SGD step. The model: the LSTM's GEMMs forward and
backward, 3·2·T·B·4H·(I + H) = 1.9e10 FLOPs (FP32, no tensor cores), the readout's 3·2·T·B·H·128 = 1.6e9;
the bytes: the gates and states written forward and read back (~T·B·6H·4·3 ≈ 0.15 GB), the inputs, the
weights: ~2e8.

Per design (H100 SXM): good ~2-4 ms a step (cuDNN's recurrent kernels, ~256 dependent steps forward and
backward, each a few µs); bad ~256 x (~25 µs of host work forward + ~50 µs for the backward's launches)
≈ 15-20 ms: ~4-8x. Per-kernel launch cost on the host sets the bad step (cause "launch"; no pipe or memory level
is busy: resource None).

    python lstm_cell_loop.py --variant bad --steps 20
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from _common import parser, run

import kprof

BATCH, STEPS, IN, HIDDEN, OUT = 32, 256, 128, 256, 128


def make(variant: str, cuda: bool):
    """The step's loop and the kept outputs (each step's loss), for ``variant``."""
    dev = "cuda" if cuda else "cpu"
    torch.backends.cudnn.allow_tf32 = False  # both variants in plain FP32 (matmuls are by default)
    b, t, i_dim, h_dim, o_dim = (BATCH, STEPS, IN, HIDDEN, OUT) if cuda else (2, 8, 8, 16, 4)
    torch.manual_seed(0)
    cell = torch.nn.LSTMCell(i_dim, h_dim).to(dev)
    readout = torch.nn.Linear(h_dim, o_dim).to(dev)
    # The planted switch: the recurrence unrolled over LSTMCell in Python, or the fused nn.LSTM with the
    # same weights (PyTorch's LSTM and LSTMCell share the gate order i, f, g, o).
    if variant == "bad":
        params = list(cell.parameters()) + list(readout.parameters())
    else:
        lstm = torch.nn.LSTM(i_dim, h_dim).to(dev)
        with torch.no_grad():
            lstm.weight_ih_l0.copy_(cell.weight_ih)
            lstm.weight_hh_l0.copy_(cell.weight_hh)
            lstm.bias_ih_l0.copy_(cell.bias_ih)
            lstm.bias_hh_l0.copy_(cell.bias_hh)
        lstm.flatten_parameters()
        params = list(lstm.parameters()) + list(readout.parameters())
    g = torch.Generator().manual_seed(1)
    xs = [torch.randn(t, b, i_dim, generator=g).to(dev) for _ in range(4)]
    ys = [torch.randn(t, b, o_dim, generator=g).to(dev) for _ in range(4)]
    kept: list = []
    state = {"i": 0}

    def loop(steps: int) -> None:
        for _ in range(steps):
            k = state["i"] % len(xs)
            state["i"] += 1
            x = xs[k]
            with kprof.range("step"):
                if variant == "bad":
                    h = torch.zeros(b, h_dim, device=dev)
                    c = torch.zeros(b, h_dim, device=dev)
                    hs = []
                    for s in range(t):
                        h, c = cell(x[s], (h, c))
                        hs.append(h)
                    hseq = torch.stack(hs)
                else:
                    hseq, _ = lstm(x)
                loss = F.mse_loss(readout(hseq), ys[k])
                loss.backward()
                with torch.no_grad():
                    torch._foreach_add_(params, [p.grad for p in params], alpha=-1e-3)
                    for p in params:
                        p.grad = None
                kept.append(loss.detach())

    return loop, (lambda: torch.stack(kept).float().cpu())


def main() -> None:
    a = parser(__doc__).parse_args()
    loop, output = make(a.variant, torch.cuda.is_available())
    run(torch, loop, a.steps, a.time, a.rounds)
    assert torch.isfinite(output()).all(), "non-finite output"


if __name__ == "__main__":
    main()

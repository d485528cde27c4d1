"""The second held-back multi-rank set (issue 39): 2-rank command pairs in classes the first set
(``pairs.HELDOUT_RANKS_PAIRS``) does not have, built by a helper blind to kprof's ranks/communication
analysis; causes set from the designs before any GPU number. Scripts: ``commands/ranks2_*.py``."""

from __future__ import annotations

from pairs import Pair

HELDOUT_RANKS2_PAIRS = [
    Pair(
        "gradients all-reduced in fp32 from a bf16 model",
        "ranks2_fp32_grad_reduce.py",
        "bad",
        "good",
        "exposed_comm",
        mode="nsys",
        command=True,
        planted="communication bytes: a hand-written data-parallel loop (2 ranks, 2 residual MLP layers of "
        "width 4096 and hidden 16384 in bf16, 512 tokens a rank: 268 M parameters, little compute) that buckets "
        "its bf16 gradients, casts the bucket to fp32, all-reduces 1.07 GB, averages and casts back (Megatron's "
        "accumulate-allreduce-grads-in-fp32): twice the bytes on the links and two more passes over the "
        "gradients, no precision gained with 2 ranks; the all-reduce is most of the step (both ranks alike); "
        "fix: the bf16 bucket all-reduced as it is (537 MB; DDP's bf16_compress_hook)",
    ),
    Pair(
        "gradients all-reduced only after the whole backward",
        "ranks2_allreduce_after_backward.py",
        "bad",
        "good",
        "exposed_comm",
        mode="nsys",
        command=True,
        planted="exposed communication: a hand-written data-parallel loop (2 ranks, 4 residual MLP layers of "
        "width 4096 and hidden 16384 in bf16, 1024 tokens a rank) that calls loss.backward() and only then "
        "all-reduces its 8 gradients (134 MB each, blocking): the backward's GEMMs and the 1.07 GB of "
        "all-reduce take turns, a layer's backward and its gradients' all-reduce of comparable time (both "
        "ranks alike); fix: each gradient's all-reduce issued async from a post-accumulate-grad hook as soon "
        "as it is final and waited for before the update (DDP's bucket hooks), overlapping the backward",
    ),
    Pair(
        "global loss all-reduced and read every step for the log",
        "ranks2_loss_item_sync.py",
        "bad",
        "good",
        "sync",
        mode="nsys",
        command=True,
        planted="a host-device sync every step: a data-parallel LM loop (2 ranks, 8 x 1024 tokens a rank packed "
        "from documents by a Python loop on the host, width 1536, 4 MLP layers, vocabulary 8192, bf16) that "
        "all-reduces the loss and reads it with .item() every step for its log: the host waits for the GPU's "
        "step (and so the other rank's) before packing the next batch, and the GPU idles while it packs "
        "(host ~6 ms and GPU ~8-9 ms end to end, both ranks alike); fix: the losses kept on the GPU and "
        "all-reduced and read every 10 steps, the packing overlapping the GPU's step",
    ),
    Pair(
        "rank 0 alone evaluates the held-out set every step",
        "ranks2_rank0_eval.py",
        "bad",
        "good",
        "straggler",
        mode="nsys",
        command=True,
        planted="a straggler by GPU work only one rank does: a data-parallel LM loop (2 ranks, 4 x 1024 tokens a "
        "rank, width 1024, 4 MLP layers, vocabulary 8192, bf16) in which rank 0 alone computes the validation "
        "loss over 32 held-out sequences of 1024 tokens (forward only, ~2.8e12 FLOPs, 2.7x the training "
        "step's) after every step; rank 1 waits for it at the next step's gradient all-reduce (no host cause); "
        "fix: the held-out set split between the ranks, each evaluating its half every step",
    ),
]

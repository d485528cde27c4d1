"""The third held-back multi-rank set (issue 39): 2-rank command pairs in classes the first two sets
(``pairs.HELDOUT_RANKS_PAIRS``, ``pairs_ranks2.HELDOUT_RANKS2_PAIRS``) do not have, built by a helper blind to
kprof's ranks/communication analysis; causes set from the designs before any GPU number. Scripts:
``commands/ranks3_*.py``."""

from __future__ import annotations

from pairs import Pair

HELDOUT_RANKS3_PAIRS = [
    Pair(
        "gradients all-reduced through a gloo (CPU) process group",
        "ranks3_gloo_grad_reduce.py",
        "bad",
        "good",
        "move_work",
        mode="nsys",
        command=True,
        planted="the needed all-reduce taken by a slower path: a data-parallel loop (2 ranks, NCCL the default "
        "group, 2 residual MLP layers of width 1024 with fp32 parameters under bf16 autocast, 32768 tokens a "
        "rank) that all-reduces its 16.8 MB fp32 gradient bucket through a group created with "
        "dist.new_group(backend='gloo'): copied to the host (.cpu()), summed by gloo over TCP on the CPUs, "
        "copied back, every step (both ranks alike); the same bytes, a path tens of times slower than NVLink; "
        "fix: the bucket all-reduced on the GPUs through the default NCCL group",
    ),
    Pair(
        "every parameter broadcast from rank 0 after every step",
        "ranks3_param_broadcast.py",
        "bad",
        "good",
        "exposed_comm",
        mode="nsys",
        command=True,
        planted="communication not needed and not hidden: a hand-written data-parallel loop (2 ranks, 2 residual "
        "MLP layers of width 4096 and hidden 16384 in bf16, 268 M parameters, 256 tokens a rank) that after "
        "each update broadcasts its 4 parameter tensors (537 MB) from rank 0 'to keep the replicas in sync', "
        "in the stream after the update, no compute to overlap (~2 ms against a ~4 ms step; both ranks "
        "alike); fix: the broadcast once before training (what DDP's constructor does), the replicas kept "
        "equal by the all-reduced gradients",
    ),
    Pair(
        "the weights copied to a host snapshot after every step",
        "ranks3_host_snapshot.py",
        "bad",
        "good",
        "copy",
        mode="nsys",
        command=True,
        planted="host<->device transfers in the step: a data-parallel loop (2 ranks, 4 residual MLP layers of "
        "width 1024 and hidden 2048 in bf16, 16.8 M parameters, 4096 tokens a rank) that refreshes an "
        "in-memory fault-tolerance snapshot of its weights after every step by copying each parameter into "
        "pageable CPU tensors (33.5 MB over PCIe a step, synchronous: the GPU's next step waits; both ranks "
        "alike); fix: the snapshot kept on the GPU (a device-to-device copy), copied to the host only when "
        "saved",
    ),
]

"""Designed, committed (d863fa5) and checked on the GPUs, not recorded: its quick-check ratio was 1.20x
(bad 19.37 ms, good 16.14 ms a step), under the set's 1.3x floor; the host snapshot pair (designed after that
number, committed before its own) took its place. Its script and CPU tests are kept."""
DROPPED_RANKS3_PAIRS = [
    Pair(
        "a torch.distributed.barrier() at the end of every step",
        "ranks3_barrier_every_step.py",
        "bad",
        "good",
        "sync",
        mode="nsys",
        command=True,
        planted="a host-device sync every step: a data-parallel image loop (2 ranks, 128 images a rank cropped "
        "and flipped by a Python loop on the host, 8192 patch tokens, width 1024, 4 MLP layers, bf16) that "
        "calls dist.barrier() after each step: NCCL's barrier blocks the host until the GPU's stream is done, "
        "so the next batch is prepared (~2-4 ms) while the GPU idles (GPU step ~4-5 ms; both ranks alike); "
        "fix: no barrier, the host preparing the next batch while the GPU runs the step",
    ),
]

import os, sys, time, tempfile
import torch, torch.distributed as dist
import torch.multiprocessing as mp
import kprof

SLEEP_S = 0.04


def work(rank, world, init):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=init, rank=rank, world_size=world)
    torch.manual_seed(rank)
    x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16) / 64
    for i in range(12):
        with kprof.range("step"):
            y = x
            for _ in range(8):
                y = y @ w
            if rank == 1:
                time.sleep(SLEEP_S)  # the planted straggler: host work before the collective
        with kprof.range("sync"):
            dist.all_reduce(y)
            torch.cuda.synchronize()
    dist.destroy_process_group()


if __name__ == "__main__":
    init = "file://" + os.path.join(tempfile.mkdtemp(), "rendezvous")
    mp.spawn(work, args=(2, init), nprocs=2)
    print("spawned ranks done")

"""A user's own single-file kernel package (PyTorch only): y = 2·x."""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, Plan, Stage, StageModel, Version

MODE = "ok"  # the fault-injection suite copies this file with another MODE (tests/unit/test_faults.py)


def _inputs(p, device):
    import torch

    g = torch.Generator(device=device).manual_seed(1)
    x = torch.randn(p["n"], generator=g, device=device).to(getattr(torch, p["dtype"]))
    return {"x": x, "y": torch.empty_like(x)}


def _build(inputs, p):
    import torch

    x, y = inputs["x"], inputs["y"]

    def run():
        if MODE == "raise":
            raise RuntimeError("kernel exploded on purpose")
        if MODE == "segfault":
            import ctypes

            ctypes.string_at(0)
        if MODE == "hang":
            while True:
                pass
        if MODE == "orphan":
            # a grandchild that would outlive us, then hang: cancellation must kill both
            import os
            import subprocess

            child = subprocess.Popen(["sleep", "1000"])
            with open(os.environ.get("KPROF_TEST_PIDFILE", "/dev/null"), "w") as f:
                f.write(f"{os.getpid()} {child.pid}\n")
            while True:
                pass
        if MODE == "slow":
            import time

            time.sleep(0.25)
        if MODE == "oom":
            torch.empty(1 << 50, dtype=torch.uint8, device=x.device)  # 1 PiB: fails on any device
        if MODE == "illegal":
            _illegal_store(y)
        if MODE == "abort":
            import os

            os.abort()
        if MODE == "exit":
            import os

            os._exit(7)
        torch.mul(x, 2.0 if MODE != "wrong" else 2.5, out=y)

    return Plan(stages=[Stage("scale", run, tiling={"impl": "torch.mul"})], output=lambda: y)


def _illegal_store(y):
    """An out-of-bounds store from a Triton kernel (an illegal memory access on a GPU)."""
    import triton
    import triton.language as tl

    @triton.jit
    def oob(ptr, off):
        offs = off + tl.arange(0, 1024)  # off = 2^40 elements: far past the buffer, unmasked
        tl.store(ptr + offs, tl.zeros([1024], tl.float32))

    if not y.is_cuda:
        raise RuntimeError("CUDA error: an illegal memory access was encountered (simulated: this fault needs a GPU)")
    oob[(1,)](y, 1 << 40)
    import torch

    torch.cuda.synchronize()


KERNEL = KernelPackage(
    name="kprobe4bigout",
    description="y = 2x with torch.mul (a user kernel given by path)",
    params=(Param("n", 1024, min=1, max=1 << 30), DTYPE_PARAM("float32")),
    make_inputs=_inputs,
    reference=lambda inputs, p: inputs["x"] * 2,
    versions=(Version("v0", "torch.mul", (StageModel("scale", lambda p: p["n"], lambda p: 2 * p["n"] * p.itemsize),),
                      _build),),
    memory_bytes=lambda p: 2 * p["n"] * p.itemsize,
)


# --- kprobe4 V2b/V3b: no command needed. The package's import (in the worker that describes it, a
# warm worker) writes MB megabytes without a newline on FD, as read from kprobe4-bigout.txt beside
# this file ("FD MB"): the server reads a warm worker's stdout line by line (a line has no bound) and
# its stderr file whole after each command.
def _kprobe4_bigout():
    import os
    from pathlib import Path

    try:
        fd, mb = (int(x) for x in (Path(__file__).resolve().parent / "kprobe4-bigout.txt").read_text().split())
    except (OSError, ValueError):
        return
    chunk = b"B" * (1 << 20)
    for _ in range(mb):
        os.write(fd, chunk)


_kprobe4_bigout()

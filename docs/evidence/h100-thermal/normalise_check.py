"""Can free-clock times of a compute-bound kernel be made comparable by the SM clock they ran at?

matmul v3 (4096^3 bf16), clocks free: 8 rounds, each a kprof event Timer call (CUPTI, L2 flushed)
while a thread polls NVML's SM clock every 2 ms, then a softmax v2 call (as profiles alternate).
For each round: the raw median; the SM clock nvidia-smi reads after the batches (what event mode
records today); the mean NVML clock while the batches ran; the median normalised to 1305 MHz by
each. Then the same kernel locked at 1305 MHz, 4 rounds, for the reference."""
import statistics, subprocess, sys, threading, time
sys.path.insert(0, ".")
import torch
from kprof_mcp.models import ProfileRequest
from kprof_mcp.modes.event import Timer
from kprof_mcp.packages import available, load
from kprof_mcp.tools import nvidia_smi
from kprof_mcp.tools.nvml import _handle, _lib


def sm_clock_reader(smi_id):
    """NVML's current SM clock (nvmlDeviceGetClockInfo, NVML_CLOCK_SM = 1), in MHz."""
    import ctypes
    lib = _lib(); h = _handle(lib, smi_id)

    def read():
        mhz = ctypes.c_uint()
        return float(mhz.value) if lib.nvmlDeviceGetClockInfo(h, ctypes.c_int(1), ctypes.byref(mhz)) == 0 else None
    return read

REF = 1305.0
read = sm_clock_reader("0")
req = ProfileRequest(kernel="matmul", kernel_source="x", version="v3", params={}, mode="event", out_root="/tmp",
                     budget_ms=300, warmup_ms=50)
fns = {}
for k, v in [("matmul", "v3"), ("softmax", "v2")]:
    pkg = load(available([])[k]); p = pkg.validate_params({})
    fns[k] = pkg.version(v).build(pkg.make_inputs(p, "cuda"), p).stages[0].fn


def timed(fn):
    samples, stop = [], threading.Event()

    def poll():
        while not stop.is_set():
            samples.append(read()); time.sleep(0.002)
    th = threading.Thread(target=poll, daemon=True); th.start()
    smi = lambda: float(nvidia_smi.clocks(0).get("clocks.sm"))
    t = Timer(torch, True, req, "cupti", clock_reader=smi)
    med = t.time(fn).median_ns / 1e3
    stop.set(); th.join()
    during = statistics.mean(x for x in samples if x)
    return med, statistics.median(t.clocks), during


rows = []
for r in range(8):
    med, after, during = timed(fns["matmul"])
    rows.append((med, after, during))
    print(f"free r{r}: {med:.2f} us, smi after {after:.0f} MHz, NVML during {during:.0f} MHz -> "
          f"norm(after) {med * after / REF:.2f}  norm(during) {med * during / REF:.2f}", flush=True)
    timed(fns["softmax"])
subprocess.run(["nvidia-smi", "-lgc", "1305,1305"], capture_output=True)
try:
    locked = []
    for r in range(4):
        med, after, during = timed(fns["matmul"])
        locked.append(med)
        print(f"locked r{r}: {med:.2f} us, NVML during {during:.0f} MHz", flush=True)
        timed(fns["softmax"])
finally:
    subprocess.run(["nvidia-smi", "-rgc"], capture_output=True)
rng = lambda xs: 100 * (max(xs) - min(xs)) / statistics.median(xs)
raw = [m for m, _, _ in rows]; na = [m * a / REF for m, a, _ in rows]; nd = [m * d / REF for m, _, d in rows]
print(f"free raw              median {statistics.median(raw):.2f}  range {rng(raw):.2f} %")
print(f"free norm by smi after median {statistics.median(na):.2f}  range {rng(na):.2f} %")
print(f"free norm by NVML during median {statistics.median(nd):.2f}  range {rng(nd):.2f} %")
print(f"locked 1305           median {statistics.median(locked):.2f}  range {rng(locked):.2f} %")

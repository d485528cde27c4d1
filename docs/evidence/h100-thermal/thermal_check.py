"""Does matmul v3's time at a locked SM clock follow the GPU's temperature?

SM clock locked at 1305 MHz for the whole run. A logger samples nvidia-smi every 100 ms (clocks,
temperatures, power, clock-event reasons). Phases: cool (idle 40 s), then heat (8 s of back-to-back
bf16 8192^3 GEMMs, locked) x 6, then cool-down waits. After each phase: kprof's event Timer (CUPTI,
L2 flushed) times matmul v3, a cuBLAS GEMM of the same shape, softmax v2, vector_add v1 and a clock
probe (a chain of dependent FMAs: its time is cycles / SM clock, and moves only if the clock does)."""
import json, statistics, subprocess, sys, time
sys.path.insert(0, ".")
import torch, triton, triton.language as tl
from kprof_mcp.models import ProfileRequest
from kprof_mcp.modes.event import Timer
from kprof_mcp.packages import available, load

OUT = sys.argv[1]


@triton.jit
def spin(x_ptr, n_iter):
    offs = tl.program_id(0) * 128 + tl.arange(0, 128)
    x = tl.load(x_ptr + offs)
    for _ in range(n_iter):
        x = x * 1.0000001 + 0.0000001
    tl.store(x_ptr + offs, x)


def smi(fields):
    r = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits"],
                       capture_output=True, text=True)
    return [s.strip() for s in r.stdout.strip().split(",")]


logger = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,temperature.gpu,"
                           "temperature.memory,power.draw,clocks_event_reasons.active",
                           "--format=csv,noheader", "-lms", "100"], stdout=open(f"{OUT}/smi.csv", "w"))
subprocess.run(["nvidia-smi", "-lgc", "1305,1305"], capture_output=True)
rows = []
try:
    req = ProfileRequest(kernel="matmul", kernel_source="x", version="v3", params={}, mode="event",
                         out_root="/tmp", budget_ms=300, warmup_ms=50)
    cases = {}
    for k, v in [("matmul", "v3"), ("softmax", "v2"), ("vector_add", "v1")]:
        pkg = load(available([])[k])
        p = pkg.validate_params({})
        inputs = pkg.make_inputs(p, "cuda")
        cases[f"{k} {v}"] = pkg.version(v).build(inputs, p).stages[0].fn
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    cases["cublas 4096^3"] = lambda: torch.matmul(a, b)
    xs = torch.rand(132 * 8 * 128, device="cuda")
    cases["clock probe"] = lambda: spin[(132 * 8,)](xs, 20000)
    big_a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    big_b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)

    def measure(phase):
        t, mt, pw = smi("temperature.gpu,temperature.memory,power.draw")
        row = {"phase": phase, "t": round(time.time(), 1), "gpu_c": t, "mem_c": mt}
        for name, fn in cases.items():
            tim = Timer(torch, True, req, "cupti")
            row[name] = round(tim.time(fn).median_ns / 1e3, 2)
        rows.append(row)
        print(json.dumps(row), flush=True)

    def heat(s):
        t0 = time.time()
        while time.time() - t0 < s:
            for _ in range(20):
                torch.matmul(big_a, big_b)
            torch.cuda.synchronize()

    for c in cases.values():
        c()
    torch.cuda.synchronize()
    time.sleep(40)
    measure("cool 40s")
    measure("cool again")
    for i in range(6):
        heat(8)
        measure(f"heat {8 * (i + 1)}s")
    for w in (5, 10, 20, 40):
        time.sleep(w)
        measure(f"idle {w}s")
    heat(20)
    measure("heat 20s")
finally:
    subprocess.run(["nvidia-smi", "-rgc"], capture_output=True)
    logger.terminate()
json.dump(rows, open(f"{OUT}/thermal.json", "w"), indent=1)
names = [k for k in rows[0] if k not in ("phase", "t", "gpu_c", "mem_c")]
print("| phase | GPU °C | HBM °C | " + " | ".join(f"{n} (µs)" for n in names) + " |")
for r in rows:
    print(f"| {r['phase']} | {r['gpu_c']} | {r['mem_c']} | " + " | ".join(f"{r[n]:.2f}" for n in names) + " |")
for n in names:
    v = [r[n] for r in rows]
    print(f"{n}: range {100 * (max(v) - min(v)) / statistics.median(v):.2f} %")

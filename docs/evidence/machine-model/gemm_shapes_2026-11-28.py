"""What a library GEMM attains by its size on this GPU (issue 36: the library-GEMM what-if's attainable
rate). torch.matmul (cuBLAS) at a grid of shapes, clocks free (as commands run), bf16 and fp16 in, each
shape timed with CUDA events over >= 20 ms of back-to-back calls after a warm-up, NVML's SM clock and
power read after each timing. Also the four recorded command pairs' needed GEMMs. Prints one JSON line
per shape; run: python3 gemm_shapes_2026-11-28.py > gemm_shapes_2026-11-28_h100.jsonl"""

import json
import subprocess
import time

import torch


def smi() -> dict:
    q = "clocks.sm,power.draw,temperature.gpu"
    out = subprocess.run(
        ["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader,nounits"], capture_output=True, text=True
    ).stdout.split(",")
    return dict(zip(("sm_mhz", "power_w", "temp_c"), (float(x) for x in out))) if len(out) == 3 else {}


def bench(m: int, n: int, k: int, dtype: torch.dtype, tag: str = "grid") -> dict:
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(k, n, device="cuda", dtype=dtype)
    for _ in range(3):
        c = a @ b
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    c = a @ b
    torch.cuda.synchronize()
    one = time.perf_counter() - t0
    reps = max(3, min(2000, int(0.02 / max(one, 1e-6))))
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(reps):
        c = a @ b
    e.record()
    e.synchronize()
    ms = s.elapsed_time(e) / reps
    clk = smi()
    del a, b, c
    flops = 2.0 * m * n * k
    return {"tag": tag, "m": m, "n": n, "k": k, "dtype": str(dtype).split(".")[1], "us": 1e3 * ms,
            "tflops": flops / (ms * 1e-3) / 1e12, "gflop": flops / 1e9, "reps": reps, **clk}


def main() -> None:
    print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda}))
    sizes = (512, 1024, 2048, 4096, 8192)
    for dt in (torch.bfloat16,):
        for k in (256, 768, 2048, 8192):
            for m in sizes:
                for n in sizes:
                    print(json.dumps(bench(m, n, k, dt)), flush=True)
    # the four recorded command pairs' needed GEMMs (their scripts' shapes)
    for m, n, k, tag in (
        (8192, 50264, 768, "lm_head_vocab good"),
        (8192, 2048, 2048, "multi_loss_backward trunk"),
        (8192, 2048, 2048, "quad_form_diag X@S"),
        (8192, 8192, 2048, "quad_form_diag bad (XS)X^T"),
        (8192, 50257, 768, "lm_head_vocab bad"),
    ):
        print(json.dumps(bench(m, n, k, torch.bfloat16, tag)), flush=True)


if __name__ == "__main__":
    main()

"""Which kernels PyTorch's libraries launch for common ops, by name (issue 36: the machine model reads
what a kernel does from its name in timelines: a GEMM, its pipe, its element type). Prints, per op, the
CUDA kernels torch.profiler saw. Run on the GPU machine:  python docs/evidence/machine-model/kernel_names.py"""

import torch
from torch.profiler import ProfilerActivity, profile

dev = "cuda"
n = 2048


def ops():
    a32 = torch.randn(n, n, device=dev)
    b32 = torch.randn(n, n, device=dev)
    yield "fp32 matmul, TF32 off", lambda: a32 @ b32, False
    yield "fp32 matmul, TF32 on", lambda: a32 @ b32, True
    yield "bf16 matmul", lambda: a32.bfloat16() @ b32.bfloat16(), False
    yield "fp16 matmul", lambda: a32.half() @ b32.half(), False
    yield "fp64 matmul", lambda: a32.double() @ b32.double(), False
    x = torch.randn(16, 64, 56, 56, device=dev)
    w = torch.randn(64, 64, 3, 3, device=dev)
    yield "fp32 conv2d, TF32 off", lambda: torch.nn.functional.conv2d(x, w, padding=1), False
    yield "fp32 conv2d, TF32 on", lambda: torch.nn.functional.conv2d(x, w, padding=1), True
    yield "fp32 bmm small, TF32 off", lambda: torch.bmm(a32[:256].view(4, 64, n), b32[:, :256].reshape(4, n, 64)), False
    yield "fp64 elementwise", lambda: a32.double() * 2.0 + 1.0, False
    yield "complex64 fft", lambda: torch.fft.rfft(a32, dim=-1), False
    yield "complex128 fft", lambda: torch.fft.rfft(a32.double(), dim=-1), False
    q = torch.randn(4, 8, 1024, 64, device=dev, dtype=torch.bfloat16)
    yield "sdpa bf16 causal", lambda: torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True), False
    yield "layer_norm bf16", lambda: torch.nn.functional.layer_norm(q, (64,)), False
    yield "softmax fp32", lambda: torch.softmax(a32, -1), False


for name, fn, tf32 in ops():
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})
    print(f"## {name}")
    for k in names:
        print("   ", k)
print("torch", torch.__version__, torch.cuda.get_device_name(), "cuBLAS", torch.backends.cuda.preferred_blas_library(), "cuDNN", torch.backends.cudnn.version())

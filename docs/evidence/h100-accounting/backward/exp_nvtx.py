import torch
import kprof
kprof.CROSS_THREAD = True
x = torch.randn(1024, 1024, device="cuda", requires_grad=True)
torch.cuda.synchronize()
for i in range(2):
    with kprof.range("step"):
        with kprof.range("forward"):
            y = (x @ x).relu().sum()
        with kprof.range("backward"):
            y.backward()
torch.cuda.synchronize()
print("ok")

"""Does the sandbox's seccomp filter slow a host-bound Python loop (the plain pass of host-bound commands ran
1.3-1.6x slower than the script's own timing on the H200, 2026-11-28)? A kernel whose speculative-store-bypass
mitigation is "seccomp" forces SSBD on every process that installs a filter without
SECCOMP_FILTER_FLAG_SPEC_ALLOW. Each mode runs in a fresh process: no filter, kprof's filter installed by
prctl(PR_SET_SECCOMP) (how kprof installed it until 2026-11-29), and by seccomp(2) with SPEC_ALLOW (now).
Each times a pure-Python loop and, where torch's CUDA is up, 3000 small CUDA ops issued one by one (a
host-bound launch loop), and prints its /proc/self/status speculation lines. From the repository root:

    python3 docs/evidence/machine-model/seccomp_ssbd_2026-11-29.py
"""

import json
import subprocess
import sys

CHILD = r'''
import ctypes, json, sys, time
mode = sys.argv[1]
from kprof_mcp.sandbox import seccomp
if mode == "prctl":
    insns = seccomp.program()
    arr = (seccomp._Filter * len(insns))(*[seccomp._Filter(*x) for x in insns])
    prog = seccomp._Prog(len(insns), ctypes.cast(arr, ctypes.POINTER(seccomp._Filter)))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    assert libc.prctl(38, 1, None, 0, 0) == 0 and libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0
elif mode == "spec_allow":
    seccomp.install()
status = {k: v.strip() for k, v in (l.split(":", 1) for l in open("/proc/self/status"))
          if k.startswith(("Seccomp", "Speculation"))}
def py_loop():
    d = {}
    for i in range(2_000_000):
        d[i & 1023] = d.get(i & 1023, 0) + i
best_py = min((lambda t0: (py_loop(), time.perf_counter() - t0)[1])(time.perf_counter()) for _ in range(5))
out = {"mode": mode, "status": status, "py_loop_s": round(best_py, 4)}
try:
    import torch
    if torch.cuda.is_available():
        x = torch.zeros(256, device="cuda")
        for _ in range(200):
            x.add_(1)
        torch.cuda.synchronize()
        runs = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(3000):
                x.add_(1)
            torch.cuda.synchronize()
            runs.append(time.perf_counter() - t0)
        out["cuda_op_us"] = round(min(runs) / 3000 * 1e6, 2)
except Exception as e:
    out["cuda_error"] = str(e)[:200]
print(json.dumps(out))
'''

for f in ("spec_store_bypass", "spectre_v2"):
    try:
        print(f, ":", open(f"/sys/devices/system/cpu/vulnerabilities/{f}").read().strip())
    except OSError as e:
        print(f, ":", e)
res = {}
for _rep in range(2):  # the modes interleaved, twice
    for mode in ("none", "prctl", "spec_allow"):
        cp = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, timeout=300)
        line = (
            cp.stdout.strip().splitlines()[-1]
            if cp.stdout.strip()
            else json.dumps({"error": cp.stderr[-300:]})
        )
        print(line, flush=True)
        res.setdefault(mode, []).append(json.loads(line))
for mode, rows in res.items():
    py = min(r.get("py_loop_s", 1e9) for r in rows)
    op = min(r.get("cuda_op_us", float("nan")) for r in rows)
    py0 = min(x.get("py_loop_s", 1e9) for x in res["none"])
    op0 = min(x.get("cuda_op_us", float("nan")) for x in res["none"])
    print(f"{mode:10s} py_loop {py:.4f} s ({py / py0:.2f}x none)  cuda op {op:.2f} us ({op / op0:.2f}x none)")

"""Warm workers against real faults (GPU or CPU): a profile, a kernel that faults (an illegal
memory access on a GPU), a kernel that hangs past its time limit, a kernel edited between
profiles — and after each, a profile of vector_add that must be correct, in a new worker.

    python docs/evidence/h100-agent-loop/warm_faults.py WORKSPACE
"""

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # the repository root
sys.path.insert(0, str(ROOT))

from kprof_mcp.engine import Config, Engine, KprofError  # noqa: E402

ws = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/kprof-warm-faults").resolve()
(ws / "k").mkdir(parents=True, exist_ok=True)
src = (ROOT / "tests" / "fixtures" / "user_kernels" / "scale.py").read_text()
engine = Engine(Config(workspace=ws, timeout_s=300))


def worker() -> str:
    ws_ = [w for w in engine.pool.status()["workers"] if w["key"] != "describe"]
    return f"pid {ws_[0]['pid']}, served {ws_[0]['served']}" if ws_ else "none"


def profile(kernel, version=None, params=None, **kw):
    t = time.perf_counter()
    o = engine.profile(kernel, version, params or {}, mode="event", **kw)
    s = o.result.stages[0]
    print(
        f"  {kernel} {o.result.version}: {s.timing.median_ns / 1e3:.2f} us ({s.timing.method}, {s.timing.runs} runs), "
        f"correct={o.result.correctness['ok']}, {time.perf_counter() - t:.2f} s wall, worker {worker()}",
        flush=True,
    )
    return o


def fault(mode, **kw):
    p = ws / "k" / f"scale_{mode}.py"
    p.write_text(src.replace('MODE = "ok"', f'MODE = "{mode}"'))
    t = time.perf_counter()
    try:
        engine.profile(str(p), None, {"n": 1 << 20}, mode="event", **kw)
        print(f"  {mode}: NO ERROR (unexpected)")
    except KprofError as e:
        print(f"  {mode}: error after {time.perf_counter() - t:.2f} s: {str(e).splitlines()[0][:220]}")
    print(f"  retired: {engine.pool.status()['retired'][-1:]}", flush=True)


print("baseline")
base = profile("vector_add", "v0")
profile("vector_add", "v0")
for mode, kw in (("illegal", {}), ("segfault", {}), ("hang", {"timeout_s": 20}), ("oom", {})):
    print(f"fault: {mode}")
    fault(mode, **kw)
    o = profile("vector_add", "v0")
    ratio = o.result.stages[0].timing.median_ns / base.result.stages[0].timing.median_ns
    print(f"  after {mode}: vector_add median ÷ baseline = {ratio:.4f}")
print("edit: scale.py ok -> wrong -> ok in one worker")
p = ws / "k" / "scale_edit.py"
for m in ("ok", "wrong", "ok"):
    p.write_text(src.replace('MODE = "ok"', f'MODE = "{m}"'))
    try:
        profile(str(p), None, {"n": 1 << 20})
    except KprofError as e:
        print(f"  {m}: {str(e).splitlines()[0][:200]}")
print(engine.pool.status())
engine.close()

# ruff: noqa: F821 — exec()d with `log` and `ws` given
"""Cache poisoning from a kernel child: where can it write among the caches that a later job of another
client, another workspace's jobs, or the server itself (unconfined) load?"""

import glob
import os

home = os.environ.get("HOME", "")
xdg = os.environ.get("XDG_CACHE_HOME", "")
mine = os.path.dirname(xdg)  # ~/.cache/kprof-mcp/confined/<hash>
targets = {
    "own confined cache (documented: later confined jobs of this workspace load it)": os.path.join(
        mine, "triton", "kprobe7-planted.txt"
    ),
    "another workspace's confined cache": os.path.join(
        os.path.dirname(mine), "0000000000000000", "triton", "x.txt"
    ),
    "the server's own kprof cache (prepared.json)": os.path.join(
        home, ".cache", "kprof-mcp", "prepared.json"
    ),
    "the server's SASS/noise cache": os.path.join(home, ".cache", "kprof-mcp", "noise", "x.json"),
    "the home Triton cache (~/.triton)": os.path.join(home, ".triton", "cache", "x.txt"),
    "the home Inductor cache (/tmp/torchinductor_<user>)": f"/tmp/torchinductor_{os.getlogin() if False else 'root'}/x.txt",
    "kprof's own __pycache__ (the checkout)": glob.glob("/work/main/kprof_mcp/__pycache__")[0]
    + "/kprobe7.pyc"
    if glob.glob("/work/main/kprof_mcp/__pycache__")
    else "/work/main/kprof_mcp/__pycache__/kprobe7.pyc",
    "the venv's site-packages": "/work/main/.venv/lib/python3.11/site-packages/kprobe7.pth",
    "the workspace's package __pycache__ (its own code; workspace source)": os.path.join(
        ws, "evil", "__pycache__", "kprobe7.pyc"
    ),
    "the workspace root (sitecustomize.py)": os.path.join(ws, "sitecustomize.py"),
}
for what, path in targets.items():
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a") as f:
            f.write("")
        print(f"CHECK cache-write {what}: SUCCEEDED {path}", file=log)
        if "own confined" not in what:
            os.unlink(path)
    except Exception as e:
        print(f"CHECK cache-write {what}: BLOCKED {type(e).__name__}: {e}", file=log)
print(
    "env:",
    {k: v for k, v in os.environ.items() if "CACHE" in k or "TRITON" in k or "INDUCTOR" in k},
    file=log,
)

# No thread, no process: hooks the interpreter keeps. sys.addaudithook cannot be removed and runs on every
# audited event of every later job in this worker (open, import, exec, subprocess...); gc.callbacks run at
# each collection (the worker's tidy() collects after every job). Each logs what later jobs do.
import gc, os, sys, time
L = os.path.join(ws, "out", "profiles", "kprobe5", "hooks.log")
seen = set()
def audit(event, args):
    if event == "open" and args and isinstance(args[0], str) and "vector_add" in args[0] and args[0] not in seen:
        seen.add(args[0])
        with open(L, "a") as f:
            f.write(f"{time.strftime('%H:%M:%S')} audit hook saw a later job open {args[0]}\n")
sys.addaudithook(audit)
def on_gc(phase, info):
    if phase == "stop" and info.get("generation") == 2:
        with open(L, "a") as f:
            f.write(f"{time.strftime('%H:%M:%S')} gc callback ran (full collection) in pid {os.getpid()}\n")
gc.callbacks.append(on_gc)
print("hooks installed; threads:", [t.name for t in __import__("threading").enumerate()], file=log, flush=True)

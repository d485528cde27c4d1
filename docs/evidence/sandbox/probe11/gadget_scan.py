"""P11-1's gadget search: call every public callable of MODULE with a matplotlib Figure (as pyplot.figure
calls a figure.hooks entry), in a scratch working directory holding payload files (conftest.py, .pdbrc,
pytest.ini + plugin, setup.py, __main__.py, .env, sitecustomize.py) that each write MARK_<name> when run.
Prints the callables after which a MARK appeared. Run as an unprivileged user in a scratch directory:
    python gadget_scan.py MODULE [MODULE...]"""

import importlib
import os
import signal
import sys

os.environ["MPLBACKEND"] = "Agg"
import matplotlib.pyplot as plt  # noqa: E402

PAY = {
    "conftest.py": "conftest",
    "sitecustomize.py": "sitecustomize",
    "evilplug.py": "evilplug",
    "setup.py": "setup",
    "__main__.py": "main",
}
for f, tag in PAY.items():
    open(f, "w").write(f"open('MARK_{tag}', 'w').write('x')\n")
open(".pdbrc", "w").write("import os; open('MARK_pdbrc','w').write('x')\n")
open("pytest.ini", "w").write("[pytest]\naddopts = -p evilplug\n")
open(".env", "w").write("KPROBE11_DOTENV=1\n")
fig = plt.figure()


def marks():
    return {f for f in os.listdir(".") if f.startswith("MARK_")} | (
        {"env"} if os.environ.get("KPROBE11_DOTENV") else set()
    )


signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(TimeoutError()))
sys.stdin = open(os.devnull)
for mod in sys.argv[1:]:
    try:
        m = importlib.import_module(mod)
    except BaseException as e:  # noqa: BLE001
        print(mod, "import failed", type(e).__name__, flush=True)
        continue
    for name in sorted(dir(m)):
        if name.startswith("__"):
            continue
        obj = getattr(m, name, None)
        if not callable(obj) or name in (
            "exit",
            "_exit",
            "abort",
            "kill",
            "killpg",
            "fork",
            "forkpty",
            "execv",
            "execve",
            "execl",
            "execvp",
            "execlp",
            "system",
            "pause",
            "sleep",
            "interact",
            "serve_forever",
            "main",
            "setsid",
            "setuid",
            "setgid",
        ):
            continue
        before = marks()
        signal.alarm(2)
        try:
            obj(fig)
            res = "returned"
        except BaseException as e:  # noqa: BLE001
            res = type(e).__name__
        finally:
            signal.alarm(0)
        new = marks() - before
        if new:
            print(f"GADGET {mod}:{name} -> {sorted(new)} ({res})", flush=True)
print("scan done", flush=True)

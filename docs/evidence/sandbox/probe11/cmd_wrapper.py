"""profile_command's script (the attacker's): runs attack file sys.argv[1] with `log` (a file in the
working directory, which a command may write) and `ws` set, and prints the log."""

import os
import sys

name = sys.argv[1]
ws = os.path.dirname(os.getcwd())
with open(name + ".txt", "a") as log:
    try:
        exec(compile(open(name + ".py").read(), name, "exec"), {"log": log, "ws": ws, "__name__": "attack"})
    except BaseException as e:  # noqa: BLE001
        print("EXC", type(e).__name__, e, file=log)
print(open(name + ".txt").read())

# The command's side of the flip race: write into FLIP_TARGET/command (outside the workspace) by its path.
import os

target = open(os.path.join(ws, "FLIP_TARGET")).read().strip()  # noqa: F821
p = os.path.join(target, "command", f"PWNED-{os.getpid()}")
try:
    with open(p, "w") as f:
        f.write("written by a confined command\n")
    log.write(f"flipw: WROTE {p}\n")  # noqa: F821
except OSError as e:
    log.write(f"flipw: refused {e}\n")  # noqa: F821

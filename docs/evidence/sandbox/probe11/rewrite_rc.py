# profile_command's script: rewrite the workspace's existing matplotlibrc (cwd: the workspace root)
import pathlib

pathlib.Path("matplotlibrc").write_text(pathlib.Path("cmd/rc.txt").read_text())
print("rewrote matplotlibrc:", pathlib.Path("matplotlibrc").read_text())

"""Issue 38, the eleventh probe's P11-1 (docs/evidence/sandbox/probe-2026-11-27-eleventh.md): matplotlib reads a
``matplotlibrc`` from the working directory first, and the server's working directory is the workspace, whose
existing files a command may rewrite. Its ``figure.hooks`` (``module:callable``) were imported and called with each
figure the unconfined server drew (a sweep's plot). The server's pictures now use matplotlib's own defaults
(kprof_mcp.render.mpl): the hook named in the workspace's rc file is never called."""

import os
import subprocess
import sys

DRAW = r"""
from pathlib import Path
from kprof_mcp.render.plots import plot_sweep
rows = [{"version": "v0", "n": n, "time_us": 1.0 * n, "pct_roofline": None} for n in (1, 2, 4)]
plot_sweep(rows, "n", Path("sweep.png"), "sweep")
print("drawn", Path("sweep.png").stat().st_size > 0)
"""


def test_a_matplotlibrc_in_the_working_directory_runs_nothing(tmp_path):
    (tmp_path / "matplotlibrc").write_text("figure.hooks: kp11_hook:hook\nfigure.dpi: 7\n")
    (tmp_path / "kp11_hook.py").write_text(
        "from pathlib import Path\n\ndef hook(fig):\n    Path('HOOK_CALLED').write_text('yes')\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]), MPLBACKEND="Agg")
    cp = subprocess.run(
        [sys.executable, "-c", DRAW], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert cp.returncode == 0, cp.stderr[-2000:]
    assert "drawn True" in cp.stdout
    assert not (tmp_path / "HOOK_CALLED").exists()  # the workspace's hook was not called
    # the control: matplotlib itself, in the same directory, does call it
    ctl = "import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt; plt.figure()"
    cp = subprocess.run(
        [sys.executable, "-c", ctl], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert (tmp_path / "HOOK_CALLED").exists(), cp.stderr[-2000:]

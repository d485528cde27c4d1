"""matplotlib for the server's pictures, on Agg and with matplotlib's own defaults.

matplotlib reads a ``matplotlibrc`` from the process's working directory before any other (before
``$MATPLOTLIBRC``), and the server's working directory is usually the workspace, whose files a command
may rewrite: its ``figure.hooks`` (``module:callable``) were imported and called with each figure by
the unconfined server (issue 38, the eleventh probe's P11-1), and other keys name programs to run
(``animation.ffmpeg_path``). The rc file is only parsed at import; every value is put back to
matplotlib's internal defaults (``rcdefaults``) before a figure is made."""

from __future__ import annotations


def pyplot():
    """``matplotlib.pyplot``, its parameters matplotlib's defaults, the Agg backend."""
    import matplotlib

    matplotlib.rcdefaults()  # nothing of a matplotlibrc found on the way (the workspace's included)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt

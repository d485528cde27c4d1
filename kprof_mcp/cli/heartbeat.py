"""A heartbeat on stderr when it is not a terminal (issue 41): the progress bar is drawn only on a
terminal, so piped into a file or another program a long profile printed nothing for minutes. Every
``KPROF_HEARTBEAT_S`` seconds (10 by default) one line: the elapsed time and the job's phase."""

from __future__ import annotations

import os
import sys
import threading
import time
from types import TracebackType


def interval_s() -> float:
    try:
        return max(0.05, float(os.environ.get("KPROF_HEARTBEAT_S", "10")))
    except ValueError:
        return 10.0


class Heartbeat:
    """``with Heartbeat("profiling vector_add", on) as hb:`` … ``hb.update(fraction, message)`` (an
    engine progress callback): while the block runs and ``on``, one line every interval — the elapsed
    time, the latest phase (at first ``phase``) and the fraction done when known."""

    def __init__(self, phase: str, on: bool) -> None:
        self.on = on
        self.phase: str = phase
        self.fraction: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = time.monotonic()

    @staticmethod
    def wanted(quiet: bool = False) -> bool:
        """On unless asked for quiet, or stderr is a terminal (where the progress bar is drawn)."""
        return not quiet and not sys.stderr.isatty()

    def update(self, fraction: float | None, message: str) -> None:
        self.phase, self.fraction = message, fraction

    def line(self) -> str:
        done = f" ({100 * self.fraction:.0f} %)" if self.fraction is not None else ""
        return f"kprof: {time.monotonic() - self._t0:.0f} s, {self.phase}{done}"

    def _beat(self) -> None:
        every = interval_s()
        while not self._stop.wait(every):
            print(self.line(), file=sys.stderr, flush=True)

    def __enter__(self) -> Heartbeat:
        self._t0 = time.monotonic()
        if self.on:
            self._thread = threading.Thread(target=self._beat, name="kprof-heartbeat", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

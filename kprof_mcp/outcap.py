"""A child's output, read with a bound on the server's memory (issue 38, the fourth probe's P4-7..P4-9).

A profiled command or kernel package may print gigabytes, on one line without a newline too. Its
stdout (a pipe) is read in chunks, never line by line without a bound: a line over :data:`MAX_LINE`
bytes keeps its start and says how much of it was left out; of all the lines, the first
:data:`HEAD` bytes and the last :data:`TAIL` bytes (at most :data:`LINES` lines) are kept, and what
lies between is counted and said. Its stderr (a file) is read the same way: its first and last
bytes only. Nothing here grows with the size of the output.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Iterator

HEAD = 64 << 10  # the first bytes of an output kept
TAIL = 4 << 20  # the last bytes of an output kept
LINES = 6000  # at most this many lines kept at the end (the line cap of before)
MAX_LINE = 1 << 20  # a longer line keeps its first MAX_LINE bytes
CHUNK = 1 << 16
ALIGN = 4096  # a kept part of a file is cut at a line end no further than this


def size(n: int) -> str:
    if n >= 1 << 20:
        return f"{n / (1 << 20):,.1f} MB"
    return f"{n / 1024:,.1f} KB" if n >= 1024 else f"{n} bytes"


def note(left_out: int, lines: int | None = None) -> str:
    what = f" ({lines:,} lines)" if lines else ""
    return f"[kprof: … {size(left_out)} of output left out{what}: the first and last parts are kept]\n"


def lines(fd: int, max_line: int = MAX_LINE) -> Iterator[tuple[str, int]]:
    """The lines read from ``fd`` until its end, decoded (invalid bytes replaced), each with the
    number of its bytes that were read. A line over ``max_line`` bytes is cut there and ends with
    a note of how much was left out; the last line may lack its newline."""
    buf = bytearray()
    cut = 0

    def done() -> tuple[str, int]:
        nonlocal cut
        text = bytes(buf).decode(errors="replace")
        n = len(buf) + cut
        if cut:
            text = text.rstrip("\n") + f" [kprof: … {size(cut)} of this line left out]\n"
        buf.clear()
        cut = 0
        return text, n

    while True:
        try:
            chunk = os.read(fd, CHUNK)
        except InterruptedError:  # pragma: no cover — retried by Python itself since 3.5
            continue
        except OSError:
            break
        if not chunk:
            break
        start = 0
        while start < len(chunk):
            nl = chunk.find(b"\n", start)
            end = len(chunk) if nl < 0 else nl + 1
            room = max_line - len(buf)
            piece = end - start
            if piece <= room:
                buf += chunk[start:end]
            else:
                buf += chunk[start : start + max(room, 0)]
                cut += piece - max(room, 0)
            start = end
            if nl >= 0:
                yield done()
    if buf or cut:
        yield done()


class Kept:
    """What the server keeps of a stream of lines: its first ``head`` bytes, then its last ``tail``
    bytes and at most ``max_lines`` lines; the bytes and lines left out between are counted."""

    def __init__(self, head: int = HEAD, tail: int = TAIL, max_lines: int = LINES):
        self._head_cap, self._tail_cap, self._max_lines = head, tail, max_lines
        self._head: list[str] = []
        self._head_n = 0
        self._tail: deque[tuple[str, int]] = deque()
        self._tail_n = 0
        self.left_out = 0  # bytes of whole lines left out between head and tail
        self.lines_left_out = 0
        self.read = 0  # bytes seen in all
        self._lock = threading.Lock()  # a reader thread may still add while the text is taken

    def add(self, line: str, n: int | None = None) -> None:
        n = len(line) if n is None else n
        with self._lock:
            self._add(line, n)

    def _add(self, line: str, n: int) -> None:
        self.read += n
        kept = len(line)
        if not self._tail and self._head_n + kept <= self._head_cap:
            self._head.append(line)
            self._head_n += kept
            return
        self._tail.append((line, n))
        self._tail_n += kept
        while self._tail and (self._tail_n > self._tail_cap or len(self._tail) > self._max_lines):
            old, old_n = self._tail.popleft()
            self._tail_n -= len(old)
            self.left_out += old_n
            self.lines_left_out += 1

    def text(self) -> str:
        with self._lock:
            middle = note(self.left_out, self.lines_left_out) if self.lines_left_out else ""
            return "".join(self._head) + middle + "".join(line for line, _ in self._tail)


def read_file(fd: int, start: int = 0, head: int = HEAD, tail: int = TAIL) -> str:
    """What a file (a child's stderr) holds from ``start`` on: all of it when small, else its first
    ``head`` and last ``tail`` bytes (cut at a line end where one is near) with a note of what
    was left out between. Read with ``pread``: the file's offset is not used."""
    end = os.fstat(fd).st_size
    if end - start <= head + tail:
        return _pread(fd, start, max(end - start, 0)).decode(errors="replace")
    first = _pread(fd, start, head)
    last = _pread(fd, end - tail, tail)
    nl = first.rfind(b"\n")
    if nl >= max(0, len(first) - ALIGN):  # cut at a line end when one is near
        first = first[: nl + 1]
    nl = last.find(b"\n")
    if 0 <= nl < min(ALIGN, len(last) - 1):
        last = last[nl + 1 :]
    left = (end - start) - len(first) - len(last)
    text = first.decode(errors="replace")
    return (
        text + ("" if text.endswith("\n") or not text else "\n") + note(left) + last.decode(errors="replace")
    )


def _pread(fd: int, offset: int, n: int) -> bytes:
    parts = []
    while n > 0:
        b = os.pread(fd, min(n, 1 << 20), offset)
        if not b:
            break
        parts.append(b)
        offset += len(b)
        n -= len(b)
    return b"".join(parts)

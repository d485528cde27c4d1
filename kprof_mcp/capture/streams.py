"""The CUDA stream a stage is timed on, by the id the driver gives it (``cuStreamGetId``, CUDA 12+):
the id Nsight Compute reports for each profiled launch (``launch__stream_id``), so a launch on another
stream — one the caller's stream may not wait for — can be told from the stage's own (issue 37)."""

from __future__ import annotations

import ctypes
import functools


@functools.lru_cache(maxsize=1)
def _driver():
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        fn = lib.cuStreamGetId
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_ulonglong)]
    fn.restype = ctypes.c_int
    return fn


def current_stream_id(torch) -> int | None:
    """The driver's id of torch's current CUDA stream (the legacy default stream included), or None
    where the driver has no ``cuStreamGetId`` or the call fails."""
    fn = _driver()
    if fn is None:
        return None
    out = ctypes.c_ulonglong(0)
    handle = torch.cuda.current_stream().cuda_stream
    if fn(ctypes.c_void_p(handle or None), ctypes.byref(out)) != 0:
        return None
    return int(out.value)

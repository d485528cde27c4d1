"""The persisting-L2 carve-out, through the CUDA driver (``libcuda.so.1`` by ctypes: torch has no API
for it). Lines marked persisting (a carve-out set by ``cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE)``
and an access-policy window on the stream) are not evicted by normal accesses, so the L2 flush before
each timed run leaves them: a kernel could keep its data in L2 from run to run.

:func:`reset`, before timing: the carve-out set to 0, persisting lines reset to normal
(``cuCtxResetPersistingL2Cache``) and any access-policy window on the timed streams cleared (a window of
0 bytes, the streams' default). :func:`state`, after timing: what the timed runs set again. Every call is
guarded: on the CPU, without the driver library or a current context, or where a call is refused, it does
nothing and says why in a ``note``.
"""

from __future__ import annotations

import ctypes
from typing import Any

CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06
CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1
CU_ACCESS_PROPERTY_PERSISTING = 2


class _Window(ctypes.Structure):  # CUaccessPolicyWindow
    _fields_ = [
        ("base_ptr", ctypes.c_void_p),
        ("num_bytes", ctypes.c_size_t),
        ("hitRatio", ctypes.c_float),
        ("hitProp", ctypes.c_int),
        ("missProp", ctypes.c_int),
    ]


class _AttrValue(ctypes.Union):  # CUstreamAttrValue (CUlaunchAttributeValue: 64 bytes in CUDA 12)
    _fields_ = [("window", _Window), ("pad", ctypes.c_char * 64)]


def _driver() -> tuple[Any, str | None]:
    try:
        drv = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return (
            None,
            f"the CUDA driver library could not be loaded ({e}): the persisting-L2 carve-out was not reset",
        )
    ctx = ctypes.c_void_p()
    if drv.cuCtxGetCurrent(ctypes.byref(ctx)) != 0 or not ctx.value:
        return None, "no current CUDA context on this thread: the persisting-L2 carve-out was not reset"
    return drv, None


def _carve_out(drv) -> int | None:
    v = ctypes.c_size_t()
    return (
        int(v.value) if drv.cuCtxGetLimit(ctypes.byref(v), CU_LIMIT_PERSISTING_L2_CACHE_SIZE) == 0 else None
    )


def _handles(torch, streams: list[Any]) -> list[int]:
    out = [torch.cuda.current_stream().cuda_stream]
    out += [s.cuda_stream for s in streams if s.cuda_stream not in out]
    return out


def _window(drv, handle: int) -> _Window | None:
    v = _AttrValue()
    rc = drv.cuStreamGetAttribute(
        ctypes.c_void_p(handle), CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, ctypes.byref(v)
    )
    return v.window if rc == 0 else None


def reset(torch, use_cuda: bool, streams: list[Any] | None = None) -> dict[str, Any]:
    """Before timing: the carve-out to 0, persisting lines to normal, the timed streams' windows cleared.
    What was found and done; ``note`` where nothing could be."""
    if not use_cuda:
        return {"note": "CPU: no L2 carve-out"}
    drv, why = _driver()
    if drv is None:
        return {"note": why}
    torch.cuda.synchronize()
    out: dict[str, Any] = {"carve_out_bytes": _carve_out(drv), "windows_cleared": 0}
    notes = []
    if out["carve_out_bytes"]:
        rc = drv.cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(0))
        out["carve_out_cleared"] = rc == 0
        if rc:
            notes.append(f"cuCtxSetLimit(persisting L2, 0) returned {rc}")
    rc = drv.cuCtxResetPersistingL2Cache()
    out["lines_reset"] = rc == 0
    if rc:
        notes.append(f"cuCtxResetPersistingL2Cache returned {rc}")
    for h in _handles(torch, streams or []):
        w = _window(drv, h)
        if w is None or not w.num_bytes:
            continue
        rc = drv.cuStreamSetAttribute(
            ctypes.c_void_p(h), CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, ctypes.byref(_AttrValue())
        )
        if rc == 0:
            out["windows_cleared"] += 1
        else:
            notes.append(f"clearing stream {h}'s access-policy window returned {rc}")
    if notes:
        out["note"] = "; ".join(notes)
    return out


def state(torch, use_cuda: bool, streams: list[Any] | None = None) -> dict[str, Any]:
    """After timing: the carve-out and the timed streams' access-policy windows (those with bytes)."""
    if not use_cuda:
        return {"note": "CPU: no L2 carve-out"}
    drv, why = _driver()
    if drv is None:
        return {"note": why.replace(" was not reset", " was not read")}
    torch.cuda.synchronize()
    windows = []
    for h in _handles(torch, streams or []):
        w = _window(drv, h)
        if w is not None and w.num_bytes:
            windows.append(
                {
                    "stream": h,
                    "num_bytes": int(w.num_bytes),
                    "hit_ratio": float(w.hitRatio),
                    "hit_prop": int(w.hitProp),
                }
            )
    return {"carve_out_bytes": _carve_out(drv), "windows": windows}


def persisting_after(st: dict[str, Any]) -> str | None:
    """Why the timed runs may have kept data in L2 across the flush (``state`` after them), or None."""
    said = []
    if st.get("carve_out_bytes"):
        said.append(
            f"a persisting-L2 carve-out of {st['carve_out_bytes'] / 2**20:.1f} MiB was set during the timed runs"
        )
    for w in st.get("windows", []):
        if w["hit_prop"] == CU_ACCESS_PROPERTY_PERSISTING and w["hit_ratio"] > 0:
            said.append(
                f"an access-policy window of {w['num_bytes'] / 2**20:.1f} MiB marked persisting was set on "
                f"stream {w['stream']}"
            )
    return "; ".join(said) or None

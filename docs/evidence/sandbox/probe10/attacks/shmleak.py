"""Leave memory behind after the job: a SysV shared memory segment (no IPC_RMID), its pages touched, then exit.
Prints the segment id. KP10_SHM_MIB (default 1024)."""

import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
mib = int(os.environ.get("KP10_SHM_MIB", "1024"))
IPC_PRIVATE, IPC_CREAT = 0, 0o1000
sid = libc.shmget(IPC_PRIVATE, ctypes.c_size_t(mib << 20), IPC_CREAT | 0o600)
msg = f"shmget -> {sid} errno {ctypes.get_errno()}"
if sid >= 0:
    addr = libc.shmat(sid, None, 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        msg += f"; shmat failed errno {ctypes.get_errno()}"
    else:
        ctypes.memset(addr, 1, mib << 20)
        msg += f"; {mib} MiB touched"
try:
    log.write("shmleak: " + msg + "\n")  # noqa: F821 — run.py's attack globals
except NameError:
    print("shmleak:", msg)

# Memory that outlives the job's processes: SysV segments (no IPC_RMID) of 256 MiB, each touched then
# detached (the process's RSS stays small), until KP10_FILL_MIB (default 6144) or an error. The OOM killer
# takes the job's processes (oom_score_adj 1000) but cannot free the segments: it goes on to the next.
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmdt.argtypes = [ctypes.c_void_p]
step, total = 256 << 20, int(os.environ.get("KP10_FILL_MIB", "6144")) << 20
done = 0
while done < total:
    sid = libc.shmget(0, ctypes.c_size_t(step), 0o1000 | 0o600)
    if sid < 0:
        log.write(f"shmget failed errno {ctypes.get_errno()} after {done >> 20} MiB\n")  # noqa: F821
        break
    addr = libc.shmat(sid, None, 0)
    ctypes.memset(addr, 1, step)
    libc.shmdt(ctypes.c_void_p(addr))
    done += step
    log.write(f"{done >> 20} MiB in segments\n")  # noqa: F821
    log.flush()  # noqa: F821
log.write(f"shmfill: {done >> 20} MiB left in SysV segments\n")  # noqa: F821

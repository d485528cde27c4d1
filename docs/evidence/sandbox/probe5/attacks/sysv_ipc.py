# SysV IPC is not a file: Landlock does not see it; as another user than root the job has no IPC namespace.
# Another process of the same user (outside every sandbox: a database, another tool) keeps a 0600 segment
# and a message queue under known keys; the job reads and writes the segment and drains the queue.
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
KEY_SHM, KEY_MSG = 0x6B703553, 0x6B70354D
shmid = libc.shmget(KEY_SHM, 0, 0)
print("shmget", shmid, "errno", ctypes.get_errno(), file=log, flush=True)
if shmid >= 0:
    addr = libc.shmat(shmid, None, 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        print("shmat failed errno", ctypes.get_errno(), file=log, flush=True)
    else:
        print("segment read:", ctypes.string_at(addr, 40).split(b"\0")[0], file=log, flush=True)
        ctypes.memmove(addr, b"OVERWRITTEN-BY-THE-JOB\0", 23)
        print("segment written", file=log, flush=True)
msqid = libc.msgget(KEY_MSG, 0)
print("msgget", msqid, "errno", ctypes.get_errno(), file=log, flush=True)
if msqid >= 0:
    buf = ctypes.create_string_buffer(8 + 256)
    n = libc.msgrcv(msqid, buf, 256, 0, 0o4000)  # IPC_NOWAIT
    print("msgrcv", n, buf.raw[8 : 8 + max(n, 0)], file=log, flush=True)

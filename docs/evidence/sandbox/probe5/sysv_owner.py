"""Another program of the same user, outside kprof: a 0600 SysV segment and message queue under known keys.
Run as that user: python sysv_owner.py create|show|remove."""
import ctypes
import struct
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
KEY_SHM, KEY_MSG = 0x6B703553, 0x6B70354D
IPC_CREAT, IPC_RMID = 0o1000, 0
if sys.argv[1] == "create":
    shmid = libc.shmget(KEY_SHM, 4096, IPC_CREAT | 0o600)
    addr = libc.shmat(shmid, None, 0)
    ctypes.memmove(addr, b"SYSV-SECRET-of-another-program\0", 31)
    msqid = libc.msgget(KEY_MSG, IPC_CREAT | 0o600)
    msg = struct.pack("q", 1) + b"QUEUE-SECRET"
    print("created", shmid, msqid, libc.msgsnd(msqid, msg, 12, 0))
elif sys.argv[1] == "show":
    shmid = libc.shmget(KEY_SHM, 0, 0)
    addr = libc.shmat(shmid, None, 0)
    print("segment now:", ctypes.string_at(addr, 40).split(b"\0")[0])
else:
    print("rm", libc.shmctl(libc.shmget(KEY_SHM, 0, 0), IPC_RMID, None), libc.msgctl(libc.msgget(KEY_MSG, 0), IPC_RMID, None))

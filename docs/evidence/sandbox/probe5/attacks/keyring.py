# Kernel keyrings are not files: Landlock does not cover them. Add a key to the user's keyring (@u, shared
# by every process of the uid, it outlives the job) and to the session keyring, and list what is there.
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL = 248, 250
KEY_SPEC_SESSION, KEY_SPEC_USER = -3, -4
for name, ring in (("user", KEY_SPEC_USER), ("session", KEY_SPEC_SESSION)):
    serial = libc.syscall(ADD_KEY, b"user", f"kprobe5-{name}-{os.getpid()}".encode(), b"planted-by-job", 14, ring)
    print("add_key", name, serial, "errno", ctypes.get_errno(), file=log, flush=True)
buf = ctypes.create_string_buffer(4096)
n = libc.syscall(KEYCTL, 11, ctypes.c_long(KEY_SPEC_USER), buf, 4096)  # KEYCTL_READ of the keyring: its key ids
print("user keyring read", n, list(ctypes.cast(buf, ctypes.POINTER(ctypes.c_int32))[: max(n, 0) // 4]), file=log, flush=True)

# ruff: noqa: F821 — exec()d with `log` and `ws` given
"""A run directory's neighbours: 100,000 files, a 2,000-deep directory chain and names with odd bytes
under out/profiles (which a kernel child may write), for the server's listings, reads and removal."""

import os
import time

root = os.path.join(ws, "out", "profiles", "kprobe7", "many")
os.makedirs(root, exist_ok=True)
t0 = time.time()
for i in range(100000):
    open(os.path.join(root, f"f{i:06d}"), "w").close()
d = os.path.join(ws, "out", "profiles", "kprobe7")
fd = os.open(d, os.O_RDONLY)
for _ in range(2000):
    os.mkdir("d", dir_fd=fd) if not os.path.exists(f"/proc/self/fd/{fd}/d") else None
    nfd = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nfd
os.close(fd)
for name in (b"\xff\xfe", b"a\nb", b"\x1b[31mred", "\u202eevil".encode()):
    p = os.path.join(ws.encode(), b"out", b"profiles", b"event", name)
    os.makedirs(p, exist_ok=True)
    open(os.path.join(p, b"result.json"), "wb").write(b'{"kernel": "\xff"}')
print(
    f"CHECK manyfiles: INFO 100000 files, 2000 nested dirs, odd names in {time.time() - t0:.1f} s",
    file=log,
    flush=True,
)

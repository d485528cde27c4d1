"""V2/V3: MB megabytes on FD (1 stdout, 2 stderr) without a newline, then exit 0."""
import os
import sys

fd, mb = int(sys.argv[1]), int(sys.argv[2])
chunk = b"A" * (1 << 20)
for _ in range(mb):
    os.write(fd, chunk)
os._exit(0)

"""V2/V3: MB megabytes on FD (1 stdout, 2 stderr) without a newline (or, with a third argument
'lines', as lines of 1 MiB each: under the server's 6,000-line cap), then exit 0."""
import os
import sys

fd, mb = int(sys.argv[1]), int(sys.argv[2])
chunk = b"A" * (1 << 20)
if len(sys.argv) > 3 and sys.argv[3] == "lines":
    chunk = b"A" * ((1 << 20) - 1) + b"\n"
for _ in range(mb):
    os.write(fd, chunk)
os._exit(0)

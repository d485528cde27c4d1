"""V7: DEPTH nested directories inside the private tmp (TMPDIR's parent: the run's temporary
directory, which the server removes with shutil.rmtree when the job ends). Python 3.11's rmtree
recurses once per level."""
import os
import sys

depth = int(sys.argv[1]) if len(sys.argv) > 1 else 1500
fd = os.open(os.environ["TMPDIR"], os.O_RDONLY | os.O_DIRECTORY)
for i in range(depth):
    os.mkdir("d", dir_fd=fd)
    nfd = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    fd = nfd
print("KPROBE4 made", depth, "nested directories in", os.environ["TMPDIR"])

"""V8 (command): a ghost (ghost.py) started by a command, its log in the working directory."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ghost

pid = ghost.ghost(os.path.abspath(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 120)
print("KPROBE4 ghost pid (in the job's view)", pid, flush=True)
time.sleep(1)

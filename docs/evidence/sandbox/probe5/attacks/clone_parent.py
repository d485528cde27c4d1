# clone(CLONE_PARENT): the new process is a child of this process's PARENT (in a warm worker: the
# sandbox's supervisor), not of this process, so the worker's after-job kill_tree(own pid) misses it.
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
CLONE_PARENT, SIGCHLD = 0x00008000, 17
pid = libc.syscall(56, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0)
if pid == 0:
    try:
        os.execv("/bin/sleep", ["/bin/sleep", "901"])
    finally:
        os._exit(0)
print("me", os.getpid(), "ppid", os.getppid(), "clone_parent child", pid, "errno", ctypes.get_errno(), file=log, flush=True)
time.sleep(0.5)
try:
    print("child's ppid", open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()[1], file=log, flush=True)
except OSError as e:
    print("stat", e, file=log, flush=True)

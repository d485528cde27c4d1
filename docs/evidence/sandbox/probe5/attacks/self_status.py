# What the confined process is: its ids, capabilities, seccomp, and the server's ids.
import os
st = open("/proc/self/status").read()
print("\n".join(l for l in st.splitlines() if l.split(":")[0] in ("Uid", "Gid", "Groups", "CapEff", "CapBnd", "NoNewPrivs", "Seccomp", "Seccomp_filters")), file=log)
try:
    t = sorted(int(p) for p in open([f"/sys/fs/cgroup/memory{l.strip().split(':', 2)[2]}/cgroup.procs" for l in open("/proc/self/cgroup") if ":memory:" in l][0]).read().split())[0]
    s = open(f"/proc/{t}/status").read()
    print("server", t, [l for l in s.splitlines() if l.split(":")[0] in ("Uid", "Gid", "Name")], file=log)
except Exception as e:
    print("server status", e, file=log)
print("userns", os.readlink("/proc/self/ns/user"), "uid_map", open("/proc/self/uid_map").read().strip(), file=log)
try:
    print("server userns", os.readlink(f"/proc/{t}/ns/user"), file=log)
except Exception as e:
    print("server userns", e, file=log)
import resource
for nm in ("RLIMIT_NPROC", "RLIMIT_CPU", "RLIMIT_FSIZE"):
    print(nm, resource.getrlimit(getattr(resource, nm)), file=log)
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(302, t, 7, None, ctypes.byref((ctypes.c_uint64 * 2)()))  # prlimit64 GET of NOFILE
print("raw prlimit64 get ->", r, ctypes.get_errno(), file=log)
r = libc.syscall(302, os.getppid(), 7, None, ctypes.byref((ctypes.c_uint64 * 2)()))
print("raw prlimit64 get of my parent (supervisor) ->", r, ctypes.get_errno(), file=log)
for f in (os.environ.get("HOME", "") + "/secret.txt", "/root/.bashrc"):
    try:
        open(f).read(); print("READ", f, file=log)
    except OSError as e:
        print("read", f, e, file=log)

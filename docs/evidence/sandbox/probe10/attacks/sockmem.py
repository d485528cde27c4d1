"""Hold memory in unix socket buffers (not charged to a cgroup v1 memory controller): N MiB target,
socketpairs filled until the target or the fd limit; prints what it holds, then sleeps HOLD seconds."""

import os
import socket
import sys
import time


def meminfo(key):
    for ln in open("/proc/meminfo"):
        if ln.startswith(key + ":"):
            return int(ln.split()[1]) // 1024


def run(target_mib: int, hold: float, out=print):
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError):
        pass
    before = meminfo("MemAvailable")
    pairs, sent = [], 0
    chunk = b"x" * 65536
    try:
        while sent < target_mib << 20:
            a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            a.setblocking(False)
            try:
                while True:
                    sent += a.send(chunk)
            except BlockingIOError:
                pass
            pairs.append((a, b))
    except OSError as e:
        out(f"stopped: {e}")
    time.sleep(1)
    after = meminfo("MemAvailable")
    try:
        cg = [ln for ln in open("/proc/self/cgroup") if ":memory:" in ln]
        path = "/sys/fs/cgroup/memory" + cg[0].split(":", 2)[2].strip()
        usage = int(open(path + "/memory.usage_in_bytes").read()) >> 20
        limit = int(open(path + "/memory.limit_in_bytes").read()) >> 20
    except (OSError, IndexError, ValueError):
        usage = limit = -1
    out(
        f"sockmem: {len(pairs)} pairs, {sent >> 20} MiB queued; MemAvailable {before} -> {after} MiB "
        f"(dropped {before - after} MiB); own memcg usage {usage} MiB of limit {limit} MiB"
    )
    time.sleep(hold)


if __name__ == "__main__" or __name__ == "attack":
    args = sys.argv[1:] if __name__ == "__main__" else os.environ.get("KP10_SOCKMEM", "3000 5").split()
    run(int(args[0]), float(args[1]))

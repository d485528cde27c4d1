"""What a confined process sees of its own confinement (issue 38, the GPU checks nsys_probe.py and
gpu_check.py): :data:`CODE` is pasted into the program under test (a command, a kernel package, nsys's
target) and ``selfcheck(outside, host_ipc, record)`` prints one ``SELFCHECK {json}`` line (and appends it to
``record``): ``outside`` — a write outside the allowed paths (Landlock: EACCES), ``seccomp``/``nnp`` — the
``Seccomp``/``NoNewPrivs`` fields of /proc/self/status (2/1: the filter installed), ``chmod`` — a chmod of a
file of its own in its TMPDIR (the filter: EPERM), ``own_ipc`` — its IPC namespace is not the server's,
``ancestors`` — the ``comm`` of its parents as far as its /proc shows them (``nsys``, ``ncu``: behind the
profiler, in the same domain)."""

CODE = r'''
def selfcheck(outside, host_ipc, record=None):
    import errno, json, os, sys
    def err(e):
        return errno.errorcode.get(e.errno, str(e.errno))
    r = {"pid": os.getpid(), "argv": " ".join(sys.argv)[-90:]}
    try:
        with open(outside, "w") as f:
            f.write("escaped")
        r["outside"] = "WRITTEN"
    except OSError as e:
        r["outside"] = err(e)
    status = dict(ln.split(":", 1) for ln in open("/proc/self/status").read().splitlines() if ":" in ln)
    r["seccomp"], r["nnp"] = status.get("Seccomp", "?").strip(), status.get("NoNewPrivs", "?").strip()
    own = os.path.join(os.environ.get("TMPDIR") or "/tmp", "selfcheck-%d" % os.getpid())
    try:
        open(own, "w").close()
        os.chmod(own, 0o600)
        r["chmod"] = "done"
    except OSError as e:
        r["chmod"] = err(e)
    r["own_ipc"] = os.readlink("/proc/self/ns/ipc") != host_ipc
    chain, pid = [], os.getppid()
    for _ in range(5):
        try:
            st = dict(ln.split(":", 1) for ln in open("/proc/%d/status" % pid).read().splitlines() if ":" in ln)
        except OSError:
            break
        chain.append(st.get("Name", "?").strip())
        pid = int(st.get("PPid", "0"))
        if pid <= 0:
            break
    r["ancestors"] = chain
    line = "SELFCHECK " + json.dumps(r)
    print(line, flush=True)
    if record:
        try:
            with open(record, "a") as f:
                f.write(line + "\n")
        except OSError as e:
            print("SELFCHECK record", err(e), flush=True)
'''

"""Which processes the command may signal (kill(pid, 0) succeeds), with their name and parent: Landlock's
signal scope should leave only the job's own."""
import os

me = os.getpid()
ok = []
for p in sorted(int(x) for x in os.listdir("/proc") if x.isdigit()):
    if p == me:
        continue
    try:
        os.kill(p, 0)
    except OSError:
        continue
    try:
        st = open(f"/proc/{p}/stat").read()
        name, ppid = st[st.index("(") + 1:st.rindex(")")], st.rpartition(")")[2].split()[1]
    except OSError:
        name, ppid = "?", "?"
    ok.append((p, name, ppid))
print(f"KPROBE4 me {me} (ppid {os.getppid()}); signalable: {ok}", flush=True)

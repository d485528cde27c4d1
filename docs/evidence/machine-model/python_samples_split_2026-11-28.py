# Where the host's sampled Python was in the steps of a recording made with python_backtrace and
# --python-sampling (scripts/record_python_samples.py): the launching lines (innermost frame of the CUDA calls' Python
# backtraces), and the main thread's samples by innermost frame, with the share at a launching line.
#   python3 python_samples_split_2026-11-28.py export.sqlite
import sqlite3, json, sys, collections, os
db = sys.argv[1]
c = sqlite3.connect(db)
S = dict(c.execute("select id, value from StringIds"))
doms = {}
for r in c.execute("select domainId, text from NVTX_EVENTS where eventType=75"):
    doms[r[1]] = r[0]
steps = c.execute("select e.start,e.end,e.globalTid from NVTX_EVENTS e left join StringIds s on e.textId=s.id where e.eventType=59 and coalesce(e.text,s.value)='step' order by e.start").fetchall()
steps = steps[1:]  # warm-up occurrence
tid = steps[0][2]
lo, hi = steps[0][0], steps[-1][1]
def frames(js, key):
    d = json.loads(js)[key]
    return [(S.get(f["Function"], "?"), S.get(f["File"], "?"), f["Line"]) for f in d.get("Frames", [])], d.get("Thread state")
samp = []
for st, gt, js in c.execute("select start, globalTid, jsonText from NVTX_EVENTS where eventType=34 and domainId=? and start between ? and ?", (doms["Python Periodic Sampling"], lo, hi)):
    fr, state = frames(js, "Python Periodic Sampling")
    samp.append((st, gt, state, fr))
print("samples in steps", len(samp), "threads", collections.Counter(s[1] == tid for s in samp), "states", collections.Counter(s[2] for s in samp))
launch_lines = collections.Counter()
for st, gt, js in c.execute("select start, globalTid, jsonText from NVTX_EVENTS where eventType=34 and domainId=? and start between ? and ?", (doms["Python Backtrace on CUDA"], lo, hi)):
    fr, _ = frames(js, "Python Backtrace on CUDA")
    if fr:
        launch_lines[fr[0]] += 1
print("launching innermost lines:", len(launch_lines))
for k, n in launch_lines.most_common(8): print("  L", n, k[0], os.path.basename(k[1]), k[2])
inner = collections.Counter()
onl = 0
for st, gt, state, fr in samp:
    if gt != tid or not fr: continue
    f = fr[0]
    inner[(f[0], os.path.basename(f[1]), f[2])] += 1
    onl += f in launch_lines
n = sum(inner.values())
print("main-thread samples", n, "at launching lines", onl, f"{onl/max(n,1):.0%}")
for k, v in inner.most_common(25): print(f"  {v:4d} {k}")

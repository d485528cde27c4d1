"""V10: progress lines (kprof's own prefix) that the server parses and forwards: NaN, infinities,
huge numbers, a 50 MB message, ANSI escapes and a forged 'done' line."""
for p in ("NaN", "Infinity", "-Infinity", "1e308", "-1", "12345678901234567890"):
    print('@@KPROF {"progress": %s, "message": "kprobe4 %s"}' % (p, p), flush=True)
print('@@KPROF {"progress": 0.5, "message": "\\u001b[2J\\u001b[31mFAKE kprof: all good\\u001b[0m"}', flush=True)
print('@@KPROF {"progress": 0.5, "message": "' + "M" * (50 << 20) + '"}', flush=True)
print('@@KPROF-DONE {"job": 1, "rc": 0}', flush=True)
print("\x1b]0;kprobe4 title\x07 ANSI in output \x1b[2J", flush=True)

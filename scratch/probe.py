import sys, glob
sys.path.insert(0, "/opt/nvidia/nsight-compute/2025.3.1/extras/python")
import ncu_report
for f in sorted(glob.glob(sys.argv[1])):
    ctx = ncu_report.load_report(f)
    print(f, ctx.num_ranges())
    for ri in range(ctx.num_ranges()):
        r = ctx.range_by_idx(ri)
        for ai in range(r.num_actions()):
            a = r.action_by_idx(ai)
            m = a.metric_by_name("gpu__time_duration.sum")
            print(" ", a.name(), m is None, None if m is None else (m.metric_type(), m.num_instances()))
            if m is not None:
                try: print("   value()", m.value())
                except Exception as e: print("   value() exc", repr(e))

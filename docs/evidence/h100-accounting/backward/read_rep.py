import sys
sys.path.insert(0, "/opt/nvidia/nsight-compute/2025.3.1/extras/python")
import ncu_report
for f in sys.argv[1:]:
    ctx = ncu_report.load_report(f)
    print("==", f)
    for r in range(ctx.num_ranges()):
        rg = ctx.range_by_idx(r)
        for i in range(rg.num_actions()):
            a = rg.action_by_idx(i)
            st = a.nvtx_state()
            pp, se = [], []
            for d in st.domains():
                dom = st.domain_by_id(d)
                pp += list(dom.push_pop_ranges()); se += list(dom.start_end_ranges())
            print(a.name()[:60], "| push/pop", pp, "| start/end", se)

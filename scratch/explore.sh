set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
ls /opt/nvidia/nsight-compute/2025.3.1/ /opt/nvidia/nsight-compute/2025.3.1/extras/python
$NCU --version
( time $NCU --query-metrics --csv > $OUT/qm_default.csv ) 2>&1 | tail -3; head -5 $OUT/qm_default.csv; wc -l $OUT/qm_default.csv
( time $NCU --query-metrics --chip gh100 --csv > $OUT/qm_gh100.csv ) 2>&1 | tail -3; wc -l $OUT/qm_gh100.csv
$NCU --list-chips | head -5
grep -E "^\"?(dram__throughput|gpu__dram_throughput|sm__pipe_tensor_cycles_active|lts__t_sector_hit_rate|l1tex__t_bytes_pipe_lsu_mem_local_op_ld|sm__warps_active|dram__bytes)" $OUT/qm_gh100.csv | head
python3 scratch/drive.py vector_add v1 n=16777216 dtype=float32  # warm triton cache
python3 scratch/drive.py matmul v1 M=4096 N=4096 K=4096 dtype=bfloat16
M="gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,sm__maximum_warps_per_active_cycle_pct,lts__t_sector_hit_rate.pct,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum,launch__waves_per_multiprocessor,launch__registers_per_thread,launch__shared_mem_per_block,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size,sm__cycles_elapsed.avg.per_second,dram__cycles_elapsed.avg.per_second"
( time $NCU --nvtx --nvtx-include "kprof_matmul/" --nvtx-include "kprof_other/" --metrics $M -o $OUT/mm_metrics python3 scratch/drive.py matmul v1 M=4096 N=4096 K=4096 dtype=bfloat16 ) 2>&1 | tail -20
( time $NCU --nvtx --nvtx-include "kprof_matmul/" --section SpeedOfLight --section LaunchStats --section Occupancy --metrics $M -o $OUT/mm_sect python3 scratch/drive.py matmul v1 M=4096 N=4096 K=4096 dtype=bfloat16 ) 2>&1 | tail -8
( time $NCU --nvtx --nvtx-include "kprof_add/" --metrics $M -o $OUT/add_metrics python3 scratch/drive.py vector_add v1 n=16777216 dtype=float32 ) 2>&1 | tail -8
( time $NCU --nvtx --nvtx-include "kprof_matmul/" --set full --import-source yes -o $OUT/mm_full python3 scratch/drive.py matmul v1 M=4096 N=4096 K=4096 dtype=bfloat16 ) 2>&1 | tail -8
( time $NCU --metrics $M -k regex:matmul -c 1 python3 scratch/drive.py matmul v0 M=4096 N=4096 K=4096 dtype=bfloat16 ) 2>&1 | tail -30
$NCU --metrics dram__throughput.avg.pct_of_peak_sustained_elapsed,bogus__metric.sum -k regex:add -c 1 python3 scratch/drive.py vector_add v0 n=1048576 dtype=float32 2>&1 | tail -8
PYTHONPATH=/opt/nvidia/nsight-compute/2025.3.1/extras/python python3 - <<'PY'
import ncu_report, os, json
print(ncu_report.__file__)
ctx = ncu_report.load_report(os.environ["OUT"] + "/mm_full.ncu-rep")
print(ctx.num_ranges())
a = ctx.range_by_idx(0).action_by_idx(0)
print(a.name(), [m for m in dir(a) if not m.startswith('_')])
print(len(a.rule_results_as_dicts()) if hasattr(a, 'rule_results_as_dicts') else 'no rr dicts')
print(a.source_files().keys() if hasattr(a.source_files(), 'keys') else list(a.source_files()))
m = a.metric_by_name('smsp__pcsamp_sample_count')
c = m.correlation_ids()
for i in range(min(5, m.num_instances())):
    pc = c.value(i); si = a.source_info(pc)
    print(pc, m.value(i), a.sass_by_pc(pc), si.file_name() if si else None, si.line() if si else None)
PY
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,mig.mode.current --format=csv

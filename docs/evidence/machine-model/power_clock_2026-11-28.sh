# Issue 36: what tuned tensor-core kernels reach when the clock was not measured (a command's timeline). The
# attainable time of tensor work at an unmeasured clock uses the device's power-limited clock (devices.json
# sustained_sm_mhz, 1305 MHz on an H100 SXM; peaks.attainable_clock_ratio), not the 1830 MHz the 16-bit tensor
# peak is quoted at. This checks it: the SM clock and power nvidia-smi samples every 50 ms while three
# GEMM-heavy command pairs of the held-back sets run unprofiled (their own --time), and each variant's profile
# through `kprof run --mode nsys` with the model its pair records (the library-GEMM what-if's estimate beside
# the measured gain). From the repository root on the GPU machine, out/rec14carry carried:
#   bash docs/evidence/machine-model/power_clock_2026-11-28.sh
set -x
tar xJf out/rec14carry/nsyslibs.tar.xz
mkdir -p /tmp/site && tar xJf out/rec14carry/site.tar.xz -C /tmp/site
export LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH PYTHONPATH=/tmp/site:$PWD
mkdir -p $OUT/pc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee $OUT/pc/device.txt
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)" | tee -a $OUT/pc/device.txt
cd tests/calibration/commands
for spec in "quad_form_diag.py 6.9e10 5.0e7" "multi_loss_backward.py 8.25e11 1.0e9" "pad_to_max_length.py 2.5e12 3.0e9"; do
  set -- $spec
  for v in bad good; do
    nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,utilization.gpu --format=csv,noheader -lms 50 > $OUT/pc/${1%.py}_${v}_smi.csv &
    SMI=$!
    timeout 120 python3 $1 --variant $v --time --steps 20 --rounds 5 > $OUT/pc/${1%.py}_${v}_time.json 2>&1
    kill $SMI; wait $SMI 2>/dev/null
    timeout 150 python3 -c "import sys; from kprof_mcp.cli import main; sys.exit(main())" --workspace $PWD/.. \
      run --mode nsys --cwd commands --model step:flops=$2,bytes=$3,dtype=bfloat16,tensor_cores=1 --json \
      -- python $1 --variant $v --steps 20 > $OUT/pc/${1%.py}_${v}.json 2> $OUT/pc/${1%.py}_${v}.err
  done
done
cd - >/dev/null
python3 - $OUT/pc <<'PY' 2>&1 | tee $OUT/pc/summary.txt
import csv, json, statistics, sys
from pathlib import Path
d = Path(sys.argv[1])
for name in ("quad_form_diag", "multi_loss_backward", "pad_to_max_length"):
    t = {}
    for v in ("bad", "good"):
        rows = [r for r in csv.reader(open(d / f"{name}_{v}_smi.csv")) if len(r) >= 4]
        busy = [r for r in rows if r[3].strip().rstrip(" %").isdigit() and int(r[3].strip().rstrip(" %")) >= 90]
        mhz = [float(r[1].split()[0]) for r in busy]
        w = [float(r[2].split()[0]) for r in busy if r[2].split()[0].replace(".", "").isdigit()]
        try:
            t[v] = json.loads(open(d / f"{name}_{v}_time.json").read().strip().splitlines()[-1])["step_ns_median"]
        except Exception as e:
            t[v] = None
        print(f"{name} {v}: step {t[v]} ns; SM clock while the GPU was >=90 % busy: median "
              f"{statistics.median(mhz) if mhz else None} MHz (min {min(mhz, default=None)}, max {max(mhz, default=None)}, "
              f"{len(mhz)} samples), power median {statistics.median(w) if w else None} W")
        try:
            s = json.load(open(d / f"{name}_{v}.json"))["summary"]
            for o in s.get("opportunities", [])[:2]:
                print(f"    {o['est_gain_pct']:8.1f}%  {o.get('cause', '')}  {o['name'][:100]}")
        except Exception as e:
            print("    no profile:", e)
    if t.get("bad") and t.get("good"):
        print(f"  measured gain (unprofiled steps): {100 * (t['bad'] / t['good'] - 1):.1f} %")
PY
cd $OUT && tar czf pc.tgz pc && rm -rf pc

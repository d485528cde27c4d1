# The third multi-rank set's device call (run from the repository root on a 2-GPU machine, out/rec12carry
# carried: the recording's four wheels and .nsyslibs as an xz tarball, as the twelfth set's calls did):
#   bash tests/calibration/recorded-heldout-ranks3/gpu_call.sh END_S [SCRIPT ...]
# The quick check (quick_check.py: the scripts named, else the first call's three; 10 steps x 2 rounds a
# variant, outputs compared), then the
# pairs whose quick-check ratio is > 1.3 recorded with scripts/record_calibration_gpu.sh --rounds 2, its
# timeout what is left of END_S seconds from this script's start.
set -o pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
rm -rf .whl .nsyslibs && mkdir .whl && cp out/rec12carry/*.whl .whl/ && tar xJf out/rec12carry/nsyslibs.tar.xz
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD
end=$1
shift
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.current.sm,clocks.max.sm --format=csv; nvidia-smi topo -m; nproc; } > $OUT/env_quick_check.txt 2>&1
timeout 200 python3 tests/calibration/recorded-heldout-ranks3/quick_check.py /tmp/qc "$@" 2>&1 | tee $OUT/quick_check.log
ratios=$(grep '^RATIOS ' $OUT/quick_check.log | tail -1 | cut -c8-)
declare -A NAME=(
    [ranks3_gloo_grad_reduce]="gradients all-reduced through a gloo (CPU) process group"
    [ranks3_barrier_every_step]="a torch.distributed.barrier() at the end of every step"
    [ranks3_param_broadcast]="every parameter broadcast from rank 0 after every step"
    [ranks3_host_snapshot]="the weights copied to a host snapshot after every step"
)
pairs=()
keys=("$@")
[ ${#keys[@]} -eq 0 ] && keys=(ranks3_gloo_grad_reduce ranks3_barrier_every_step ranks3_param_broadcast)
for key in "${keys[@]}"; do
    ok=$(python3 -c "import json,sys; r=json.loads(sys.argv[1] or '{}'); print(int((r.get(sys.argv[2]) or 0) > 1.3))" "$ratios" "$key")
    [ "$ok" = 1 ] && pairs+=("${NAME[$key]}") || echo "NOT RECORDED (ratio <= 1.3, outputs differ or failed): $key"
done
[ ${#pairs[@]} -eq 0 ] && exit 0
tmo=$((end - SECONDS))
sed -e "s#timeout 560#timeout $tmo#" scripts/record_calibration_gpu.sh > /tmp/rec.sh
echo "recording (timeout $tmo s): ${pairs[*]}"
bash /tmp/rec.sh "${pairs[@]}" --rounds 2

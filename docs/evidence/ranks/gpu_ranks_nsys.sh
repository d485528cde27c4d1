python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH NCCL_NVLS_ENABLE=0
WS=/tmp/ws39 && rm -rf $WS && mkdir -p $WS && cp tests/fixtures/gpu_ranks_nccl/ddp_job.py $WS/
(cd $WS && timeout 280 python3 -m kprof_mcp.cli run --mode nsys --json -- python ddp_job.py > $WS/run_nsys.json 2> $WS/run_nsys.err; echo "rc=$?")
R=$(ls -d $WS/out/profiles/nsys/command/ddp_job/*/*-run); ls -laR $R | head -40
cd $R && tar czf $OUT/nsys_run.tgz --exclude='*.nsys-rep' . && ls -la $OUT

#!/usr/bin/env bash
# Issue 15 on the GPU machine: profile_command on a training step and on a pytest test, by NVTX
# range, in annotation, nsys and event modes, and the same Triton kernel profiled as a package.
# Run through the device tool with carry [".whl", ".nsyslibs"]; everything lands in $OUT.
set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/env.txt; date -u >> $OUT/env.txt
python3 -c "import torch,triton;print('torch',torch.__version__,'triton',triton.__version__)" >> $OUT/env.txt
W=/tmp/kprof-cmd; rm -rf $W; mkdir -p $W; cp -r examples $W/
K="python3 -m kprof_mcp.cli --workspace $W"
T="python examples/train_step/train.py --steps 3"
P="python -m pytest -q examples/train_step/test_train_step.py"
mkdir -p $OUT/r
run() { name=$1; shift; ( time "$@" ) > $OUT/r/$name.md 2> $OUT/r/$name.err; echo "$name rc=$?" >> $OUT/r/rc.txt; }
M="--model softmax:flops=671088640,bytes=536870912,dtype=bfloat16 --model linear:flops=274877906944,bytes=343932928,dtype=bfloat16,tc=1"
case ${1:-all} in
all)
run train_annotation $K run --mode annotation -- $T
run train_nsys       $K run --mode nsys -- python examples/train_step/train.py --steps 5
run train_event      $K run --mode event -- python examples/train_step/train.py --steps 5
run train_ncu_softmax $K run --mode ncu --include softmax -- $T
run pytest_annotation $K run --mode annotation -- $P
run pytest_nsys      $K run --mode nsys -- $P
run pkg_softmax_v2_annotation $K profile softmax --version v2 --mode annotation
run pkg_softmax_v2_nsys $K profile softmax --version v2 --mode nsys
run pkg_softmax_v2_event $K profile softmax --version v2 --mode event ;;
models)
run train_annotation_models $K run --mode annotation $M -- $T
run train_nsys_models $K run --mode nsys $M -- python examples/train_step/train.py --steps 5
run train_annotation $K run --mode annotation -- $T
run pytest_annotation $K run --mode annotation -- $P
run pytest_nsys      $K run --mode nsys -- $P
run pkg_softmax_v2_annotation $K profile softmax --version v2 --mode annotation
run pkg_softmax_v2_nsys $K profile softmax --version v2 --mode nsys ;;
nsys)
run train_nsys_models $K run --mode nsys $M -- python examples/train_step/train.py --steps 5
run train_event_models $K run --mode event $M -- python examples/train_step/train.py --steps 5
run pytest_nsys      $K run --mode nsys -- $P ;;
esac
cat $OUT/r/rc.txt
for f in $OUT/r/*.md; do echo "=== $f"; sed -n 8,24p $f; done
grep real $OUT/r/*.err
cd $W/out/profiles && find . -name "*.partial" -prune -o \( -name "*.md" -o -name "result.json" -o -name "params.json" -o -name "*.csv" -o -name "timeline.png" \) -print | tar czf $OUT/profiles.tgz -T -
cd $OUT && tar czf r.tgz r && rm -rf r

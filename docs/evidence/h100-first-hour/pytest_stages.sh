# Issue 29 on the lent H100: a pytest command profiled as tests (one stage per test) in event,
# nsys (Nsight Systems) and annotation modes through the CLI with --json, and a failing command's
# evidence. Run from the repository root with .whl/ and .nsyslibs/ carried.
set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH
L=/tmp/plogs; rm -rf $L; mkdir -p $L
for m in event nsys annotation; do
  timeout 240 python3 -m kprof_mcp.cli run --mode $m --json -- python -m pytest -q examples/pytest_suite/test_ops.py > $L/pytest_$m.json 2> $L/pytest_$m.err; echo "$m rc=$?"
  python3 -c "import json,sys; d=json.load(open('$L/pytest_$m.json')); s=d.get('summary') or {}; print('$m', [(x['name'], round(x['duration_us'],1)) for x in s.get('stages', [])], d.get('result',{}).get('command',{}).get('stages_are_tests'))" 2>&1 | tee -a $L/summary.txt
done
printf 'def test_bad():\n    assert 1 == 2\n' > /tmp/test_bad.py; cp /tmp/test_bad.py examples/pytest_suite/test_bad_tmp.py
timeout 120 python3 -m kprof_mcp.cli run --mode event -- python -m pytest -q examples/pytest_suite/test_bad_tmp.py > $L/failing.txt 2>&1; echo "failing rc=$?"; rm -f examples/pytest_suite/test_bad_tmp.py
tail -30 $L/failing.txt
tar czf $OUT/plogs.tgz -C /tmp plogs

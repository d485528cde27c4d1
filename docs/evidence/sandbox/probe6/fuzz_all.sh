#!/bin/sh
# The load and fuzz figures of the sixth probe, one after another (repository root).
here=docs/evidence/sandbox/probe6
for t in tests/e2e/test_fuzz.py tests/e2e/test_fuzz_http.py; do
  echo "### $(date -u +%H:%M:%S) $t" >> $here/logs/fuzz-tests.log
  timeout 500 .venv/bin/python -m pytest -q -p no:cacheprovider $t 2>&1 | tail -5 >> $here/logs/fuzz-tests.log
done
echo "### $(date -u +%H:%M:%S) fuzz5 stdio 2200" >> $here/logs/fuzz-tests.log
sh $here/fuzz_in_cgroup.sh stdio 2200
echo "### $(date -u +%H:%M:%S) fuzz5 http 2150" >> $here/logs/fuzz-tests.log
sh $here/fuzz_in_cgroup.sh http 2150
echo "### $(date -u +%H:%M:%S) done" >> $here/logs/fuzz-tests.log

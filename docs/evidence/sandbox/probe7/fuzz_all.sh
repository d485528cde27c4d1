#!/bin/sh
# The load and fuzz figures of the seventh probe, one after another (repository root).
here=docs/evidence/sandbox/probe7
for t in tests/e2e/test_fuzz.py tests/e2e/test_fuzz_http.py; do
  echo "### $(date -u +%H:%M:%S) $t" >> $here/logs/fuzz-tests.log
  timeout 500 .venv/bin/python -m pytest -q -p no:cacheprovider $t 2>&1 | tail -5 >> $here/logs/fuzz-tests.log
done
echo "### $(date -u +%H:%M:%S) fuzz5 stdio 2300" >> $here/logs/fuzz-tests.log
sh $here/fuzz_in_cgroup.sh stdio 2300
echo "### $(date -u +%H:%M:%S) fuzz5 http 2300" >> $here/logs/fuzz-tests.log
sh $here/fuzz_in_cgroup.sh http 2300
echo "### $(date -u +%H:%M:%S) done" >> $here/logs/fuzz-tests.log

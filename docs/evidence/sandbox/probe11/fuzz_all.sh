#!/bin/sh
# The load and fuzz figures of the eleventh probe, one after another (repository root, as root).
here=docs/evidence/sandbox/probe11
echo "### $(date -u +%H:%M:%S) pytest -n0 tests/e2e -k fuzz (load $(cut -d' ' -f1 /proc/loadavg))" >> $here/logs/fuzz-tests.log
timeout 560 .venv/bin/python -m pytest -n0 -q -p no:cacheprovider tests/e2e -k fuzz 2>&1 | tail -4 >> $here/logs/fuzz-tests.log
echo "### $(date -u +%H:%M:%S) fuzz5 stdio 2300" >> $here/logs/fuzz-tests.log
sh $here/fuzz_in_cgroup.sh stdio 2300
echo "### $(date -u +%H:%M:%S) fuzz5 http 2300 (load $(cut -d' ' -f1 /proc/loadavg))" >> $here/logs/fuzz-tests.log
sh $here/fuzz_in_cgroup.sh http 2300
echo "### $(date -u +%H:%M:%S) done" >> $here/logs/fuzz-tests.log

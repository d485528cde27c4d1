#!/bin/sh
# The HTTP figures again on a quiet machine (the first run, logs/fuzz-http-under-load.txt, ran beside this
# probe's variants on 2 shared CPUs and two of its 30 clients got httpx ReadError): the e2e HTTP fuzz test, then fuzz5 http 2300.
here=docs/evidence/sandbox/probe9
echo "### $(date -u +%H:%M:%S) tests/e2e/test_fuzz_http.py (quiet machine)" >> $here/logs/fuzz-tests.log
timeout 500 .venv/bin/python -m pytest -n0 -q -p no:cacheprovider tests/e2e/test_fuzz_http.py 2>&1 | tail -3 >> $here/logs/fuzz-tests.log
echo "### $(date -u +%H:%M:%S) fuzz5 http 2300 (quiet machine)" >> $here/logs/fuzz-tests.log
sh $here/fuzz_in_cgroup.sh http 2300
echo "### $(date -u +%H:%M:%S) done" >> $here/logs/fuzz-tests.log

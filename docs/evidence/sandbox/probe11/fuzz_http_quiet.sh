#!/bin/sh
# The HTTP figures again with nothing else of this probe running (the first, logs/fuzz-http.txt, started at load 3.33 beside the variants).
here=docs/evidence/sandbox/probe11
echo "### $(date -u +%H:%M:%S) fuzz5 http 2300 (quiet: load $(cut -d' ' -f1 /proc/loadavg)), HEAD $(git rev-parse --short HEAD)" >> $here/logs/fuzz-tests.log
cp $here/logs/fuzz-http.txt $here/logs/fuzz-http-under-load.txt
sh $here/fuzz_in_cgroup.sh http 2300
echo "### $(date -u +%H:%M:%S) done" >> $here/logs/fuzz-tests.log

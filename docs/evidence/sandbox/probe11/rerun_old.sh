#!/bin/sh
# The tenth probe's repros (all modes of repro_selfws, repro_shmleak root and 65534, repro_runs_link root
# and 65534) and the ninth's (probe9/repro_*.sh, root and --user nobody), on HEAD (repository root, as root).
here=docs/evidence/sandbox/probe11
log=$here/logs/rerun-old.log
{
echo "### $(date -u +%H:%M:%S) HEAD $(git rev-parse --short HEAD); modified kprof_mcp: $(git status --short kprof_mcp | tr '\n' ' ')"
for m in pth source pythonpath path nsysenv cachehome; do echo "### probe10/repro_selfws.py $m (root)"; timeout 300 .venv/bin/python docs/evidence/sandbox/probe10/repro_selfws.py $m 2>&1 | grep -E "RESULT|SUCCEEDED|BLOCKED" | tail -3; done
echo "### probe10/repro_shmleak.sh (65534)"; timeout 400 sh docs/evidence/sandbox/probe10/repro_shmleak.sh 2>&1 | tail -4
echo "### probe10/repro_shmleak.sh root"; timeout 400 sh docs/evidence/sandbox/probe10/repro_shmleak.sh root 2>&1 | tail -4
echo "### probe10/repro_runs_link.py (root)"; timeout 200 .venv/bin/python docs/evidence/sandbox/probe10/repro_runs_link.py 2>&1 | grep -E "RESULT|SUCCEEDED|BLOCKED" | tail -4
echo "### probe10/repro_runs_link.py (65534)"; timeout 200 setpriv --reuid=65534 --regid=65534 --clear-groups .venv/bin/python docs/evidence/sandbox/probe10/repro_runs_link.py 2>&1 | grep -E "RESULT|SUCCEEDED|BLOCKED|rror" | tail -4
echo "### probe9/repro_proc_write.sh (65534 inside)"; timeout 300 sh docs/evidence/sandbox/probe9/repro_proc_write.sh 2>&1 | grep RESULT
echo "### probe9/repro_oomspread.sh (root)"; timeout 300 sh docs/evidence/sandbox/probe9/repro_oomspread.sh 2>&1 | grep RESULT
echo "### probe9/repro_oomspread.sh --user nobody"; timeout 300 sh docs/evidence/sandbox/probe9/repro_oomspread.sh --user nobody 2>&1 | grep RESULT
echo "### $(date -u +%H:%M:%S) done; left: $(ps -eo pid,args | grep -E 'kprobe(9|10)|kprof-mcp --workspace /tmp/kprobe' | grep -v grep | wc -l) processes"
} >> $log 2>&1

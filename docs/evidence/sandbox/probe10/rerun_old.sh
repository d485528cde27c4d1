#!/bin/sh
# The ninth probe's repros and the eighth's lifeline hold, again (repository root, as root), against the
# checkout as it stands (the lead's uncommitted memory-limit work included: git status in the log).
here=docs/evidence/sandbox/probe10
log=$here/logs/rerun-old.log
{
echo "### $(date -u +%H:%M:%S) HEAD $(git rev-parse --short HEAD); modified: $(git status --short kprof_mcp | tr '\n' ' ')"
echo "### probe9/repro_proc_write.sh (65534 inside)"; sh docs/evidence/sandbox/probe9/repro_proc_write.sh 2>&1 | grep RESULT
echo "### probe9/repro_oomspread.sh (root)"; sh docs/evidence/sandbox/probe9/repro_oomspread.sh 2>&1 | grep RESULT
echo "### probe9/repro_oomspread.sh --user nobody"; sh docs/evidence/sandbox/probe9/repro_oomspread.sh --user nobody 2>&1 | grep RESULT
echo "### probe8/repro_lifeline_hold.sh (root)"; sh docs/evidence/sandbox/probe8/repro_lifeline_hold.sh 2>&1
echo "### probe8/repro_lifeline_hold.sh --user nobody"; sh docs/evidence/sandbox/probe8/repro_lifeline_hold.sh --user nobody 2>&1
echo "### $(date -u +%H:%M:%S) done; left: $(ps -eo pid,args | grep -E 'kprobe[89]|kprof-mcp|kprof_mcp' | grep -v grep | wc -l) processes"
} >> $log 2>&1

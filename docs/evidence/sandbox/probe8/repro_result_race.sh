#!/bin/sh
# The eighth probe's k_rrace (repository root, as root): the confined describe worker plants result.json
# links to the home's secret, FIFOs, directories, and rewrites request.json, in the server's kernel jobs
# directory while 16 queued jobs run. Prints RESULT ... SUCCEEDED or BLOCKED.
# Usage: sh docs/evidence/sandbox/probe8/repro_result_race.sh [--user nobody]
.venv/bin/python docs/evidence/sandbox/probe8/run.py "$@" k_rrace 2>&1 | grep -E "^RESULT|answers with|job states|outside before"

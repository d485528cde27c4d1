#!/bin/sh
# P7-1 reproduction (repository root, as root): one client queues 16 jobs of a built-in kernel, then profiles a planted package; its package's import-time code (the describe worker,
# confined) plants request.json -> outside/victim.txt in each new job directory of the server's kernel jobs
# directory; the server's Path.write_text of the request follows it. Prints SUCCEEDED or BLOCKED.
# Usage: sh docs/evidence/sandbox/probe7/repro_jobs_race.sh [--user nobody]
.venv/bin/python docs/evidence/sandbox/probe7/run.py "$@" k_race_jobs_queued 2>&1 | grep -E "^RESULT|racer:|victim.txt:"

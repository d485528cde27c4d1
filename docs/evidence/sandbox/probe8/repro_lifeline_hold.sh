#!/bin/sh
# P8-1 reproduction (repository root, as root): a kernel job reopens its read pipes (the server's one
# lifeline pipe among them) for writing through /proc/self/fd and keeps them in a detached sleeper; the
# server is killed -9 mid-job. SUCCEEDED: the sleeper, the warm worker and its supervisor outlive the
# server (no child reads EOF). The control (a job that only sleeps) prints BLOCKED.
.venv/bin/python docs/evidence/sandbox/probe8/run.py "$@" k_holdlife 2>&1 | grep -E "^RESULT|holders"
.venv/bin/python docs/evidence/sandbox/probe8/run.py "$@" k_holdlife_control 2>&1 | grep -E "^RESULT|holders"
